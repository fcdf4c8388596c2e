"""normalize, pairwise_distance, margin_ranking_loss, triplet_margin_loss and
hinge_embedding_loss against torch: the whole graph each records, reductions and the
legacy arguments, dtypes, broadcasting, ``out=`` and errors.

Values, gradients and second order also come from their rows in op_specs.py
(NN_EXTRA).
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from oracle import assert_same_error, assert_same_result, graph_desc, run_both


def _F(lib: Any) -> Any:
    return lib.nn.functional


def _x(lib: Any, *shape: int, dtype: Any = None) -> Any:
    n = 1
    for s in shape:
        n *= s
    values = lib.arange(n, dtype=dtype or lib.float32).reshape(shape) * 0.37 - 1.1
    return values.requires_grad_()


CALLS = {
    "normalize": lambda lib: _F(lib).normalize(_x(lib, 2, 3)),
    "normalize_inf_dim0": lambda lib: _F(lib).normalize(_x(lib, 2, 3), float("inf"), 0),
    "normalize_float64_p3": lambda lib: _F(lib).normalize(_x(lib, 3, 2, dtype=lib.float64), 3, -1, eps=0.5),
    "margin_ranking": lambda lib: _F(lib).margin_ranking_loss(
        _x(lib, 4), _x(lib, 4).flip(0), lib.tensor([1.0, -1.0, 1.0, -1.0]), 0.1
    ),
    "margin_ranking_broadcast_sum": lambda lib: _F(lib).margin_ranking_loss(
        _x(lib, 2, 3), _x(lib, 1, 3), lib.tensor([[1.0], [-1.0]]), reduction="sum"
    ),
    "pairwise_distance": lambda lib: _F(lib).pairwise_distance(_x(lib, 2, 3), _x(lib, 3).flip(0)),
    "pairwise_distance_p1_keepdim": lambda lib: _F(lib).pairwise_distance(
        _x(lib, 2, 3), _x(lib, 2, 3) * 2, 1, keepdim=True
    ),
    "triplet": lambda lib: _F(lib).triplet_margin_loss(_x(lib, 2, 3), _x(lib, 2, 3) * 2, _x(lib, 2, 3).flip(1)),
    "triplet_swap_p3_sum": lambda lib: _F(lib).triplet_margin_loss(
        _x(lib, 2, 3), _x(lib, 2, 3).flip(0), _x(lib, 2, 3) * 3, margin=0.5, p=3, swap=True, reduction="sum"
    ),
    "hinge": lambda lib: _F(lib).hinge_embedding_loss(_x(lib, 2, 3), lib.tensor([[1, -1, 0], [-1, 1, 1]])),
    "hinge_margin_sum": lambda lib: _F(lib).hinge_embedding_loss(
        _x(lib, 4), lib.tensor([1.0, -1.0, -1.0, 1.0]), margin=0.5, reduction="sum"
    ),
}


@pytest.mark.usefixtures("torch_ref")
@pytest.mark.parametrize("name", sorted(CALLS))
def test_values_and_graph_match_torch(name: str) -> None:
    got, expected = run_both(CALLS[name])
    assert_same_result(got, expected)
    assert graph_desc(got.grad_fn) == graph_desc(expected.grad_fn)


@pytest.mark.usefixtures("torch_ref")
def test_legacy_reduction_arguments_warn_and_reduce_as_torch() -> None:
    def run(lib: Any) -> list[Any]:
        out = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            x, t = _x(lib, 4), lib.tensor([1.0, -1.0, 1.0, -1.0])
            out.append(_F(lib).hinge_embedding_loss(x, t, size_average=False).item())
            out.append(_F(lib).margin_ranking_loss(x, x.flip(0), t, reduce=False).shape)
            out.append(_F(lib).triplet_margin_loss(x[None], x[None] * 2, x[None].flip(1), size_average=True).item())
        out.append([str(w.message) for w in caught])
        return out

    got, expected = run_both(run)
    assert got[:1] == pytest.approx(expected[:1])
    assert tuple(got[1]) == tuple(expected[1])
    assert got[2] == pytest.approx(expected[2])
    assert got[3] == expected[3]


@pytest.mark.usefixtures("torch_ref")
def test_normalize_out_and_zero_rows() -> None:
    def run(lib: Any) -> list[Any]:
        out = lib.empty(2, 2)
        r = _F(lib).normalize(lib.tensor([[0.0, 0.0], [3.0, -4.0]]), out=out)
        return [r is out, out.tolist(), r.requires_grad]

    got, expected = run_both(run)
    assert got == expected


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: _F(lib).normalize(lib.ones(2, 3), dim=2),
        lambda lib: _F(lib).margin_ranking_loss(lib.ones(2, 3), lib.ones(2, 3), lib.ones(3)),
        lambda lib: _F(lib).margin_ranking_loss(lib.ones(3), lib.ones(3), lib.ones(3), reduction="foo"),
        lambda lib: _F(lib).pairwise_distance(lib.ones(2, 3), lib.ones(2, 2)),
        lambda lib: _F(lib).triplet_margin_loss(lib.ones(2, 3), lib.ones(2, 3), lib.ones(3)),
        lambda lib: _F(lib).triplet_margin_loss(lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 3), margin=0),
        lambda lib: _F(lib).hinge_embedding_loss(lib.ones(2, 3), lib.ones(3, 3)),
        lambda lib: _F(lib).hinge_embedding_loss(lib.arange(3), lib.tensor([1, -1, 1])),
    ],
)
def test_errors_match_torch(ng: Any, fn: Any) -> None:
    assert_same_error(fn)
