"""The op tables: every declared op is tested, typed and documented the moment it exists.

``npgrad._C._op_table`` lists each op of the tables (csrc/npgrad/ops/unary_ops.h, ...).
These tests read that list, so a new entry is checked without further test code:

- ``op_specs.py`` has rows for it (values, node name, saved attributes, gradients and
  second order against finite differences come from there: test_ops.py,
  test_gradients.py, test_higher_order.py);
- its in-place form behaves as torch's (values, version, node, gradients, errors);
- its stubs are the ones ``scripts/update_op_stubs.py`` renders;
- it is exported as ``npgrad.<name>`` and documented.
"""

from __future__ import annotations

import importlib.util
import math
import pathlib
from typing import Any

import numpy as np
import pytest

import npgrad
from op_specs import ALL
from oracle import AGAINST_TORCH, assert_close, from_np, to_np

# The ops of the tables that npgrad exposes (tanh_backward and the like are only
# nodes, tested through the saved-state and higher-order tests).
TABLE = tuple(op for op in npgrad._C._op_table if op["public"])
# The in-place forms of the ops of one operand like self (the linalg table's take two
# factors of other shapes: test_linalg_table.py).
INPLACE = [op for op in TABLE if op["inplace"] and op["node"] and op["family"] != "linalg"]
BINARY = [op for op in TABLE if op["family"] == "binary"]
BOOL_VALUED = [op for op in BINARY if not op["node"]]
REDUCTION = [op for op in TABLE if op["family"] == "reduction"]
# The reductions with an extra scalar (var's correction, norm's p).
SCALAR_REDUCTION = [op for op in REDUCTION if op["scalar"]]
# The in-place forms of bool-valued unary ops (logical_not_): no node, self's dtype kept.
# The binary ones (logical_and_, and eq_ whose zero-gradient nodes they lack) are
# tested in test_pointwise_more.py.
BOOL_INPLACE = [op for op in TABLE if op["inplace"] and not op["node"] and op["family"] == "unary"]
REPO = pathlib.Path(__file__).resolve().parent.parent


def _data(seed: int = 0) -> np.ndarray:
    # Inside every table op's domain: log, sqrt and rsqrt need x > 0, asin and acos
    # |x| < 1 (outside it both libraries give NaN, and a comparison proves nothing).
    return np.random.default_rng(seed).uniform(0.1, 0.9, (2, 3))


def _arguments(lib: Any, op: dict[str, Any], requires_grad: bool = False) -> tuple[Any, ...]:
    """The operands after ``input`` of a table op: none, ``other`` (other values), or a
    reduction's required ``dim``."""
    if op["family"] == "unary":
        return ()
    if op["family"] == "reduction":
        return (1,) if op["dim"] == "required" else ()
    if op["family"] == "linalg":  # the factors (their shapes are test_linalg_table.py's)
        return tuple(from_np(lib, _data(1), requires_grad=requires_grad) for _ in op["operands"])
    return (from_np(lib, _data(1), requires_grad=requires_grad),)


def test_every_table_op_has_spec_rows() -> None:
    specified = {spec.node for spec in ALL}
    nodes = [(op["name"], node) for op in TABLE for node in (op["node"], op.get("full_node")) if node]
    missing = sorted(name for name, node in nodes if node not in specified)
    assert not missing, f"op_specs.py has no rows for {missing}"


def test_every_table_op_is_exported_and_documented() -> None:
    for op in TABLE:
        name = op["name"]
        assert name in npgrad.__all__
        assert getattr(npgrad, name) is getattr(npgrad._C, name)
        for obj in (getattr(npgrad, name), getattr(npgrad.Tensor, name)):
            assert op["example_output"] in (obj.__doc__ or ""), name
        if op["inplace"]:
            assert op["summary"] in (getattr(npgrad.Tensor, op["inplace"]).__doc__ or "")


