"""Under ``create_graph=True`` a backward formula that torch runs as an op of its own
(``_softmax_backward_data``, ``gelu_backward``, ...) is recorded as that op's node
(``SoftmaxBackwardDataBackward0``, ``GeluBackwardBackward0``, ...), with torch's saved
attributes and edges, and its own derivatives carry the third order: checked against
torch and, through gradgradcheck of the first gradient, against finite differences."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from oracle import AGAINST_TORCH, assert_close, from_np, is_tensor, run_both, to_np

X = np.array([[0.3, -1.2, 2.0, -3.5], [0.0, 0.7, -0.4, 3.2]])
# For finite differences: X moved off the kinks (0 for elu and leaky_relu).
X_SMOOTH = X + 0.05


def _first_grads(lib: Any, fn: Callable[..., Any], xs: Sequence[Any]) -> tuple[Any, ...]:
    """The gradients w.r.t. xs of ``(y * y).sum()``, y = fn(lib, *xs): the gradient
    reaching y's node requires grad (it has its own graph), so the backward op's
    grad_output is an edge of its node too."""
    y = fn(lib, *xs)
    return lib.autograd.grad((y * y).sum(), tuple(xs), create_graph=True)


def _facts(
    lib: Any, fn: Callable[..., Any], arrays: Sequence[np.ndarray], hops: int, third_order: bool = True
) -> dict[str, Any]:
    """The node of the first input's gradient (after ``hops`` first edges), its saved
    attributes and edges, and the first, second and (unless not ``third_order``)
    third-order gradients."""
    xs = [from_np(lib, a, requires_grad=True) for a in arrays]
    grads = _first_grads(lib, fn, xs)
    node = grads[0].grad_fn
    for _ in range(hops):
        node = node.next_functions[0][0]
    saved = {}
    for name in dir(node):
        if name.startswith("_saved_"):
            value = getattr(node, name)
            saved[name] = to_np(value) if is_tensor(value) else value
    second = lib.autograd.grad(sum((g * g).sum() for g in grads), xs, create_graph=True)
    third = lib.autograd.grad(sum((s * s).sum() for s in second), xs) if third_order else ()
    return {
        "node": node.name(),
        "saved": saved,
        "next": [None if fn is None else fn.name() for fn, _ in node.next_functions],
        "values": [[to_np(t) for t in ts] for ts in (grads, second, third)],
    }


def _check_against_torch(
    fn: Callable[..., Any],
    node: str,
    arrays: Sequence[np.ndarray] = (X,),
    hops: int = 0,
    third_order_of_input: bool = True,
    third_order: bool = True,
) -> None:
    """Node, saved attributes, edges and values as torch's. third_order_of_input=False
    leaves out the third-order gradient w.r.t. the first input, where torch's is wrong,
    third_order=False every third-order gradient, where torch raises (the
    finite-difference test checks npgrad's)."""
    got, expected = run_both(lambda lib: _facts(lib, fn, arrays, hops, third_order))
    assert got["node"] == expected["node"] == node
    assert got["next"] == expected["next"]
    assert sorted(got["saved"]) == sorted(expected["saved"])
    for name, value in expected["saved"].items():
        if isinstance(value, np.ndarray):
            assert_close(got["saved"][name], value, rtol=1e-12, atol=1e-12)
        else:
            # == only: npgrad shows an integral float parameter as an int (1 for
            # torch's 1.0), as its first-order nodes do
            assert got["saved"][name] == value, name
    assert len(got["values"]) == len(expected["values"])
    for order, (gs, es) in enumerate(zip(got["values"], expected["values"]), 1):
        for i, (g, e) in enumerate(zip(gs, es)):
            if order < 3 or i > 0 or third_order_of_input:
                assert_close(g, e, rtol=1e-10, atol=1e-12)


def _check_third_order(
    lib: Any, fn: Callable[..., Any], arrays: Sequence[np.ndarray] = (X_SMOOTH,), right: bool = True
) -> None:
    """gradgradcheck of the inputs -> the first gradients: the backward op's node's
    derivatives (its double backward) against float64 finite differences (right=False:
    they must disagree, a library's known error)."""
    xs = [from_np(lib, a, requires_grad=True) for a in arrays]
    if right:
        assert lib.autograd.gradgradcheck(lambda *ts: _first_grads(lib, fn, ts), xs)
    else:
        assert not lib.autograd.gradgradcheck(lambda *ts: _first_grads(lib, fn, ts), xs, raise_exception=False)


def _softmax(lib: Any, x: Any) -> Any:
    return lib.nn.functional.softmax(x, dim=1)


def _log_softmax(lib: Any, x: Any) -> Any:
    return lib.nn.functional.log_softmax(x, dim=-1)


SOFTMAX_CASES = [
    pytest.param(_softmax, "SoftmaxBackwardDataBackward0", id="softmax"),
    pytest.param(_log_softmax, "LogSoftmaxBackwardDataBackward0", id="log_softmax"),
]


@pytest.mark.parametrize(("fn", "node"), SOFTMAX_CASES)
def test_softmax_double_backward_records_torch_node(ng: Any, fn: Any, node: str) -> None:
    _check_against_torch(fn, node)


@pytest.mark.parametrize(("fn", "node"), SOFTMAX_CASES)
def test_softmax_third_order_matches_finite_differences(ng: Any, fn: Any, node: str) -> None:
    _check_third_order(ng, fn)


def test_cross_entropy_double_backward_records_log_softmax_node(ng: Any) -> None:
    """cross_entropy's gradient under create_graph goes through log_softmax's op."""
    logits = from_np(ng, X, requires_grad=True)
    loss = ng.nn.functional.cross_entropy(logits, ng.tensor([2, 0]))
    (g,) = ng.autograd.grad(loss, logits, create_graph=True)
    assert g.grad_fn.name() == "LogSoftmaxBackwardDataBackward0"
    (gg,) = ng.autograd.grad((g * g).sum(), logits)
    p = np.exp(X) / np.exp(X).sum(1, keepdims=True)
    onehot = np.eye(4)[[2, 0]]
    d = (p - onehot) / 2  # the first gradient, by hand
    # d/dx of sum(d^2) = J^T (2 d), J the softmax Jacobian / 2 per row
    expected = (2 * d * p - p * (2 * d * p).sum(1, keepdims=True)) / 2
    assert_close(gg, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_softmax_backward_op_rounds_a_reduced_float_once(ng: Any, torch_ref: Any, dtype: str) -> None:
    """Under create_graph too, the fused op computes in float32 and rounds once, as
    torch's kernel: the first gradient has torch's bits."""

    def run(lib: Any) -> list[np.ndarray]:
        x = from_np(lib, X, requires_grad=True)
        out = []
        for fn in (_softmax, _log_softmax):
            y = fn(lib, x.to(getattr(lib, dtype)))
            w = from_np(lib, np.linspace(-1, 1, 8).reshape(2, 4)).to(getattr(lib, dtype))
            (g,) = lib.autograd.grad((y * w).sum(), x, create_graph=True)
            out.append(to_np(g))
        return out

    for got, expected in zip(run(ng), run(torch_ref)):
        np.testing.assert_array_equal(got, expected)


def _act(name: str, *args: Any, **kwargs: Any) -> Callable[[Any, Any], Any]:
    return lambda lib, x: getattr(lib.nn.functional, name)(x, *args, **kwargs)


def _inplace(name: str, *args: Any) -> Callable[[Any, Any], Any]:
    """The in-place form on a clone: its node saves the result."""
    return lambda lib, x: getattr(lib.nn.functional, name)(x.clone(), *args, inplace=True)


# (forward, the first gradient's node): torch's backward ops of the activations
ACTIVATION_CASES = [
    pytest.param(_act("gelu"), "GeluBackwardBackward0", id="gelu"),
    pytest.param(_act("gelu", approximate="tanh"), "GeluBackwardBackward0", id="gelu_tanh"),
    pytest.param(_act("elu", 0.7), "EluBackwardBackward0", id="elu"),
    pytest.param(_inplace("elu", 0.7), "EluBackwardBackward0", id="elu_"),
    pytest.param(_act("selu"), "EluBackwardBackward0", id="selu"),
    pytest.param(_act("celu", 2.0), "EluBackwardBackward0", id="celu"),
    pytest.param(_inplace("celu", 2.0), "EluBackwardBackward0", id="celu_"),
    pytest.param(_act("leaky_relu", 0.2), "LeakyReluBackwardBackward0", id="leaky_relu"),
    pytest.param(_inplace("leaky_relu", 0.2), "LeakyReluBackwardBackward0", id="leaky_relu_"),
    pytest.param(_act("hardtanh", -0.5, 1.5), "HardtanhBackwardBackward0", id="hardtanh"),
    pytest.param(_act("relu6"), "HardtanhBackwardBackward0", id="relu6"),
    pytest.param(_act("hardswish"), "HardswishBackwardBackward0", id="hardswish"),
    pytest.param(_act("softplus", 2.0, 3.0), "SoftplusBackwardBackward0", id="softplus"),
    pytest.param(_act("logsigmoid"), "LogSigmoidBackwardBackward0", id="logsigmoid"),
    pytest.param(_act("softshrink", 0.5), "SoftshrinkBackwardBackward0", id="softshrink"),
    pytest.param(_act("hardshrink", 0.5), "HardshrinkBackwardBackward0", id="hardshrink"),
]


@pytest.mark.parametrize(("fn", "node"), ACTIVATION_CASES)
def test_activation_double_backward_records_torch_node(ng: Any, fn: Any, node: str) -> None:
    _check_against_torch(fn, node)


@pytest.mark.parametrize(
    ("fn", "node"),
    [
        c
        for c in ACTIVATION_CASES
        if c.id in ("gelu", "gelu_tanh", "elu", "elu_", "softplus", "hardswish", "logsigmoid", "leaky_relu_")
    ],
)
def test_activation_third_order_matches_finite_differences(ng: Any, fn: Any, node: str) -> None:
    _check_third_order(ng, fn)


P = np.array([[0.2, 0.5, 0.9], [0.4, 0.1, 0.7]])
T = np.array([[0.3, 0.65, 0.1], [0.2, 0.5, 1.45]])


def _loss(name: str, **kwargs: Any) -> Callable[[Any, Any, Any], Any]:
    return lambda lib, p, t: getattr(lib.nn.functional, name)(p, t, **kwargs)


def _bce(**kwargs: Any) -> Callable[[Any, Any, Any], Any]:
    """binary_cross_entropy with T / 2 as the target (in [0, 1]); torch's gradient in
    the target is a composite (binary_cross_entropy_target_backward), not compared."""
    return lambda lib, p, t: lib.nn.functional.binary_cross_entropy(p, t / 2, **kwargs)


LOSS_CASES = [
    pytest.param(_loss("mse_loss"), "MseLossBackwardBackward0", id="mse_mean"),
    pytest.param(_loss("mse_loss", reduction="none"), "MseLossBackwardBackward0", id="mse_none"),
    pytest.param(_loss("smooth_l1_loss", beta=0.5), "SmoothL1LossBackwardBackward0", id="smooth_l1_mean"),
    pytest.param(
        # beta = 0 through the native op (F.smooth_l1_loss calls l1_loss's composite)
        lambda lib, p, t: lib._C._nn.smooth_l1_loss(p, t, 2, 0.0),
        "SmoothL1LossBackwardBackward0",
        id="smooth_l1_beta0",
    ),
    pytest.param(_loss("huber_loss", delta=0.5, reduction="sum"), "HuberLossBackwardBackward0", id="huber_sum"),
    pytest.param(_loss("huber_loss", delta=0.5, reduction="none"), "HuberLossBackwardBackward0", id="huber_none"),
    pytest.param(_bce(), "BinaryCrossEntropyBackwardBackward0", id="bce_mean"),
    pytest.param(
        lambda lib, p, t: lib.nn.functional.binary_cross_entropy(
            p, t / 2, weight=from_np(lib, np.array([0.5, 1.0, 2.0])), reduction="sum"
        ),
        "BinaryCrossEntropyBackwardBackward0",
        id="bce_weight_sum",
    ),
    pytest.param(_bce(reduction="none"), "BinaryCrossEntropyBackwardBackward0", id="bce_none"),
]


def _loss_grads(lib: Any, fn: Any, p: Any, t: Any) -> tuple[Any, Any]:
    y = fn(lib, p, t)
    return lib.autograd.grad((y * y).sum(), (p, t), create_graph=True)


def _loss_facts(lib: Any, fn: Any) -> dict[str, Any]:
    p = from_np(lib, P, requires_grad=True)
    t = from_np(lib, T, requires_grad=True)
    grads = _loss_grads(lib, fn, p, t)
    facts: dict[str, Any] = {"values": [to_np(g) for g in grads]}
    for which, g in zip("pt", grads):
        node = g.grad_fn
        if which == "t" and node.name() == "DivBackward0":  # bce's target t / 2
            continue
        facts[which] = {
            "node": node.name(),
            "next": [None if f is None else f.name() for f, _ in node.next_functions],
            "saved": {
                name: to_np(getattr(node, name)) if is_tensor(getattr(node, name)) else getattr(node, name)
                for name in dir(node)
                if name.startswith("_saved_")
            },
            # the target's node is the backward op with self and target swapped
            "self_is_target": node._saved_self is t,
        }
    second = lib.autograd.grad(grads[0].sum() + (grads[1] * grads[1]).sum(), (p, t), create_graph=True)
    third = lib.autograd.grad(sum((s * s).sum() for s in second), (p, t))
    facts["values"] += [to_np(s) for s in second] + [to_np(s) for s in third]
    return facts


@pytest.mark.parametrize(("fn", "node"), LOSS_CASES)
def test_loss_double_backward_records_torch_node(ng: Any, fn: Any, node: str) -> None:
    got, expected = run_both(lambda lib: _loss_facts(lib, fn))
    assert ("t" in got) == ("t" in expected)
    for which in [w for w in "pt" if w in expected]:
        g, e = got[which], expected[which]
        assert g["node"] == e["node"] == node
        assert g["next"] == e["next"]
        assert g["self_is_target"] == e["self_is_target"] == (which == "t")
        assert sorted(g["saved"]) == sorted(e["saved"])
        for name, value in e["saved"].items():
            if isinstance(value, np.ndarray):
                assert_close(g["saved"][name], value, rtol=1e-12, atol=1e-12)
            else:
                assert g["saved"][name] == value, name
    for g, e in zip(got["values"], expected["values"]):
        assert_close(g, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    ("fn", "node"), [c for c in LOSS_CASES if c.id in ("mse_mean", "smooth_l1_mean", "huber_none", "bce_weight_sum")]
)
def test_loss_third_order_matches_finite_differences(ng: Any, fn: Any, node: str) -> None:
    p = from_np(ng, P, requires_grad=True)
    t = from_np(ng, T, requires_grad=True)
    assert ng.autograd.gradgradcheck(lambda a, b: _loss_grads(ng, fn, a, b), (p, t))


def _nll(**kwargs: Any) -> Callable[[Any, Any], Any]:
    """nll_loss of X as log-probabilities (any values will do), targets 2 and 0."""

    def fn(lib: Any, x: Any) -> Any:
        if "weight" in kwargs:
            kwargs["weight"] = from_np(lib, np.array([0.5, 1.0, 2.0, 1.5]))
        return lib.nn.functional.nll_loss(x, lib.tensor([2, 0]), **kwargs)

    return fn


NLL_CASES = [
    pytest.param(_nll(), "NllLossBackwardBackward0", id="nll_mean"),
    pytest.param(_nll(weight=True, reduction="sum"), "NllLossBackwardBackward0", id="nll_weight_sum"),
    pytest.param(_nll(reduction="none", ignore_index=0), "NllLossBackwardBackward0", id="nll_none_ignore"),
]


@pytest.mark.parametrize(("fn", "node"), NLL_CASES)
def test_nll_double_backward_records_torch_node(ng: Any, fn: Any, node: str) -> None:
    _check_against_torch(fn, node)


def test_nll_third_order_matches_finite_differences(ng: Any) -> None:
    _check_third_order(ng, _nll(weight=True))


def test_nll2d_double_backward_records_torch_node(ng: Any) -> None:
    """A 4-D input: nll_loss2d's backward op, NllLoss2DBackwardBackward0."""
    data = np.random.default_rng(3).uniform(-1, 1, (2, 3, 2, 2))
    target = np.array([[[0, 2], [1, 1]], [[2, 0], [0, 1]]])

    def run(lib: Any) -> list[Any]:
        x = from_np(lib, data, requires_grad=True)
        y = lib.nn.functional.nll_loss(x, from_np(lib, target))
        (g,) = lib.autograd.grad(y * y, x, create_graph=True)
        node = g.grad_fn
        facts = [node.name(), node._saved_reduction, node._saved_ignore_index, to_np(node._saved_target)]
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        return [*facts, to_np(g), to_np(gg)]

    got, expected = run_both(run)
    assert got[:3] == expected[:3]
    assert got[0] == "NllLoss2DBackwardBackward0"
    for g, e in zip(got[3:], expected[3:]):
        assert_close(g, e, rtol=1e-12, atol=1e-12)


def _embedding(**kwargs: Any) -> Callable[[Any, Any], Any]:
    """X's two rows as the embedding table, looked up by repeated indices."""
    return lambda lib, x: lib.nn.functional.embedding(lib.tensor([[0, 1], [1, 1], [0, 1]]), x, **kwargs)


EMBEDDING_CASES = [
    pytest.param(_embedding(), id="plain"),
    pytest.param(_embedding(padding_idx=0), id="padding_idx"),
    # the scale is embedding's own backward's: the double backward node has none, and
    # the chain through both is exact (the third-order test checks it)
    pytest.param(_embedding(scale_grad_by_freq=True), id="scale_grad_by_freq"),
    pytest.param(_embedding(padding_idx=1, scale_grad_by_freq=True), id="both"),
]


@pytest.mark.parametrize("fn", EMBEDDING_CASES)
def test_embedding_double_backward_records_torch_node(ng: Any, fn: Any) -> None:
    _check_against_torch(fn, "EmbeddingDenseBackwardBackward0")


@pytest.mark.parametrize("fn", EMBEDDING_CASES[:2])
def test_embedding_third_order_matches_finite_differences(ng: Any, fn: Any) -> None:
    # Not with scale_grad_by_freq: there torch's node, like npgrad's, is not the exact
    # adjoint in a gradient that did not come through the same scaled embedding
    # (gradgradcheck's random one); the test below checks the chain that did.
    _check_third_order(ng, fn)


@pytest.mark.parametrize("fn", EMBEDDING_CASES)
def test_embedding_second_order_matches_finite_differences(ng: Any, fn: Any) -> None:
    x = from_np(ng, X_SMOOTH, requires_grad=True)
    assert ng.autograd.gradcheck(lambda t: _first_grads(ng, fn, (t,)), (x,))


def test_embedding_double_backward_is_the_rows_of_the_gradient(ng: Any) -> None:
    """The node's own gradient: each index's row of the incoming gradient, zero at
    padding_idx, in the indices' shape, with no frequency scaling."""
    gO = ng.ones(3, 2, 4, dtype=ng.float64, requires_grad=True)
    w = from_np(ng, X, requires_grad=True)
    y = ng.nn.functional.embedding(ng.tensor([[0, 1], [1, 1], [0, 1]]), w, padding_idx=0, scale_grad_by_freq=True)
    (g,) = ng.autograd.grad(y, w, gO, create_graph=True)
    gg = from_np(ng, np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]))
    (ggO,) = ng.autograd.grad(g, gO, gg)
    expected = np.array([[0.0] * 4, [5.0, 6.0, 7.0, 8.0]])[[[0, 1], [1, 1], [0, 1]]]
    assert_close(ggO, expected, rtol=0, atol=0)


