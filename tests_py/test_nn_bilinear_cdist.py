"""bilinear (and nn.Bilinear), cdist and cosine_embedding_loss (and
nn.CosineEmbeddingLoss) against torch: the whole graph each records, cdist's choice
between CdistBackward0 and the matrix-product path, its gradients at zero distance,
the non-differentiable CdistBackward0 formula, and errors.

Values, gradients, saved attributes and second order also come from their rows in
op_specs.py (DISTANCE, NN_EXTRA).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from oracle import assert_module_matches_torch, assert_same_error, assert_same_result, graph_desc, run_both


def _F(lib: Any) -> Any:
    return lib.nn.functional


def _x(lib: Any, *shape: int, dtype: Any = None) -> Any:
    n = 1
    for s in shape:
        n *= s
    values = (lib.arange(n, dtype=dtype or lib.float64).reshape(shape) * 0.37 - 1.1).sin()
    return values.requires_grad_()


_TARGET = [1.0, -1.0, 1.0, -1.0]

CALLS = {
    "bilinear": lambda lib: _F(lib).bilinear(_x(lib, 2, 3), _x(lib, 2, 4), _x(lib, 5, 3, 4), _x(lib, 5)),
    "bilinear_3d_no_bias": lambda lib: _F(lib).bilinear(_x(lib, 2, 2, 3), _x(lib, 2, 2, 4), _x(lib, 5, 3, 4)),
    "bilinear_empty_batch": lambda lib: _F(lib).bilinear(_x(lib, 0, 3), _x(lib, 0, 4), _x(lib, 5, 3, 4), _x(lib, 5)),
    "bilinear_1d": lambda lib: lib.bilinear(_x(lib, 3), _x(lib, 4), _x(lib, 2, 3, 4), _x(lib, 2)),
    # Past the one loop of small products (4096 terms): the two bmm.
    "bilinear_large": lambda lib: _F(lib).bilinear(_x(lib, 8, 10), _x(lib, 8, 9), _x(lib, 6, 10, 9), _x(lib, 6)),
    "bilinear_strided_float32": lambda lib: _F(lib).bilinear(
        _x(lib, 3, 2, dtype=lib.float32).t(), _x(lib, 2, 4, dtype=lib.float32), _x(lib, 5, 3, 4, dtype=lib.float32)
    ),
    # _trilinear's other roles: a matrix product weighted by a third operand, summed
    # over one dim, two, or none.
    "trilinear_sum_one": lambda lib: lib._trilinear(_x(lib, 2, 3), _x(lib, 3, 4), _x(lib, 2, 4), [2], [0], [1], [1]),
    "trilinear_sum_two": lambda lib: lib._trilinear(_x(lib, 2, 3), _x(lib, 3, 4), _x(lib, 2, 4), [2], [0], [1], [1, 2]),
    "trilinear_sum_none": lambda lib: lib._trilinear(_x(lib, 2, 3), _x(lib, 3, 4), _x(lib, 2, 4), [2], [0], [1], []),
    "cdist_small_p2": lambda lib: lib.cdist(_x(lib, 3, 2), _x(lib, 4, 2)),
    "cdist_large_p2": lambda lib: lib.cdist(_x(lib, 26, 2), _x(lib, 3, 2)),
    "cdist_large_p2_donot_use_mm": lambda lib: lib.cdist(
        _x(lib, 26, 2), _x(lib, 3, 2), compute_mode="donot_use_mm_for_euclid_dist"
    ),
    "cdist_mm_batched_broadcast": lambda lib: lib.cdist(
        _x(lib, 4, 2), _x(lib, 2, 3, 2), compute_mode="use_mm_for_euclid_dist"
    ),
    "cdist_mm_batch_of_one": lambda lib: lib.cdist(
        _x(lib, 1, 4, 2), _x(lib, 3, 2), compute_mode="use_mm_for_euclid_dist"
    ),
    "cdist_p0": lambda lib: lib.cdist(_x(lib, 3, 2), _x(lib, 4, 2), 0),
    "cdist_p1_batched": lambda lib: lib.cdist(_x(lib, 2, 3, 2), _x(lib, 1, 4, 2), 1),
    "cdist_inf": lambda lib: lib.cdist(_x(lib, 3, 2), _x(lib, 4, 2), float("inf")),
    "cdist_p1_5_float64": lambda lib: lib.cdist(
        _x(lib, 3, 2, dtype=lib.float64), _x(lib, 4, 2, dtype=lib.float64), 1.5
    ),
    "cdist_empty": lambda lib: lib.cdist(_x(lib, 0, 2), _x(lib, 4, 2)),
    "cdist_no_columns": lambda lib: lib.cdist(_x(lib, 3, 0), _x(lib, 4, 0)),
    "cosine_embedding_mean": lambda lib: _F(lib).cosine_embedding_loss(
        _x(lib, 4, 3), _x(lib, 4, 3).flip(0), lib.tensor(_TARGET), 0.2
    ),
    "cosine_embedding_none": lambda lib: _F(lib).cosine_embedding_loss(
        _x(lib, 4, 3), _x(lib, 4, 3).flip(1), lib.tensor([1.0, -1.0, 0.0, 1.0]), reduction="none"
    ),
    "cosine_embedding_1d_sum": lambda lib: _F(lib).cosine_embedding_loss(
        _x(lib, 3), _x(lib, 3).flip(0), lib.tensor(-1.0), -0.5, reduction="sum"
    ),
}


@pytest.mark.usefixtures("torch_ref")
@pytest.mark.parametrize("name", sorted(CALLS))
def test_values_gradients_and_graph_match_torch(name: str) -> None:
    def run(lib: Any) -> list[Any]:
        out = CALLS[name](lib)
        leaves = [t for t in _leaves(out.grad_fn)]
        grads = lib.autograd.grad(out.sum(), leaves) if out.requires_grad and out.numel() else ()
        return [out, graph_desc(out.grad_fn), [g.detach() for g in grads]]

    got, expected = run_both(run)
    assert_same_result(got[0], expected[0])
    assert got[1] == expected[1]
    assert len(got[2]) == len(expected[2])
    for g, e in zip(got[2], expected[2]):
        assert_same_result(g, e)


def _leaves(node: Any) -> list[Any]:
    """The leaf tensors below ``node``, in the order of a depth-first walk."""
    out: list[Any] = []
    stack, seen, keep = [node], set(), []
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        keep.append(fn)
        if hasattr(fn, "variable"):
            out.append(fn.variable)
        stack.extend(child for child, _ in reversed(fn.next_functions))
    return out


@pytest.mark.usefixtures("torch_ref")
@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")])
def test_cdist_gradient_at_zero_distance_and_ties(p: float) -> None:
    """torch's formulas define the gradient where a distance or a difference is 0
    (0 there) and where several coordinates tie for p = inf (each gets it)."""

    def run(lib: Any) -> list[Any]:
        x = lib.tensor([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]], dtype=lib.float64, requires_grad=True)
        y = lib.cdist(x, x, p)
        (g,) = lib.autograd.grad((y * lib.arange(9, dtype=lib.float64).view(3, 3)).sum(), x)
        return [y.detach(), g]

    got, expected = run_both(run)
    for a, b in zip(got, expected):
        assert_same_result(a, b)


@pytest.mark.usefixtures("torch_ref")
def test_cdist_mm_path_gradient_at_zero_distance() -> None:
    def run(lib: Any) -> list[Any]:
        x = lib.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=lib.float64, requires_grad=True)
        y = lib.cdist(x, x, compute_mode="use_mm_for_euclid_dist")
        (g,) = lib.autograd.grad(y.sum(), x)
        return [y.detach(), g]

    got, expected = run_both(run)
    for a, b in zip(got, expected):
        assert_same_result(a, b)


def test_cdist_backward_is_not_differentiable(ng: Any) -> None:
    x = ng.tensor([[0.0, 1.0], [2.0, 0.5]], requires_grad=True)
    (g,) = ng.autograd.grad(ng.cdist(x, ng.tensor([[1.0, 1.0]]), 3).sum(), x, create_graph=True)
    assert g.grad_fn.name() == "CdistBackwardBackward0"
    with pytest.raises(NotImplementedError, match=r"the derivative for '_cdist_backward' is not implemented\."):
        g.sum().backward()


@pytest.mark.usefixtures("torch_ref")
def test_modules_match_torch() -> None:
    rng = np.random.default_rng(0)
    assert_module_matches_torch(
        lambda lib: lib.nn.Bilinear(3, 2, 4),
        [rng.standard_normal((5, 3), dtype=np.float32), rng.standard_normal((5, 2), dtype=np.float32)],
    )
    assert_module_matches_torch(
        lambda lib: lib.nn.Bilinear(3, 2, 1, bias=False, dtype=lib.float64),
        [rng.standard_normal((2, 2, 3)), rng.standard_normal((2, 2, 2))],
    )
    assert_module_matches_torch(
        lambda lib: lib.nn.CosineEmbeddingLoss(margin=0.3, reduction="sum"),
        [rng.standard_normal((4, 3)), rng.standard_normal((4, 3)), np.array(_TARGET)],
        requires_grad=[True, True, False],
    )


@pytest.mark.usefixtures("torch_ref")
def test_bilinear_init_bound_and_legacy_loss_arguments() -> None:
    def run(lib: Any) -> list[Any]:
        lib.manual_seed(0)
        m = lib.nn.Bilinear(4, 2, 3)
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
            loss = lib.nn.CosineEmbeddingLoss(reduce=False)
        return [bool(m.weight.abs().max() <= 0.5), bool(m.bias.abs().max() <= 0.5), loss.reduction]

    got, expected = run_both(run)
    assert got == expected


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: _F(lib).bilinear(lib.ones(2, 3), lib.ones(2, 4, 1), lib.ones(5, 3, 4)),
        lambda lib: _F(lib).bilinear(lib.ones(2, 3), lib.ones(3, 4), lib.ones(5, 3, 4)),
        lambda lib: _F(lib).bilinear(lib.ones(2, 2), lib.ones(2, 4), lib.ones(5, 3, 4)),
        lambda lib: _F(lib).bilinear(lib.ones(2, 3), lib.ones(2, 5), lib.ones(5, 3, 4)),
        lambda lib: _F(lib).bilinear(lib.ones(2, 3), lib.ones(2, 4), lib.ones(5, 3, 4), lib.ones(6)),
        lambda lib: _F(lib).bilinear(lib.ones(2, 3), lib.ones(2, 4), lib.ones(5, 3, 4, 1)),
        lambda lib: _F(lib).bilinear(lib.ones(()), lib.ones(()), lib.ones(5, 3, 4)),
        lambda lib: _F(lib).bilinear(lib.ones(2, 3), lib.ones(2, 4), lib.ones(5, 3, 4, dtype=lib.float64)),
        lambda lib: _F(lib).bilinear(None, lib.ones(2, 4), lib.ones(5, 3, 4)),
        lambda lib: lib.nn.Bilinear(0, 2, 3),
        lambda lib: lib.cdist(lib.ones(3), lib.ones(3, 3)),
        lambda lib: lib.cdist(lib.ones(3, 3), lib.ones(3, 4)),
        lambda lib: lib.cdist(lib.ones(3, 3), lib.ones(3, 3), -1),
        lambda lib: lib.cdist(lib.ones(3, 3), lib.ones(3, 3), compute_mode="mm"),
        lambda lib: lib.cdist(lib.ones(3, 3, dtype=lib.int64), lib.ones(3, 3, dtype=lib.int64)),
        lambda lib: lib.cdist(lib.ones(3, 3), lib.ones(3, 3, dtype=lib.float64)),
        lambda lib: lib.cdist(lib.ones(30, 3), lib.ones(3, 3, dtype=lib.float64)),
        lambda lib: lib.cdist(lib.ones(3, 3, dtype=lib.float16), lib.ones(3, 3, dtype=lib.float16)),
        lambda lib: lib.cdist(lib.ones(2, 3, 3), lib.ones(3, 4, 3)),
        lambda lib: lib.cdist(None, lib.ones(3, 3)),
        lambda lib: _F(lib).cosine_embedding_loss(lib.ones(4, 3), lib.ones(4, 3), lib.ones(4, 1)),
        lambda lib: _F(lib).cosine_embedding_loss(lib.ones(4), lib.ones(4, 3), lib.ones(4)),
        lambda lib: _F(lib).cosine_embedding_loss(lib.ones(4, 3), lib.ones(4), lib.ones(())),
        lambda lib: _F(lib).cosine_embedding_loss(lib.ones(4, 3), lib.ones(4, 3), lib.ones(4), reduction="foo"),
        lambda lib: _F(lib).cosine_embedding_loss(None, lib.ones(4, 3), lib.ones(4)),
    ],
)
def test_errors_match_torch(ng: Any, fn: Any) -> None:
    assert_same_error(fn)
