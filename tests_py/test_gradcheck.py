"""``autograd.gradcheck`` / ``gradgradcheck``: the function-and-module layout, torch's
signatures, passing checks on built-in ops and custom Functions (slow and fast mode),
the exact report of a wrong backward, every other check torch runs (reentrancy, zero
grad_output, undefined output grads, no differentiable outputs, input validation),
and second derivatives.

Every test runs on the library under test (``ng``): npgrad, or torch itself with
``NPGRAD_TESTS_AGAINST_TORCH=1``, which is how the expected reports were checked."""

from __future__ import annotations

import functools
import importlib
import inspect
import types
import warnings
from typing import Any

import numpy as np
import pytest

from oracle import AGAINST_TORCH

X = [0.5, -1.0, 2.0]

# torch's report for SquareWrongBackward at X, word for word (both libraries print it).
WRONG_SQUARE_REPORT = (
    "Jacobian mismatch for output 0 with respect to input 0,\n"
    "numerical:tensor([[ 1.0000,  0.0000,  0.0000],\n"
    "        [ 0.0000, -2.0000,  0.0000],\n"
    "        [ 0.0000,  0.0000,  4.0000]], dtype=torch.float64)\n"
    "analytical:tensor([[ 1.5000,  0.0000,  0.0000],\n"
    "        [-0.0000, -3.0000, -0.0000],\n"
    "        [ 0.0000,  0.0000,  6.0000]], dtype=torch.float64)\n"
)


def gradcheck_module(lib: Any) -> types.ModuleType:
    """``<lib>.autograd.gradcheck`` the module (the attribute is the function)."""
    return importlib.import_module(lib.__name__ + ".autograd.gradcheck")


def f64(lib: Any, values: Any, requires_grad: bool = True) -> Any:
    return lib.tensor(values, dtype=lib.float64, requires_grad=requires_grad)


@functools.cache
def fns(lib: Any) -> types.SimpleNamespace:
    """Custom Functions with correct and deliberately wrong backwards, per library."""
    Function = lib.autograd.Function
    once_differentiable = lib.autograd.function.once_differentiable

    class Cube(Function):
        """x ** 3 with a backward made of library ops (so twice differentiable)."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    class SquareWrongBackward(Function):
        """x ** 2 whose backward says 3x instead of 2x."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * g

    class MulWrongSecondInput(Function):
        """a * b whose gradient for b is off by a factor of 2."""

        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, 2 * g * a

    class TwiceDerivative(Function):
        """g * 2x, itself differentiated wrongly: d/dx says 4g instead of 2g."""

        @staticmethod
        def forward(ctx, x, g):
            ctx.save_for_backward(x, g)
            return 2 * x * g

        @staticmethod
        def backward(ctx, gg):
            x, g = ctx.saved_tensors
            return 4 * g * gg, 2 * x * gg

    class SquareWrongDoubleBackward(Function):
        """x ** 2 with a correct first derivative and a wrong second one."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return TwiceDerivative.apply(x, g)

    class SquareOnce(Function):
        """x ** 2 with a backward that cannot be differentiated again."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    class Flaky(Function):
        """2x whose backward drifts by a relative 1e-9 per call: not deterministic."""

        calls = 0

        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            Flaky.calls += 1
            return g * (2 + Flaky.calls * 1e-9)

    class IgnoresZeroGrad(Function):
        """2x whose backward adds 1e-12: right Jacobian, but a zero grad_output does
        not give a zero gradient."""

        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2 + 1e-12

    class RejectsUndefined(Function):
        """2x that refuses an undefined (None) output gradient."""

        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            if g is None:
                raise RuntimeError("no gradient")
            return g * 2

    class InventsGradient(Function):
        """2x that answers an undefined output gradient with ones."""

        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.set_materialize_grads(False)
            ctx.like = inputs[0].detach()

        @staticmethod
        def backward(ctx, g):
            return lib.ones_like(ctx.like) if g is None else g * 2

    return types.SimpleNamespace(**{k: v for k, v in locals().items() if isinstance(v, type)})


# ---------------------------------------------------------------- layout and signature