_RNG = np.random.default_rng(5)
X3 = _RNG.uniform(-2, 2, (3, 4, 5))
C4 = _RNG.uniform(0.5, 1.5, 4)  # a weight of 4 elements (or channels)
B4 = _RNG.uniform(-1, 1, 4)  # a bias of 4
W45 = _RNG.uniform(0.5, 1.5, (4, 5))
B45 = _RNG.uniform(-1, 1, (4, 5))
RUNNING = (_RNG.uniform(-1, 1, 4), _RNG.uniform(0.5, 2, 4))


def _norm(name: str, *args: Any, **kwargs: Any) -> Callable[..., Any]:
    """F.<name>(input, *args, weight=, bias=, **kwargs) of the inputs (input[, weight[,
    bias]]); running_mean / running_var (RUNNING) when kwargs ask for them."""

    def fn(lib: Any, x: Any, weight: Any = None, bias: Any = None) -> Any:
        kw = dict(kwargs)
        for key, value in zip(("running_mean", "running_var"), RUNNING):
            if kw.get(key):
                kw[key] = from_np(lib, value)
        return getattr(lib.nn.functional, name)(x, *args, weight=weight, bias=bias, **kw)

    return fn


def _bn(**kwargs: Any) -> Callable[..., Any]:
    return _norm("batch_norm", **{"running_mean": None, "running_var": None, "training": True, **kwargs})


