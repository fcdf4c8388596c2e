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
import pathlib
from typing import Any

import numpy as np
import pytest

import npgrad
from op_specs import ALL
from oracle import assert_close, from_np, to_np

TABLE = npgrad._C._op_table
INPLACE = [op for op in TABLE if op["inplace"]]
REPO = pathlib.Path(__file__).resolve().parent.parent


def _data() -> np.ndarray:
    # Inside every table op's domain (log, sqrt, log1p need x > -1 or x > 0).
    return np.random.default_rng(0).uniform(0.5, 2.0, (2, 3))


def test_every_table_op_has_spec_rows() -> None:
    specified = {spec.node for spec in ALL}
    missing = sorted(op["name"] for op in TABLE if op["node"] not in specified)
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
        x = leaf.clone()
        returned = getattr(x, op["inplace"])()
        node = type(x.grad_fn).__name__
        saved = getattr(x.grad_fn, f"_saved_{op['saves']}") if op["saves"] else None
        version = x._version
        (x * x).sum().backward()
        return returned is x, to_np(x), node, None if saved is None else to_np(saved), version, to_np(leaf.grad)

    got, expected = run(ng), run(torch_ref)
    assert got[0] and expected[0]
    assert got[2] == expected[2] == op["node"]
    assert got[4] == expected[4]
    for g, e in zip(got[1:], expected[1:]):
        if isinstance(g, np.ndarray):
            assert_close(g, e)


@pytest.mark.parametrize("op", INPLACE, ids=[op["inplace"] for op in INPLACE])
def test_inplace_form_double_backward(ng: Any, op: dict[str, Any]) -> None:
    """The node an in-place form records differentiates again (create_graph)."""
    leaf = from_np(ng, _data(), requires_grad=True)
    x = leaf.clone()
    getattr(x, op["inplace"])()
    (g,) = ng.autograd.grad(x.sum(), leaf, create_graph=True)
    (gg,) = ng.autograd.grad(g.sum(), leaf)
    eps = 1e-6
    base = _data()

    def first(values: np.ndarray) -> np.ndarray:
        t = from_np(ng, values, requires_grad=True)
        y = t.clone()
        getattr(y, op["inplace"])()
        return to_np(ng.autograd.grad(y.sum(), t)[0])

    numeric = (first(base + eps) - first(base - eps)) / (2 * eps)
    np.testing.assert_allclose(to_np(gg), numeric, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", [op for op in INPLACE if op["promotes_to_float"]], ids=lambda op: op["inplace"])
def test_inplace_form_refuses_an_integer_tensor(ng: Any, op: dict[str, Any]) -> None:
    x = ng.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        getattr(x, op["inplace"])()
    assert x._version == 0 and x.tolist() == [1, 2]


@pytest.mark.parametrize("op", TABLE, ids=[op["name"] for op in TABLE])
def test_function_and_method_refuse_none(ng: Any, op: dict[str, Any]) -> None:
    with pytest.raises(
        TypeError, match=rf"{op['name']}\(\): argument 'input' \(position 1\) must be Tensor, not NoneType"
    ):
        getattr(ng, op["name"])(None)