def test_gradcheck_is_a_function_on_the_package_and_a_module(ng):
    module = gradcheck_module(ng)
    assert callable(ng.autograd.gradcheck) and callable(ng.autograd.gradgradcheck)
    assert module.gradcheck is ng.autograd.gradcheck
    assert module.gradgradcheck is ng.autograd.gradgradcheck
    assert issubclass(module.GradcheckError, RuntimeError)
    assert {"gradcheck", "gradgradcheck"} <= set(ng.autograd.__all__)
    assert {"gradcheck", "gradgradcheck", "GradcheckError"} <= set(module.__all__)


@pytest.mark.parametrize("name", ["gradcheck", "gradgradcheck"])
def test_signature_is_torchs(ng, torch_ref, name):
    ours = inspect.signature(getattr(ng.autograd, name))
    theirs = inspect.signature(getattr(torch_ref.autograd, name))
    assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == [
        (p.name, p.kind, p.default) for p in theirs.parameters.values()
    ]


# ---------------------------------------------------------------- passing checks


CORRECT = {
    "sin": (lambda lib, a: a.sin(), [[0.3, -1.2, 2.0]]),
    "mul-broadcast": (
        lambda lib, a, b: a * b,
        [[[1.0, 2.0], [3.0, -4.0]], [0.5, -1.5]],
    ),
    "matmul": (lambda lib, a, b: a @ b, [[[1.0, 2.0], [3.0, -4.0]], [[0.5], [-1.5]]]),
    "softmax": (lambda lib, a: a.softmax(-1), [[[0.1, 0.2, 0.7], [1.0, -1.0, 0.0]]]),
    "tanh-sum-dim": (lambda lib, a: a.tanh().sum(0), [[[0.1, 0.2], [1.0, -1.0]]]),
    "two-outputs": (lambda lib, a: (a.exp(), (a * a).sum()), [[0.5, -0.5]]),
    "view-of-input": (lambda lib, a: a.t(), [[[1.0, 2.0], [3.0, 4.0]]]),
}


@pytest.mark.parametrize("fast_mode", [False, True], ids=["slow", "fast"])
@pytest.mark.parametrize("case", CORRECT, ids=list(CORRECT))
def test_correct_gradients_pass(ng, case, fast_mode):
    fn, values = CORRECT[case]
    inputs = tuple(f64(ng, v) for v in values)
    assert ng.autograd.gradcheck(functools.partial(fn, ng), inputs, fast_mode=fast_mode) is True


def test_inputs_are_restored_after_perturbation(ng):
    x = f64(ng, X)
    version = x._version
    assert ng.autograd.gradcheck(lambda t: t.exp(), (x,))
    assert x.tolist() == X and x._version == version


def test_non_tensor_and_non_differentiable_inputs_are_passed_through(ng):
    x = f64(ng, X)
    const = f64(ng, [1.0, 2.0, 3.0], requires_grad=False)
    assert ng.autograd.gradcheck(lambda a, k, c: (a * c) ** k, (x, 2, const))
    # A single tensor is accepted in place of a tuple.
    assert ng.autograd.gradcheck(lambda a: a.cos(), x)


@pytest.mark.parametrize("fast_mode", [False, True], ids=["slow", "fast"])
def test_custom_function_with_correct_backward_passes(ng, fast_mode):
    x = f64(ng, X)
    assert ng.autograd.gradcheck(fns(ng).Cube.apply, (x,), fast_mode=fast_mode)


# ---------------------------------------------------------------- wrong gradients


def test_wrong_backward_is_reported_with_both_jacobians(ng):
    error = gradcheck_module(ng).GradcheckError
    with pytest.raises(error) as info:
        ng.autograd.gradcheck(fns(ng).SquareWrongBackward.apply, (f64(ng, X),))
    assert str(info.value) == WRONG_SQUARE_REPORT


def test_wrong_backward_returns_false_without_raise_exception(ng):
    check = ng.autograd.gradcheck(fns(ng).SquareWrongBackward.apply, (f64(ng, X),), raise_exception=False)
    assert check is False