LN = "NativeLayerNormBackwardBackward0"
BN = "NativeBatchNormBackwardBackward0"

# (forward, its inputs, the node, hops from the input's gradient's node to it,
# whether torch's third order w.r.t. the input is right): torch 2.13 treats the
# saved statistics as constants when it differentiates its double backward, so
# with batch statistics its third order w.r.t. the input is wrong
# (pytorch#175754, #186256)
NORM_CASES = [
    pytest.param(_norm("layer_norm", (4,)), (X, C4, B4), LN, 0, False, id="layer_norm"),
    pytest.param(_norm("layer_norm", (4,)), (X,), LN, 0, False, id="layer_norm_no_affine"),
    pytest.param(_norm("layer_norm", (4, 5)), (X3, W45, B45), LN, 0, False, id="layer_norm_2d_shape"),
    pytest.param(_norm("layer_norm", (4, 5)), (X3, W45), LN, 0, False, id="layer_norm_weight_only"),
    pytest.param(_bn(), (X3, C4, B4), BN, 0, False, id="batch_norm"),
    pytest.param(_bn(running_mean=True, running_var=True), (X3, C4, B4), BN, 0, False, id="batch_norm_running"),
    pytest.param(
        _bn(running_mean=True, running_var=True, training=False), (X3, C4, B4), BN, 0, True, id="batch_norm_eval"
    ),
    pytest.param(_bn(), (X3,), BN, 0, False, id="batch_norm_no_weight"),
    pytest.param(
        _bn(running_mean=True, running_var=True, training=False), (X3,), BN, 0, True, id="batch_norm_eval_no_weight"
    ),
    pytest.param(_bn(), (X3[:, :, 0], C4, B4), BN, 0, False, id="batch_norm_2d"),
    pytest.param(
        _bn(), (X3[:2].reshape(2, 4, 5, 1) * X3[:2, :, :2].reshape(2, 4, 1, 2), C4), BN, 0, False, id="batch_norm_4d"
    ),
    # a constant input: the gradients w.r.t. weight and bias only (no input edge)
    pytest.param(
        lambda lib, w, b: _norm("layer_norm", (4,))(lib, from_np(lib, X), w, b),
        (C4, B4),
        LN,
        0,
        True,
        id="layer_norm_params",
    ),
    pytest.param(lambda lib, w: _bn()(lib, from_np(lib, X3), w), (C4,), BN, 0, True, id="batch_norm_weight_only"),
    # instance_norm: batch_norm of the input viewed as (1, N * C, ...), whose
    # gradient is viewed back (ViewBackward0)
    pytest.param(_norm("instance_norm"), (X3, C4, B4), BN, 1, False, id="instance_norm"),
    pytest.param(
        _norm("instance_norm", running_mean=True, running_var=True), (X3,), BN, 1, False, id="instance_norm_running"
    ),
]