def test_stubs_are_rendered_from_the_tables() -> None:
    script = REPO / "scripts" / "update_op_stubs.py"
    if not script.is_file():
        pytest.skip("no scripts/ next to the tests (running outside the source tree)")
    spec = importlib.util.spec_from_file_location("update_op_stubs", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    stale = [str(path) for path, text in module.rendered().items() if path.read_text() != text]
    assert not stale, f"stale stubs (run python scripts/update_op_stubs.py): {stale}"


@pytest.mark.parametrize("op", INPLACE, ids=[op["inplace"] for op in INPLACE])
def test_inplace_form_matches_torch(ng: Any, torch_ref: Any, op: dict[str, Any]) -> None:
    def run(lib: Any) -> tuple[Any, ...]:
        leaf = from_np(lib, _data(), requires_grad=True)
        args = _arguments(lib, op, requires_grad=True)
        x = leaf.clone()
        returned = getattr(x, op["inplace"])(*args)
        node = type(x.grad_fn).__name__
        saves = (op["saves"],) if isinstance(op["saves"], str) else op["saves"] or ()
        saved = [to_np(getattr(x.grad_fn, f"_saved_{name}")) for name in saves]
        version = x._version
        (x * x).sum().backward()
        grads = [to_np(t.grad) for t in (leaf, *args)]
        return returned is x, to_np(x), node, saved, version, grads

    got, expected = run(ng), run(torch_ref)
    assert got[0] and expected[0]
    assert got[2] == expected[2] == op["node"]
    assert got[4] == expected[4]
    assert_close(got[1], expected[1])
    for g, e in zip([*got[3], *got[5]], [*expected[3], *expected[5]]):
        assert_close(g, e)


@pytest.mark.parametrize("op", INPLACE, ids=[op["inplace"] for op in INPLACE])
def test_inplace_form_double_backward(ng: Any, op: dict[str, Any]) -> None:
    """The node an in-place form records differentiates again (create_graph)."""
    leaf = from_np(ng, _data(), requires_grad=True)
    x = leaf.clone()
    getattr(x, op["inplace"])(*_arguments(ng, op))
    (g,) = ng.autograd.grad(x.sum(), leaf, create_graph=True)
    # A gradient that does not depend on the input (add_, mul_ by a constant) records
    # no graph: its derivative is zero, which the finite differences must confirm.
    gg = ng.autograd.grad(g.sum(), leaf)[0] if g.requires_grad else ng.zeros_like(leaf)
    eps = 1e-6
    base = _data()

    def first(values: np.ndarray) -> np.ndarray:
        t = from_np(ng, values, requires_grad=True)
        y = t.clone()
        getattr(y, op["inplace"])(*_arguments(ng, op))
        return to_np(ng.autograd.grad(y.sum(), t)[0])

    numeric = (first(base + eps) - first(base - eps)) / (2 * eps)
    np.testing.assert_allclose(to_np(gg), numeric, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", BOOL_INPLACE, ids=[op["inplace"] for op in BOOL_INPLACE])
def test_bool_inplace_form_matches_torch(ng: Any, torch_ref: Any, op: dict[str, Any]) -> None:
    """Values in self's dtype, the version bumped, and the history left as it was
    (a leaf that requires grad may be written)."""

    def run(lib: Any) -> list[Any]:
        facts = []
        for x in (lib.tensor([0.0, 1.5, -2.0]), lib.tensor([0, 3]), lib.tensor([True, False])):
            returned = getattr(x, op["inplace"])(*_arguments(lib, op))
            facts.append((returned is x, str(x.dtype), x.tolist(), x._version))
        leaf = from_np(lib, _data(), requires_grad=True)
        y = leaf * 2
        getattr(leaf, op["inplace"])(*_arguments(lib, op))
        getattr(y, op["inplace"])(*_arguments(lib, op))
        facts.append((leaf._version, leaf.grad_fn, type(y.grad_fn).__name__, y.requires_grad))
        return facts

    assert run(ng) == run(torch_ref)


@pytest.mark.parametrize("op", [op for op in INPLACE if op["promotes_to_float"]], ids=lambda op: op["inplace"])
def test_inplace_form_refuses_an_integer_tensor(ng: Any, op: dict[str, Any]) -> None:
    x = ng.tensor([1, 2])
    args = () if op["family"] == "unary" else (ng.tensor([3, 4]),)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        getattr(x, op["inplace"])(*args)
    assert x._version == 0 and x.tolist() == [1, 2]


@pytest.mark.parametrize("op", TABLE, ids=[op["name"] for op in TABLE])
def test_function_and_method_refuse_none(ng: Any, op: dict[str, Any]) -> None:
    if AGAINST_TORCH and op.get("scalar") == "p":
        pytest.skip("torch.norm is a Python function: None fails with an AttributeError")
    if op.get("number_overload"):
        message = rf"{op['name']}\(\) received an invalid combination of arguments - got \(NoneType, Tensor\)"
    elif op.get("scalar") == "correction":  # torch's three overloads from one argument on
        message = rf"{op['name']}\(\) received an invalid combination of arguments - got \(NoneType\)"
    else:
        message = rf"{op['name']}\(\): argument 'input' \(position 1\) must be Tensor, not NoneType"
    with pytest.raises(TypeError, match=message):
        getattr(ng, op["name"])(None, *_arguments(ng, op))


def _mixed_operands(lib: Any) -> list[tuple[Any, Any]]:
    """Operand pairs of several dtypes and shapes, with ties and zeros (for comparisons)."""
    floats = lib.tensor([[0.0, 1.5, -2.0], [3.0, 0.0, 1.5]])
    return [
        (floats, lib.tensor([1.5, 0.0, -2.0])),
        (floats, lib.tensor([[1.0], [0.0]], dtype=lib.float64)),
        (lib.tensor([0, 2, 3]), lib.tensor([2, 2, 0])),
        (lib.tensor([True, False, True]), lib.tensor([1.0, 0.0, 0.0])),
    ]


@pytest.mark.parametrize("op", BOOL_VALUED, ids=[op["name"] for op in BOOL_VALUED])
def test_bool_valued_op_matches_torch(ng: Any, torch_ref: Any, op: dict[str, Any]) -> None:
    """Comparisons and logical ops: torch's values, a bool result, and no graph."""

    def run(lib: Any) -> list[Any]:
        results = []
        for a, b in _mixed_operands(lib):
            results.append(getattr(lib, op["name"])(a, b))
            results.append(getattr(a, op["name"])(b))
        if op["numbers"]:
            results.append(getattr(lib, op["name"])(_mixed_operands(lib)[0][0], 1.5))
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        tracked = getattr(x, op["name"])(lib.tensor([2.0, 2.0]))
        return [(str(r.dtype), r.tolist()) for r in results] + [(tracked.requires_grad, tracked.grad_fn)]

    assert run(ng) == run(torch_ref)


@pytest.mark.parametrize("op", BINARY, ids=[op["name"] for op in BINARY])
def test_binary_op_other_argument_errors(ng: Any, op: dict[str, Any]) -> None:
    """``other`` of the wrong type: torch's argument-parser error, nothing changed."""
    name = op["name"]
    x = ng.tensor([1.0, 2.0])
    if op["number_overload"]:
        # torch declares a Number overload of its own: the parser lists both.
        with pytest.raises(TypeError) as function_error:
            getattr(ng, name)(x, None)
        with pytest.raises(TypeError) as method_error:
            getattr(x, name)("a")
        # torch lists its overloads in order; remainder has a third one, (Number self,
        # Tensor other), which the arguments do not match.
        number_self = (
            " * (Number self, Tensor other)\n"
            "      didn't match because some of the arguments have invalid types: (!Tensor!, !NoneType!)\n"
            if op.get("number_self")
            else ""
        )
        assert str(function_error.value) == (
            f"{name}() received an invalid combination of arguments - got (Tensor, NoneType), but expected one of:\n"
            " * (Tensor input, Tensor other, *, Tensor out = None)\n"
            f"{number_self}"
            " * (Tensor input, Number other, *, Tensor out = None)\n"
        )
        assert str(method_error.value).startswith(
            f"{name}() received an invalid combination of arguments - got (str), but expected one of:\n"
            " * (Tensor other)\n"
        )
        return
    with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'other' \(position 2\) must be Tensor, not NoneType$"):
        getattr(ng, name)(x, None)
    with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'other' \(position 1\) must be Tensor, not str$"):
        getattr(x, name)("a")
    if not op["numbers"]:
        with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'other' \(position 2\) must be Tensor, not int$"):
            getattr(ng, name)(x, 2)
    if op["inplace"]:
        with pytest.raises(TypeError, match=rf"^{op['inplace']}\(\): argument 'other' \(position 1\) must be Tensor"):
            getattr(x, op["inplace"])(None)
    assert x.tolist() == [1.0, 2.0] and x._version == 0


@pytest.mark.parametrize("name", ["hypot", "logaddexp"])
def test_float_only_binary_op_refuses_integers(ng: Any, name: str) -> None:
    a, b = ng.tensor([3, 4]), ng.tensor([4, 3])
    with pytest.raises(NotImplementedError, match=f"^\"{name}_cpu\" not implemented for 'Long'$"):
        getattr(ng, name)(a, b)


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_minimum_split_the_gradient_on_ties(ng: Any, torch_ref: Any, name: str) -> None:
    def run(lib: Any) -> tuple[list[float], list[float]]:
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = lib.tensor([1.0, 5.0, float("nan")], requires_grad=True)
        getattr(lib, name)(a, b).sum().backward()
        return a.grad.tolist(), b.grad.tolist()

    assert run(ng) == run(torch_ref)


@pytest.mark.parametrize("alpha", [1, 2.5, -1])
@pytest.mark.parametrize("name", ["add", "sub"])
def test_alpha_forms_match_torch(ng: Any, torch_ref: Any, name: str, alpha: float) -> None:
    """add/sub with alpha: function, method and in-place; values, saved alpha, gradients."""

    def run(lib: Any) -> list[Any]:
        a = from_np(lib, _data(), requires_grad=True)
        b = from_np(lib, _data(1), requires_grad=True)
        y = getattr(lib, name)(a, b, alpha=alpha)
        z = getattr(a, name)(2, alpha=alpha)
        w = a.clone()
        getattr(w, name + "_")(b, alpha=alpha)
        (y.sum() + z.sum() + (w * w).sum()).backward()
        return [
            to_np(y),
            to_np(z),
            to_np(w),
            y.grad_fn._saved_alpha,
            w.grad_fn._saved_alpha,
            to_np(a.grad),
            to_np(b.grad),
        ]

    got, expected = run(ng), run(torch_ref)
    for g, e in zip(got, expected):
        assert_close(np.asarray(g), np.asarray(e))


@pytest.mark.parametrize("name", ["mul", "div", "atan2", "hypot", "maximum", "logaddexp"])
def test_binary_op_saves_only_what_the_needed_gradients_read(ng: Any, torch_ref: Any, name: str) -> None:
    """With one operand not requiring grad, the node saves what torch saves (None otherwise)."""

    def run(lib: Any) -> list[Any]:
        facts = []
        for flags in ((True, False), (False, True)):
            a = from_np(lib, _data(), requires_grad=flags[0])
            b = from_np(lib, _data(1), requires_grad=flags[1])
            node = getattr(lib, name)(a, b).grad_fn
            facts.append(
                {n: getattr(node, n) is None for n in dir(node) if n.startswith("_saved_") and n != "_saved_alpha"}
            )
        return facts

    assert run(ng) == run(torch_ref)


@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
def test_double_backward_records_torch_backward_nodes(ng: Any, torch_ref: Any, name: str) -> None:
    """Under create_graph, tanh's and sigmoid's formulas are ops of their own
    (TanhBackwardBackward0 ...): the same node, saved values, edges and third-order
    gradients as torch."""

    def run(lib: Any) -> list[Any]:
        x = from_np(lib, np.array([[0.3, -1.2, 2.0], [0.0, 0.7, -0.4]]), requires_grad=True)
        y = getattr(x, name)()
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        node = g.grad_fn  # tanh_backward(2 * y, y) is x's gradient
        facts = [
            node.name(),
            to_np(node._saved_grad_output),
            to_np(node._saved_output),
            [None if fn is None else fn.name() for fn, _ in node.next_functions],
        ]
        (gg,) = lib.autograd.grad(g.sum(), x, create_graph=True)
        (ggg,) = lib.autograd.grad(gg.sum(), x)
        return [*facts, to_np(g), to_np(gg), to_np(ggg)]

    got, expected = run(ng), run(torch_ref)
    assert got[0] == expected[0] == f"{name.capitalize()}BackwardBackward0"
    assert got[3] == expected[3]
    for g, e in zip(got[1:3] + got[4:], expected[1:3] + expected[4:]):
        assert_close(g, e)


def _dim_call(op: dict[str, Any], dim: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``dim`` as the argument after the input, or by keyword where the op's scalar
    comes first (norm's p)."""
    return ((), {"dim": dim}) if op["scalar"] == "p" else ((dim,), {})


def _reduction_calls(op: dict[str, Any]) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """The ways to give a reduction's dims: an int, a negative one, a tuple (not for
    an op whose dim is one int), keepdim, and none (the full reduction) unless the op
    requires them."""
    dims = [(1, {}), (-1, {"keepdim": True})]
    if op["dim"] != "one":
        dims.append(((0, -1), {}))
    calls = [(args, kwargs | extra) for dim, extra in dims for args, kwargs in [_dim_call(op, dim)]]
    calls.append(((), {"dim": 0 if op["dim"] == "one" else [0, 2], "keepdim": True}))
    if op["dim"] != "required":
        calls.append(((), {}))
    return calls


@pytest.mark.parametrize("op", REDUCTION, ids=[op["name"] for op in REDUCTION])
def test_reduction_matches_torch(ng: Any, torch_ref: Any, op: dict[str, Any]) -> None:
    """Function and method over each form of ``dim``: values, dtype, node, the saved
    attributes the entry declares, and the gradient."""

    def run(lib: Any) -> list[Any]:
        facts = []
        values = np.random.default_rng(0).uniform(-1, 1, (2, 3, 2))
        values[0, 1] = values[0, 0]  # ties, for amax/amin
        for args, kwargs in _reduction_calls(op):
            x = from_np(lib, values, requires_grad=True)
            y = getattr(lib, op["name"])(x, *args, **kwargs)
            z = getattr(x, op["name"])(*args, **kwargs)
            node = y.grad_fn
            saved = [getattr(node, f"_saved_{name}") for name in op["saves"] if hasattr(node, f"_saved_{name}")]
            (y * y).sum().backward()
            facts.append(
                [
                    node.name(),
                    str(y.dtype),
                    to_np(y),
                    to_np(z),
                    [to_np(v) if hasattr(v, "grad_fn") else v for v in saved],
                    to_np(x.grad),
                ]
            )
        return facts

    got, expected = run(ng), run(torch_ref)
    for g, e in zip(got, expected):
        assert g[:2] == e[:2] and g[0] in (op["node"], op["full_node"])
        assert len(g[4]) == len(e[4])
        for a, b in zip([g[2], g[3], *g[4], g[5]], [e[2], e[3], *e[4], e[5]]):
            if isinstance(a, np.ndarray):
                assert_close(a, b)
            else:
                assert a == b


@pytest.mark.parametrize("op", REDUCTION, ids=[op["name"] for op in REDUCTION])
def test_reduction_dtype_rule_matches_torch(ng: Any, torch_ref: Any, op: dict[str, Any]) -> None:
    """Integer, bool and float16 inputs (and ``dtype=`` where the op takes it): the
    result dtype and values, or torch's error (float16 values within its rounding:
    logsumexp's float32 intermediate rounds once, torch's may differ by an ulp)."""

    def run(lib: Any) -> list[Any]:
        inputs = [lib.tensor([[1, 2], [3, 4]]), lib.tensor([[True, False], [True, True]])]
        inputs.append(lib.tensor([[1.5, 2.0], [3.0, 4.25]], dtype=lib.float16))
        calls = [lambda x=x: getattr(x, op["name"])(1) for x in inputs]
        if op["dtype"]:  # (norm refuses an integer tensor)
            calls += [lambda x=x: getattr(lib, op["name"])(x, 1, dtype=lib.float64) for x in (inputs[0], inputs[2])]
        return _values_or_errors(calls)

    _assert_same_values_or_errors(run(ng), run(torch_ref), rtol=2e-3)


def _values_or_errors(calls: list[Any]) -> list[Any]:
    """Each call's (dtype, values), or its RuntimeError's message."""
    facts: list[Any] = []
    for call in calls:
        try:
            y = call()
            facts.append((str(y.dtype), y.tolist()))
        except RuntimeError as e:
            facts.append(str(e))
    return facts


def _assert_same_values_or_errors(got: list[Any], expected: list[Any], rtol: float) -> None:
    assert [f if isinstance(f, str) else f[0] for f in got] == [f if isinstance(f, str) else f[0] for f in expected]
    for g, e in zip(got, expected):
        if not isinstance(g, str):
            np.testing.assert_allclose(g[1], e[1], rtol=rtol)


@pytest.mark.parametrize("op", REDUCTION, ids=[op["name"] for op in REDUCTION])
def test_reduction_dim_errors(ng: Any, op: dict[str, Any]) -> None:
    """A repeated dim, a dim out of range, and a dim that is not an int: torch's errors."""
    x = ng.tensor([[1.0, 2.0], [3.0, 4.0]])
    args, kwargs = _dim_call(op, (0, 0))
    if op["dim"] == "one":  # one int: torch's parser refuses any tuple
        with pytest.raises(TypeError, match=rf"^{op['name']}\(\).*\btuple\b"):
            getattr(x, op["name"])(*args, **kwargs)
    else:
        with pytest.raises(RuntimeError, match=r"^dim 0 appears multiple times in the list of dims$"):
            getattr(x, op["name"])(*args, **kwargs)
    args, kwargs = _dim_call(op, 3)
    with pytest.raises(
        IndexError, match=r"^Dimension out of range \(expected to be in range of \[-2, 1\], but got 3\)$"
    ):
        getattr(ng, op["name"])(x, *args, **kwargs)
    if op["dim"] == "one":
        return
    # torch.norm hands dim on to linalg.vector_norm, whose name its message shows.
    name = "(linalg_vector_norm|norm)" if op["scalar"] == "p" else op["name"]
    with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'dim' failed to unpack the object at pos 2"):
        getattr(x, op["name"])(dim=(0, "a"))


def _scalar_calls(op: dict[str, Any]) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """The forms of a reduction's scalar: var's ``correction`` (by keyword, fractional,
    with each form of dim) and its legacy ``unbiased`` bool (alone, by keyword, after
    dim); norm's ``p`` (each order torch treats apart, 'fro' and None, with and without
    dim)."""
    if op["scalar"] == "correction":
        return [
            ((), {}),
            ((), {"correction": 0}),
            ((1,), {"correction": 2.5, "keepdim": True}),
            (((0, -1),), {"correction": 0}),
            ((None,), {"correction": 1}),
            ((), {"correction": -1}),
            ((True,), {}),
            ((False,), {}),
            ((), {"unbiased": False}),
            ((1, False), {}),
            ((-1, True, True), {}),
        ]
    orders = [1, 2, math.inf, -math.inf, 0, 3, "fro", 0.5, -1, 2.5, None]
    return (
        [((p,), {}) for p in orders]
        + [((p, 1), {}) for p in (1, 2, math.inf, -math.inf, 0, 3, -1)]
        + [((p, (0, -1), True), {}) for p in (2, -math.inf, "fro", 0.5)]
    )


def _untied_values() -> np.ndarray:
    """A 2 x 3 x 2 input without zeros or ties (|x| too), so that amax, the inf-norms and
    the p < 1 norms are differentiable there."""
    values = np.random.default_rng(3).permutation(np.arange(1, 13)) / 13.0
    return (values * np.where(np.arange(12) % 3 == 0, -1.0, 1.0)).reshape(2, 3, 2)


@pytest.mark.parametrize("op", SCALAR_REDUCTION, ids=[op["name"] for op in SCALAR_REDUCTION])
def test_reduction_scalar_matches_torch(ng: Any, torch_ref: Any, op: dict[str, Any]) -> None:
    """Each form of the op's scalar (function and method): values, node, every saved
    attribute the entry declares (the scalar's too), and the gradient (None where torch
    gives none: the 0-norm)."""

    def run(lib: Any) -> list[Any]:
        facts = []
        for args, kwargs in _scalar_calls(op):
            x = from_np(lib, _untied_values(), requires_grad=True)
            y = getattr(lib, op["name"])(x, *args, **kwargs)
            z = getattr(x, op["name"])(*args, **kwargs)
            node = y.grad_fn
            saved = [getattr(node, f"_saved_{name}") for name in op["saves"]]
            (y * y).sum().backward()
            grad = None if x.grad is None else to_np(x.grad)
            facts.append(
                [node.name(), to_np(y), to_np(z), [to_np(v) if hasattr(v, "grad_fn") else v for v in saved], grad]
            )
        return facts

    got, expected = run(ng), run(torch_ref)
    for (args, kwargs), g, e in zip(_scalar_calls(op), got, expected):
        assert g[0] == e[0] == op["node"], (args, kwargs)
        assert_close(g[1], e[1])
        assert_close(g[2], e[2])
        for a, b in zip(g[3], e[3]):
            if isinstance(a, np.ndarray):
                assert_close(a, b)
            else:
                assert a == b, (args, kwargs, a, b)
        assert (g[4] is None) == (e[4] is None), (args, kwargs)
        if g[4] is not None:
            assert_close(g[4], e[4])


@pytest.mark.parametrize(
    "op", [op for op in SCALAR_REDUCTION if op["scalar"] == "correction"], ids=lambda op: op["name"]
)
@pytest.mark.parametrize("correction", [3, 5])
def test_correction_not_below_the_count_matches_torch(
    ng: Any, torch_ref: Any, op: dict[str, Any], correction: int
) -> None:
    """A correction of at least the number of elements reduced (3 along dim 1): torch's
    warning, inf values and the gradient torch gives (inf and nan)."""

    def run(lib: Any) -> list[np.ndarray]:
        x = from_np(lib, _untied_values(), requires_grad=True)
        with pytest.warns(UserWarning, match=rf"^{op['name']}\(\): degrees of freedom is <= 0"):
            y = getattr(x, op["name"])(1, correction=correction)
        y.sum().backward()
        return [to_np(y), to_np(x.grad)]

    for g, e in zip(run(ng), run(torch_ref)):
        assert_close(g, e)


@pytest.mark.parametrize("op", REDUCTION, ids=[op["name"] for op in REDUCTION])
def test_reduction_gradients_match_finite_differences(ng: Any, op: dict[str, Any]) -> None:
    """gradcheck and gradgradcheck (float64) over each form of dim and of the scalar;
    var's corrections stay below the count there (the others are inf)."""
    calls = _reduction_calls(op)
    if op["scalar"]:
        calls += [(args, kwargs) for args, kwargs in _scalar_calls(op) if kwargs.get("correction", 0) < 2]
    for args, kwargs in calls:
        x = from_np(ng, _untied_values(), requires_grad=True)

        def fn(t: Any, args: Any = args, kwargs: Any = kwargs) -> Any:
            return getattr(ng, op["name"])(t, *args, **kwargs)

        assert ng.autograd.gradcheck(fn, (x,)), (args, kwargs)
        assert ng.autograd.gradgradcheck(fn, (x,)), (args, kwargs)


@pytest.mark.parametrize("op", [op for op in REDUCTION if op["dim"] == "one"], ids=lambda op: op["name"])
def test_one_int_dim_reduction_gradients_at_zeros(ng: Any, op: dict[str, Any]) -> None:
    """prod at one zero and at two zeros in a row, along the dim and over all: the exact
    gradient, first and second order."""
    values = _untied_values()
    values[0, 1, 0] = 0.0
    values[1, :2, 1] = 0.0
    for args in [(), (1,), (-1,), (0,)]:
        x = from_np(ng, values, requires_grad=True)

        def fn(t: Any, args: Any = args) -> Any:
            return getattr(ng, op["name"])(t, *args)

        assert ng.autograd.gradcheck(fn, (x,)), args
        assert ng.autograd.gradgradcheck(fn, (x,)), args


@pytest.mark.parametrize("op", [op for op in SCALAR_REDUCTION if op["scalar"] == "p"], ids=lambda op: op["name"])
def test_norm_dtype_and_empty_errors_match_torch(ng: Any, torch_ref: Any, op: dict[str, Any]) -> None:
    """``dtype=`` (computed in it; a narrowing or integer dtype refused) and the orders
    without an identity over an empty tensor or dim: values, or torch's error."""
    cases = [
        lambda lib: (lib.tensor([3.0, 4.0]), (2,), {"dtype": lib.float64}),
        lambda lib: (lib.tensor([3.0, 4.0], dtype=lib.float16), (2,), {"dtype": lib.float32}),
        lambda lib: (lib.tensor([3.0, 4.0], dtype=lib.float64), (2,), {"dtype": lib.float32}),
        lambda lib: (lib.tensor([3.0, 4.0]), (2,), {"dtype": lib.int64}),
        lambda lib: (lib.zeros(0, 3), (math.inf,), {}),
        lambda lib: (lib.zeros(0, 3), (-1, 0), {}),
        lambda lib: (lib.zeros(0, 3), (-math.inf, 1), {}),
        lambda lib: (lib.zeros(0, 3), (2,), {}),
        lambda lib: (lib.zeros(0, 3), (0, 0), {}),
    ]

    def run(lib: Any) -> list[Any]:
        def call(x: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            return getattr(lib, op["name"])(x, *args, **kwargs)

        return _values_or_errors([lambda case=case: call(*case(lib)) for case in cases])

    _assert_same_values_or_errors(run(ng), run(torch_ref), rtol=1e-6)