def test_report_names_the_input_and_the_output(ng):
    error = gradcheck_module(ng).GradcheckError
    a, b = f64(ng, [1.0, 2.0]), f64(ng, [3.0, -1.0])
    with pytest.raises(error, match=r"^Jacobian mismatch for output 0 with respect to input 1,\n") as info:
        ng.autograd.gradcheck(fns(ng).MulWrongSecondInput.apply, (a, b))
    assert "numerical:tensor([[1.0000, 0.0000],\n        [0.0000, 2.0000]], dtype=torch.float64)" in str(info.value)
    assert "analytical:tensor([[2., 0.],\n        [0., 4.]], dtype=torch.float64)" in str(info.value)
    # The wrong output is the second one; the first is fine.
    with pytest.raises(error, match=r"^Jacobian mismatch for output 1 with respect to input 0,\n"):
        ng.autograd.gradcheck(lambda t: (t.sin(), fns(ng).SquareWrongBackward.apply(t)), (f64(ng, X),))


def test_fast_mode_reports_the_projections_then_the_slow_jacobians(ng):
    error = gradcheck_module(ng).GradcheckError
    with pytest.raises(error) as info:
        ng.autograd.gradcheck(fns(ng).SquareWrongBackward.apply, (f64(ng, X),), fast_mode=True)
    text = str(info.value)
    head, _, tail = text.partition("\n\nThe above quantities")
    lines = head.split("\n")
    assert lines[0] == "Jacobian mismatch for output 0 with respect to input 0,"
    # The projections are scalars printed as Python floats; the random unit vectors
    # differ between libraries, but the ratio analytical/numerical is 3x/2x = 1.5.
    numerical = float(lines[1].removeprefix("numerical:"))
    analytical = float(lines[2].removeprefix("analytical:"))
    assert analytical == pytest.approx(1.5 * numerical, rel=1e-6)
    slow = WRONG_SQUARE_REPORT.split("\n", 1)[1]
    assert tail.startswith(" relating the numerical and analytical jacobians are computed \nin fast mode.")
    assert "Numerical:\n " + slow.split("numerical:")[1].split("\nanalytical:")[0] in tail
    assert "Analytical:\n" + slow.split("analytical:")[1].rstrip("\n") in tail
    assert tail.endswith("The max per-element difference (slow mode) is: 1.9999999998849773.\n")


def test_fast_mode_does_not_touch_the_users_random_state(ng):
    ng.manual_seed(0)
    expected = ng.rand(3).tolist()
    ng.manual_seed(0)
    ng.autograd.gradcheck(lambda t: t.sin(), (f64(ng, X),), fast_mode=True)
    assert ng.rand(3).tolist() == expected


# ---------------------------------------------------------------- the other checks


def test_non_deterministic_backward_is_not_reentrant(ng):
    error = gradcheck_module(ng).GradcheckError
    with pytest.raises(error) as info:
        ng.autograd.gradcheck(fns(ng).Flaky.apply, (f64(ng, X),))
    assert str(info.value).startswith(
        "Backward is not reentrant, i.e., running backward with same input and grad_output "
        "multiple times gives different values, although analytical gradient matches "
        "numerical gradient.The tolerance for nondeterminism was 0.0.\n\nNOTE: If your op "
        "relies on non-deterministic operations"
    )
    assert ng.autograd.gradcheck(fns(ng).Flaky.apply, (f64(ng, X),), nondet_tol=1e-6)


def test_backward_must_scale_with_grad_output(ng):
    error = gradcheck_module(ng).GradcheckError
    with pytest.raises(error, match="^backward not multiplied by grad_output$"):
        ng.autograd.gradcheck(fns(ng).IgnoresZeroGrad.apply, (f64(ng, X),))


def test_undefined_output_gradients_must_be_handled(ng):
    error = gradcheck_module(ng).GradcheckError
    x = f64(ng, X)
    with (
        pytest.warns(
            UserWarning,
            match="^Backwards compatibility: New undefined gradient support",
        ),
        pytest.raises(error, match="^Expected backward function to handle undefined output grads") as info,
    ):
        ng.autograd.gradcheck(fns(ng).RejectsUndefined.apply, (x,))
    assert isinstance(info.value.__cause__, RuntimeError) and str(info.value.__cause__) == "no gradient"
    assert ng.autograd.gradcheck(fns(ng).RejectsUndefined.apply, (x,), check_undefined_grad=False)

    with (
        pytest.warns(UserWarning, match="^Backwards compatibility"),
        pytest.raises(
            error,
            match="^Expected all input grads to be undefined or zero when all output grads",
        ),
    ):
        ng.autograd.gradcheck(fns(ng).InventsGradient.apply, (x,))