@pytest.mark.parametrize(("fn", "arrays", "node", "hops", "torch_right"), NORM_CASES)
def test_norm_double_backward_records_torch_node(
    ng: Any, fn: Any, arrays: Any, node: str, hops: int, torch_right: bool
) -> None:
    _check_against_torch(fn, node, arrays, hops, third_order_of_input=torch_right)


@pytest.mark.parametrize(("fn", "arrays", "node", "hops", "torch_right"), NORM_CASES)
def test_norm_third_order_matches_finite_differences(
    ng: Any, fn: Any, arrays: Any, node: str, hops: int, torch_right: bool
) -> None:
    _check_third_order(ng, fn, arrays, right=torch_right or not AGAINST_TORCH)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize(
    ("fn", "arrays", "node"),
    [(_norm("layer_norm", (5,)), (X3, W45[0], B45[0]), LN), (_bn(), (X3, C4, B4), BN)],
    ids=["layer_norm", "batch_norm"],
)
def test_norm_double_backward_dtypes_are_torchs(ng: Any, dtype: str, fn: Any, arrays: Any, node: str) -> None:
    """In float32 and bfloat16 the gradients of both orders have torch's dtype, the
    first-order values torch's up to the dtype's rounding."""

    def run(lib: Any) -> list[Any]:
        xs = [from_np(lib, a).to(getattr(lib, dtype)).requires_grad_() for a in arrays]
        grads = _first_grads(lib, fn, xs)
        second = lib.autograd.grad(sum((g * g).sum() for g in grads), xs)
        return [grads[0].grad_fn.name(), [str(t.dtype) for t in (*grads, *second)], [to_np(g.float()) for g in grads]]

    got, expected = run_both(run)
    assert got[0] == expected[0] == node
    assert got[1] == expected[1] == [f"torch.{dtype}"] * 6
    tol = 5e-2 if dtype == "bfloat16" else 1e-4  # bfloat16: both ~2e-2 from float64's
    for g, e in zip(got[2], expected[2]):
        assert_close(g, e, rtol=tol, atol=tol)


