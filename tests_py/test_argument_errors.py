"""Bool parameters take only True and False, as torch's argument parser: an int, a float
or None gets torch's "argument 'keepdim' (position 2) must be bool, not int"; the
calls torch accepts still work."""

from __future__ import annotations

from typing import Any

import pytest

from oracle import assert_same_error, run_both

REFUSED = {
    "sum_keepdim_positional": lambda lib: lib.ones(2, 3).sum(0, 1),
    "sum_keepdim_keyword": lambda lib: lib.ones(2, 3).sum(0, keepdim=1),
    "mean_keepdim_float": lambda lib: lib.ones(2, 3).mean(0, keepdim=1.0),
    "amax_keepdim_none": lambda lib: lib.ones(2, 3).amax(0, keepdim=None),
    "max_keepdim_positional": lambda lib: lib.ones(2, 3).max(0, 1),
    "logsumexp_function": lambda lib: lib.logsumexp(lib.ones(2, 3), 0, 1),
    "requires_grad_int": lambda lib: lib.ones(2).requires_grad_(1),
    "gather_sparse_grad": lambda lib: lib.ones(2).gather(0, lib.tensor([0]), sparse_grad=1),
    "topk_largest": lambda lib: lib.ones(3).topk(1, 0, largest=0),
    "scatter_reduce_include_self": lambda lib: lib.ones(3).scatter_reduce(
        0, lib.tensor([0]), lib.ones(1), "sum", include_self=1
    ),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_int_for_bool_is_refused(ng: Any, name: str) -> None:
    err = assert_same_error(REFUSED[name], key="must be bool, not ")
    assert isinstance(err, TypeError)


def test_the_message_names_the_argument(ng: Any) -> None:
    assert_same_error(
        lambda lib: lib.ones(2, 3).sum(0, 1), key="sum(): argument 'keepdim' (position 2) must be bool, not int"
    )
    assert_same_error(
        lambda lib: lib.ones(2, 3).sum(0, keepdim=0), key="sum(): argument 'keepdim' must be bool, not int"
    )
    assert_same_error(
        lambda lib: lib.ones(2).requires_grad_(0), key="argument 'requires_grad' (position 1) must be bool, not int"
    )


def test_bools_still_accepted() -> None:
    def f(lib: Any) -> list[Any]:
        x = lib.arange(6.0).reshape(2, 3)
        return [
            x.sum(0, True).tolist(),
            x.sum(1, keepdim=False).tolist(),
            x.amax(0, keepdim=True).tolist(),
            x.clone().requires_grad_(False).requires_grad,
            x.clone().requires_grad_().requires_grad,
            lib.ones(2, requires_grad=True).requires_grad,
        ]

    got, want = run_both(f)
    assert got == want