def test_undefined_grad_is_checked_one_output_at_a_time(ng):
    seen = []

    class TwoOutputs(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append((g1 is None, g2 is None))
            total = None
            for g, k in ((g1, 2), (g2, 3)):
                if g is not None:
                    total = g * k if total is None else total + g * k
            return total

    assert ng.autograd.gradcheck(TwoOutputs.apply, (f64(ng, [1.0, 2.0]),))
    # The last three backward calls: both undefined, then each one alone.
    assert seen[-3:] == [(True, True), (True, False), (False, True)]


def test_function_without_differentiable_outputs(ng):
    error = gradcheck_module(ng).GradcheckError
    x = f64(ng, X)
    with pytest.raises(error, match="^Numerical gradient for function expected to be zero$"):
        ng.autograd.gradcheck(lambda t: t.detach() * 2, (x,))
    with pytest.raises(error, match="^Numerical gradient for function expected to be zero$"):
        ng.autograd.gradcheck(lambda t: t.detach() * 2, (x,), fast_mode=True)
    # A constant is fine.
    assert ng.autograd.gradcheck(lambda t: (t * 0).detach(), (x,))


def test_single_precision_inputs_warn(ng):
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match=r"^Input #0 requires gradient and is not a double precision"):
        assert ng.autograd.gradcheck(lambda t: t * 2, (x,), eps=1e-3, atol=1e-2, rtol=1e-2)


def test_invalid_inputs_are_rejected(ng):
    with pytest.raises(
        ValueError,
        match="^gradcheck expects at least one input tensor to require gradient",
    ):
        ng.autograd.gradcheck(lambda t: t * 2, (f64(ng, X, requires_grad=False),))
    expanded = f64(ng, [1.0]).expand(3)
    with pytest.raises(RuntimeError, match="^The 0th input has a dimension with stride 0"):
        ng.autograd.gradcheck(lambda t: t * 2, (expanded,))


def test_output_shape_must_not_depend_on_the_perturbation(ng):
    x = f64(ng, [0.5, 1.0])
    with pytest.raises(AssertionError) as info:
        ng.autograd.gradcheck(lambda t: t if t[0].item() > 0.5 else t[1:], (x,))
    assert str(info.value) == (
        "Expected `func` to return outputs with the same shape when inputs are perturbed "
        "on index (0,) by 1e-06, but got: shapes torch.Size([1]) and torch.Size([2])."
    )


def test_inconsistent_flags_are_assertion_errors(ng):
    x = f64(ng, X)
    with pytest.raises(AssertionError, match="at least one of check_forward_ad or check_backward_ad"):
        ng.autograd.gradcheck(lambda t: t, (x,), check_backward_ad=False)
    with pytest.raises(AssertionError, match="check_batched_grad=True requires check_backward_ad"):
        ng.autograd.gradcheck(
            lambda t: t,
            (x,),
            check_batched_grad=True,
            check_backward_ad=False,
            check_forward_ad=True,
        )
    with pytest.raises(AssertionError, match="check_undefined_grad=True requires check_rev_over_rev"):
        ng.autograd.gradgradcheck(lambda t: t, (x,), check_rev_over_rev=False, check_fwd_over_rev=True)


@pytest.mark.skipif(AGAINST_TORCH, reason="torch has forward AD and vmap")
@pytest.mark.parametrize(
    "flags",
    [
        {"check_batched_grad": True},
        {"check_forward_ad": True},
        {"check_forward_ad": True, "check_batched_forward_grad": True},
    ],
    ids=["batched", "forward", "batched-forward"],
)
def test_checks_needing_vmap_or_forward_ad_say_so(ng, flags):
    with pytest.raises(NotImplementedError, match=f"gradcheck\\({next(iter(flags))}=True\\) needs"):
        ng.autograd.gradcheck(lambda t: t.sin(), (f64(ng, X),), **flags)


def test_deprecated_jacobian_helpers(ng):
    module = gradcheck_module(ng)
    x = f64(ng, [1.0, 2.0])
    with pytest.warns(
        FutureWarning,
        match="`get_numerical_jacobian` was part of PyTorch's private API",
    ):
        (jac,) = module.get_numerical_jacobian(lambda inputs: inputs[0] ** 2, (x,), eps=1e-6)
    assert np.allclose(jac.tolist(), [[2.0, 0.0], [0.0, 4.0]])
    with pytest.warns(FutureWarning, match="`get_analytical_jacobian` was part"):
        jacobians, reentrant, sizes_ok, types_ok = module.get_analytical_jacobian((x,), x**2)
    assert jacobians[0].tolist() == [[2.0, 0.0], [0.0, 4.0]]
    assert (reentrant, sizes_ok, types_ok) == (True, True, True)