def _conv(name: str, **kwargs: Any) -> Callable[..., Any]:
    """lib.nn.functional.<name>(input, weight[, bias], **kwargs)."""
    return lambda lib, *tensors: getattr(lib.nn.functional, name)(*tensors, **kwargs)


def _conv_inputs(x: tuple[int, ...], w: tuple[int, ...], bias: int | None) -> tuple[np.ndarray, ...]:
    """Input and weight of these sizes, and a bias of that many channels (None: no bias)."""
    rng = np.random.default_rng(len(x) + sum(w))
    sizes = [x, w] if bias is None else [x, w, (bias,)]
    return tuple(rng.uniform(-1, 1, s) for s in sizes)


CONV = "ConvolutionBackwardBackward0"

# (forward, its inputs, whether torch has a third order): every convolution form
# npgrad supports, with and without bias. A transposed one with an output_padding
# has none in torch 2.13: it raises "output_padding is not supported for
# non-transposed convolutions" (its double backward passes output_padding to a
# non-transposed convolution); npgrad's is checked against finite differences.
CONV_CASES = [
    pytest.param(_conv("conv1d", padding=1), _conv_inputs((2, 2, 5), (3, 2, 3), 3), True, id="conv1d"),
    pytest.param(
        _conv("conv1d", stride=2, dilation=2, groups=2),
        _conv_inputs((2, 4, 7), (4, 2, 2), None),
        True,
        id="conv1d_groups",
    ),
    pytest.param(_conv("conv2d", padding=1), _conv_inputs((2, 3, 4, 4), (2, 3, 3, 3), 2), True, id="conv2d"),
    pytest.param(
        _conv("conv2d", stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2),
        _conv_inputs((1, 4, 5, 6), (4, 2, 3, 2), 4),
        True,
        id="conv2d_stride_padding_dilation_groups",
    ),
    pytest.param(
        _conv("conv2d", padding="same", dilation=2),
        _conv_inputs((2, 2, 3, 5), (3, 2, 1, 3), None),
        True,
        id="conv2d_same",
    ),
    pytest.param(
        _conv("conv_transpose1d", stride=2, dilation=2, groups=3),
        _conv_inputs((2, 3, 4), (3, 1, 2), 3),
        True,
        id="conv_transpose1d",
    ),
    pytest.param(
        _conv("conv_transpose1d", stride=2, padding=1, output_padding=1),
        _conv_inputs((2, 3, 4), (3, 2, 3), 2),
        False,
        id="conv_transpose1d_output_padding",
    ),
    pytest.param(
        # an output_padding not below the stride (allowed: it is below the dilation)
        _conv("conv_transpose1d", dilation=2, output_padding=1),
        _conv_inputs((2, 3, 4), (3, 2, 3), None),
        False,
        id="conv_transpose1d_dilation_output_padding",
    ),
    pytest.param(
        _conv("conv_transpose2d", stride=(1, 2), padding=(0, 1), dilation=(2, 1)),
        _conv_inputs((2, 2, 3, 3), (2, 3, 2, 2), None),
        True,
        id="conv_transpose2d",
    ),
    pytest.param(
        _conv("conv_transpose2d", stride=(2, 1), padding=(1, 0), output_padding=(1, 0), groups=2, dilation=(1, 2)),
        _conv_inputs((2, 4, 3, 3), (4, 1, 3, 2), None),
        False,
        id="conv_transpose2d_groups_output_padding",
    ),
    pytest.param(
        _conv("conv_transpose2d", stride=2, padding=1, output_padding=1),
        _conv_inputs((1, 2, 3, 2), (2, 3, 2, 2), 3),
        False,
        id="conv_transpose2d_output_padding",
    ),
]


@pytest.mark.parametrize(("fn", "arrays", "torch_has_third"), CONV_CASES)
def test_conv_double_backward_records_torch_node(ng: Any, fn: Any, arrays: Any, torch_has_third: bool) -> None:
    _check_against_torch(fn, CONV, arrays, third_order=torch_has_third)


@pytest.mark.parametrize(("fn", "arrays", "torch_has_third"), CONV_CASES)
def test_conv_third_order_matches_finite_differences(ng: Any, fn: Any, arrays: Any, torch_has_third: bool) -> None:
    if AGAINST_TORCH and not torch_has_third:
        pytest.skip("torch's third order raises for a transposed convolution with output_padding")
    _check_third_order(ng, fn, arrays)


@pytest.mark.parametrize("requires_grad", [(True, False, False), (False, True, True), (False, False, True)])
def test_conv_double_backward_edges_follow_requires_grad(ng: Any, requires_grad: tuple[bool, ...]) -> None:
    """Only some of input, weight and bias require grad: their gradients are outputs
    of one node whose edges are torch's (an edge only to what requires grad), and the
    values are torch's."""
    arrays = _conv_inputs((2, 3, 4, 4), (2, 3, 3, 3), 2)

    def run(lib: Any) -> list[Any]:
        xs = [from_np(lib, a, requires_grad=r) for a, r in zip(arrays, requires_grad)]
        y = lib.nn.functional.conv2d(*xs, padding=1)
        wanted = [x for x in xs if x.requires_grad]
        grads = lib.autograd.grad((y * y).sum(), wanted, create_graph=True)
        node = grads[0].grad_fn
        assert all(g.grad_fn is node for g in grads)
        edges = [None if f is None else f.name() for f, _ in node.next_functions]
        second = lib.autograd.grad(sum((g * g).sum() for g in grads), wanted)
        return [node.name(), edges, *[to_np(t) for t in (*grads, *second)]]

    got, expected = run_both(run)
    assert got[:2] == expected[:2]
    assert got[0] == CONV
    for g, e in zip(got[2:], expected[2:], strict=True):
        assert_close(g, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("dtype", "tol"), [("float32", 1e-6), ("float16", 2e-3), ("bfloat16", 1e-2)])