# ---------------------------------------------------------------- second derivatives


@pytest.mark.parametrize("fast_mode", [False, True], ids=["slow", "fast"])
def test_gradgradcheck_passes_on_correct_second_derivatives(ng, fast_mode):
    ng.manual_seed(0)
    a = f64(ng, [[1.0, 2.0], [3.0, -4.0]])
    b = f64(ng, [0.5, -1.5])
    assert ng.autograd.gradgradcheck(lambda x, y: (x * y).tanh(), (a, b), fast_mode=fast_mode)
    assert ng.autograd.gradgradcheck(fns(ng).Cube.apply, (f64(ng, X),), fast_mode=fast_mode)
    assert ng.autograd.gradgradcheck(lambda x: x.exp().sum(), (f64(ng, X),), gen_non_contig_grad_outputs=True)


def test_gradgradcheck_catches_a_wrong_double_backward(ng):
    error = gradcheck_module(ng).GradcheckError
    x = f64(ng, [1.0, 2.0])
    fn = fns(ng).SquareWrongDoubleBackward.apply
    assert ng.autograd.gradcheck(fn, (x,))  # the first derivative is right
    grad_out = f64(ng, [1.0, -1.0])
    with pytest.raises(error) as info:
        ng.autograd.gradgradcheck(fn, (x,), (grad_out,))
    # Output 0 of the checked function is the gradient 2 x g; input 0 is x.
    assert str(info.value) == (
        "Jacobian mismatch for output 0 with respect to input 0,\n"
        "numerical:tensor([[ 2.0000,  0.0000],\n"
        "        [ 0.0000, -2.0000]], dtype=torch.float64)\n"
        "analytical:tensor([[ 4.,  0.],\n"
        "        [-0., -4.]], dtype=torch.float64)\n"
    )
    assert ng.autograd.gradgradcheck(fn, (x,), (grad_out,), raise_exception=False) is False


def test_gradgradcheck_of_a_once_differentiable_backward(ng):
    # The gradient is computed under no_grad, so it does not depend on x as far as
    # autograd knows: the analytical second derivative is zero. (The error node that
    # once_differentiable attaches has no inputs, so backward never runs it.)
    error = gradcheck_module(ng).GradcheckError
    with pytest.raises(error, match=r"^Jacobian mismatch for output 0 with respect to input 0,\n") as info:
        ng.autograd.gradgradcheck(fns(ng).SquareOnce.apply, (f64(ng, X),))
    assert str(info.value).endswith(
        "analytical:tensor([[0., 0., 0.],\n        [0., 0., 0.],\n        [0., 0., 0.]], dtype=torch.float64)\n"
    )


def test_gradgradcheck_default_grad_outputs_follow_manual_seed(ng):
    error = gradcheck_module(ng).GradcheckError
    fn = fns(ng).SquareWrongDoubleBackward.apply

    def report(seed: int) -> str:
        # The report prints 2g and 4g for the random grad_output g drawn by default.
        ng.manual_seed(seed)
        with pytest.raises(error) as info:
            ng.autograd.gradgradcheck(fn, (f64(ng, [1.0, 2.0]),))
        return str(info.value)

    assert report(7) == report(7)
    assert report(7) != report(8)


# ---------------------------------------------------------------- the README example


def test_readme_example_gradcheck_in_a_pytest_test(ng):
    """What the README shows: a custom Function checked in a pytest test."""
    torch = ng

    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * result

    x = torch.randn(4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(Exp.apply, (x,))
    assert torch.autograd.gradgradcheck(Exp.apply, (x,))


def test_checks_leave_no_warnings_behind(ng):
    # gradcheck itself must be silent on a float64 check (the suite runs with -W error).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ng.autograd.gradcheck(fns(ng).Cube.apply, (f64(ng, X),))
        assert ng.autograd.gradgradcheck(fns(ng).Cube.apply, (f64(ng, X),))