def test_conv_double_backward_in_a_lower_precision(ng: Any, torch_ref: Any, dtype: str, tol: float) -> None:
    """float32 and the reduced floats: the gradients of every order have torch's dtype,
    and its values to the dtype's precision (a reduced float is computed in float32
    and rounded once per op)."""
    arrays = _conv_inputs((2, 3, 4, 4), (2, 3, 3, 3), 2)

    def run(lib: Any) -> list[Any]:
        xs = [from_np(lib, a).to(getattr(lib, dtype)).requires_grad_() for a in arrays]
        grads = _first_grads(lib, _conv("conv2d", padding=1, stride=(1, 2)), xs)
        second = lib.autograd.grad(sum((g * g).sum() for g in grads), xs, create_graph=True)
        third = lib.autograd.grad(sum(s.sum() for s in second), xs)
        results = (*grads, *second, *third)
        return [grads[0].grad_fn.name(), [str(t.dtype) for t in results], [to_np(t.double()) for t in results]]

    got, expected = run(ng), run(torch_ref)
    assert got[0] == expected[0] == CONV
    assert got[1] == expected[1] == [f"torch.{dtype}"] * 9
    for g, e in zip(got[2], expected[2], strict=True):
        assert_close(g, e, rtol=tol, atol=tol * np.abs(e).max())
