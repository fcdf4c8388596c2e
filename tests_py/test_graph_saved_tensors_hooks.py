"""Saved-tensor hooks: saved_tensors_hooks / save_on_cpu / disable_saved_tensors_hooks,
the private push/pop/disable functions, per-SavedTensor register_hooks and their
errors."""

from __future__ import annotations

import re

import numpy as np
import pytest

from oracle import assert_close, from_np, run_both, to_np

X = np.array([1.0, 2.0, 3.0], dtype=np.float32)
Y = np.array([2.0, 3.0, 4.0], dtype=np.float32)

PACK_IN_PLACE = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input "
    "to pack hook cannot be modified by in-place operations as this can lead to "
    "unexpected side-effects. Please open an issue if you need to perform in-place "
    "operations on the input to a pack hook."
)
UNPACK_NOT_TENSOR = "Output of saved tensor unpack_hook expected to be a Tensor but got result of type"
ALREADY_SET = (
    "Calling register_hooks on a saved tensor whose hooks have already been set. "
    "Hint: only one pair of hooks is allowed at a time."
)
FREED = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
    "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you "
    "need to access saved variables after calling backward."
)
NONE_VALUE = "Calling register_hooks on a saved tensor with value None is forbidden"
VERSION_ERROR = "one of the variables needed for gradient computation has been modified by an inplace operation"


def counting_hooks(log):
    def pack(t):
        log.append("pack")
        return t.detach()

    def unpack(p):
        log.append("unpack")
        return p

    return pack, unpack


# ----------------------------------------------------------------------------------
# Pack / unpack counts


PROGRAMS = {
    # name: (program, packs at forward, unpacks per backward)
    "(x*y).sum()": (lambda lib, x, y: (x * y).sum(), 2, 2),
    "x.pow(2)": (lambda lib, x, y: x.pow(2).sum(), 1, 1),
    "x.exp()": (lambda lib, x, y: x.exp().sum(), 1, 1),
    "x*2": (lambda lib, x, y: (x * 2).sum(), 0, 0),  # wrapped numbers are never packed
    "x+y": (lambda lib, x, y: (x + y).sum(), 0, 0),
    "x/y": (lambda lib, x, y: (x / y).sum(), 2, 2),
    "x**y": (lambda lib, x, y: (x**y).sum(), 3, 3),  # self, exponent, result
    "tanh": (lambda lib, x, y: x.tanh().sum(), 1, 1),
    "sigmoid": (lambda lib, x, y: x.sigmoid().sum(), 1, 1),
    "relu": (lambda lib, x, y: x.relu().sum(), 1, 1),
    "sqrt": (lambda lib, x, y: x.sqrt().sum(), 1, 1),
    "log": (lambda lib, x, y: x.log().sum(), 1, 1),
    "max": (lambda lib, x, y: x.max(), 2, 2),
    "mean": (lambda lib, x, y: x.mean(), 0, 0),
    "cat": (lambda lib, x, y: lib.cat([x, y]).sum(), 0, 0),
    "mm": (lambda lib, x, y: x.view(1, 3).mm(y.view(3, 1)).sum(), 2, 2),
    "chain": (lambda lib, x, y: (x.exp() * y.sin()).sum(), 4, 4),
}


def _count_program(lib, name):
    program = PROGRAMS[name][0]
    log = []
    x = from_np(lib, X, requires_grad=True)
    y = from_np(lib, Y, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(*counting_hooks(log)):
        out = program(lib, x, y)
    packs = len(log)
    out.backward(retain_graph=True)
    first = len(log) - packs
    out.backward()
    second = len(log) - packs - first
    return packs, first, second, log.count("pack"), to_np(x.grad).tolist()


@pytest.mark.usefixtures("torch_ref")
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_pack_and_unpack_counts_match_torch(ng, name):
    got, expected = run_both(lambda lib: _count_program(lib, name))
    # Counts exactly; gradients to float32 rounding (NumPy's and torch's SIMD
    # transcendentals may differ in the last bit).
    assert got[:4] == expected[:4]
    assert np.allclose(got[4], expected[4], rtol=1e-5, atol=0)
    _, packs, unpacks = PROGRAMS[name]
    assert got[:4] == (packs, unpacks, unpacks, packs)  # no pack during backward


def test_unpack_on_every_access(ng):
    log = []
    x = from_np(ng, X, requires_grad=True)
    with ng.autograd.graph.saved_tensors_hooks(*counting_hooks(log)):
        y = x.pow(2)
        z = x.exp()
    assert log == ["pack", "pack"]
    a = y.grad_fn._saved_self
    b = y.grad_fn._saved_self
    r = z.grad_fn._saved_result
    assert log == ["pack", "pack", "unpack", "unpack", "unpack"]
    assert a is not b
    assert_close(a, X)
    assert_close(r, np.exp(X))
    y.sum().backward()
    assert log.count("unpack") == 4
    assert_close(x.grad, 2 * X)


def test_pack_under_no_grad_unpack_under_current_mode(ng):
    modes = []
    x = from_np(ng, X, requires_grad=True)

    def pack(t):
        modes.append(("pack", ng.is_grad_enabled()))
        return t.detach()

    def unpack(p):
        modes.append(("unpack", ng.is_grad_enabled()))
        return p

    with ng.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = x.pow(2)
    _ = y.grad_fn._saved_self
    y.sum().backward()
    assert modes == [("pack", False), ("unpack", True), ("unpack", False)]


# ----------------------------------------------------------------------------------
# What the hooks receive and what unpacking returns


def _identity_facts(lib):
    x = from_np(lib, X, requires_grad=True)
    y = from_np(lib, Y, requires_grad=True)
    c = from_np(lib, Y)
    packed, unpacked = [], []

    def pack(t):
        packed.append(t)
        return t.detach()

    def unpack(p):
        unpacked.append(p)
        return p

    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        p = x.pow(2)
        e = x.exp()
        x * y
        mc = x * c
    facts = {
        "pow packs x itself": packed[0] is x,
        "exp packs its output itself": packed[1] is e,
        "output packed with its grad_fn": packed[1].grad_fn is e.grad_fn,
        "mul packs other then self": [packed[2] is y, packed[3] is x],
        "mul by a no-grad tensor packs it": packed[4] is c,
        "pack count": len(packed),
    }
    s = p.grad_fn._saved_self
    facts["unpacked leaf is a new tensor"] = s is not x and s is not unpacked[-1]
    facts["unpacked leaf keeps leaf-ness"] = (s.is_leaf, s.requires_grad, s.grad_fn)
    r = e.grad_fn._saved_result
    facts["unpacked output"] = (
        r is e,
        r is unpacked[-1],
        r.grad_fn is e.grad_fn,
        r.data_ptr() == unpacked[-1].data_ptr(),
    )
    o = mc.grad_fn._saved_other
    facts["no-grad tensor unpacked as is"] = o is unpacked[-1]
    facts["_saved_self of x*c is None"] = mc.grad_fn._saved_self is None
    # without hooks the original leaf object is returned, but never the output
    facts["no hooks: _saved_self is x"] = x.pow(2).grad_fn._saved_self is x
    e2 = x.exp()
    facts["no hooks: _saved_result is not the output"] = e2.grad_fn._saved_result is not e2
    return facts


@pytest.mark.usefixtures("torch_ref")
def test_identity_of_packed_and_unpacked_tensors(ng):
    got, expected = run_both(_identity_facts)
    assert got == expected
    assert got == {
        "pow packs x itself": True,
        "exp packs its output itself": True,
        "output packed with its grad_fn": True,
        "mul packs other then self": [True, True],
        "mul by a no-grad tensor packs it": True,
        "pack count": 5,
        "unpacked leaf is a new tensor": True,
        "unpacked leaf keeps leaf-ness": (True, True, None),
        "unpacked output": (False, False, True, True),
        "no-grad tensor unpacked as is": True,
        "_saved_self of x*c is None": True,
        "no hooks: _saved_self is x": True,
        "no hooks: _saved_result is not the output": True,
    }


# ----------------------------------------------------------------------------------
# Nesting, scope, value-changing hooks, save_on_cpu


def _nesting(lib):
    log = []
    x = from_np(lib, X, requires_grad=True)

    def hooks(tag):
        return (
            lambda t: log.append(f"{tag} pack") or t.detach(),
            lambda p: log.append(f"{tag} unpack") or p,
        )

    sth = lib.autograd.graph.saved_tensors_hooks
    with sth(*hooks("outer")):
        with sth(*hooks("inner")):
            y = x.sin()
        z = y.cos()
    w = z.exp()  # outside: no hooks
    log.append("forward done")
    w.sum().backward()
    return log, to_np(x.grad).tolist()


@pytest.mark.usefixtures("torch_ref")
def test_nesting_innermost_wins_and_leaving_keeps_saved(ng):
    got, expected = run_both(_nesting)
    assert (
        got[0]
        == expected[0]
        == [
            "inner pack",
            "outer pack",
            "forward done",
            "outer unpack",
            "inner unpack",
        ]
    )
    assert np.allclose(got[1], expected[1], rtol=1e-5, atol=0)


def test_numpy_round_trip_hooks_give_correct_gradients(ng):
    def grads(with_hooks):
        x = from_np(ng, X, requires_grad=True)
        y = from_np(ng, Y, requires_grad=True)

        def compute():
            return ((x * y).sin() * x.exp() / y).sum()

        if with_hooks:

            def pack(t):
                return np.array(t.detach().numpy(), copy=True)

            def unpack(a):
                return ng.from_numpy(a)

            with ng.autograd.graph.saved_tensors_hooks(pack, unpack):
                out = compute()
        else:
            out = compute()
        out.backward()
        return to_np(x.grad), to_np(y.grad)

    hooked, plain = grads(True), grads(False)
    np.testing.assert_allclose(hooked[0], plain[0], rtol=1e-6)
    np.testing.assert_allclose(hooked[1], plain[1], rtol=1e-6)
    expected_x = (np.cos(X * Y) * Y + np.sin(X * Y)) * np.exp(X) / Y
    np.testing.assert_allclose(hooked[0], expected_x, rtol=1e-5)


def test_hooks_can_change_the_saved_value(ng):
    x = from_np(ng, X, requires_grad=True)
    with ng.autograd.graph.saved_tensors_hooks(lambda t: t.detach() * 10, lambda p: p):
        y = x.pow(2)
    y.sum().backward()
    assert_close(x.grad, 2 * 10 * X)


@pytest.mark.parametrize("kwargs", [{}, {"pin_memory": False}])
def test_save_on_cpu(ng, kwargs):
    graph = ng.autograd.graph
    assert issubclass(graph.save_on_cpu, graph.saved_tensors_hooks)
    x = from_np(ng, X, requires_grad=True)
    y = from_np(ng, Y, requires_grad=True)
    with graph.save_on_cpu(**kwargs):
        prod_1 = x * y
        out = (prod_1.exp() * x).sum()
    assert_close(prod_1.grad_fn._saved_self, X)
    out.backward()
    e = np.exp(X * Y)
    assert_close(x.grad, e * Y * X + e, rtol=1e-5)
    assert_close(y.grad, e * X * X, rtol=1e-5)


# ----------------------------------------------------------------------------------
# disable_saved_tensors_hooks and the private functions


def test_disable_makes_entering_hooks_raise_the_message(ng):
    graph = ng.autograd.graph
    with graph.disable_saved_tensors_hooks("hooks are off here"):
        with (
            pytest.raises(RuntimeError) as info,
            graph.saved_tensors_hooks(lambda t: t, lambda t: t),
        ):
            pass
        assert str(info.value) == "hooks are off here"
        with (
            pytest.raises(RuntimeError, match="^hooks are off here$"),
            graph.save_on_cpu(),
        ):
            pass
    # enabled again: hooks work
    log = []
    x = from_np(ng, X, requires_grad=True)
    with graph.saved_tensors_hooks(*counting_hooks(log)):
        x.pow(2)
    assert log == ["pack"]


def test_disable_nesting_restores_outer_message(ng):
    graph = ng.autograd.graph
    get = ng._C._autograd._saved_tensors_hooks_get_disabled_error_message
    assert get() is None
    with graph.disable_saved_tensors_hooks("outer"):
        assert get() == "outer"
        with graph.disable_saved_tensors_hooks("inner"):
            assert get() == "inner"
            with pytest.raises(RuntimeError, match="^inner$"):
                graph.saved_tensors_hooks(lambda t: t, lambda t: t).__enter__()
        assert get() == "outer"
        with pytest.raises(RuntimeError, match="^outer$"):
            graph.saved_tensors_hooks(lambda t: t, lambda t: t).__enter__()
    assert get() is None


def test_disable_while_hooks_are_active_raises(ng):
    """torch 2.13: disabling while a saved_tensors_hooks pair is active raises the
    message at once; the outer hooks stay active and the state is restored."""
    graph = ng.autograd.graph
    get = ng._C._autograd._saved_tensors_hooks_get_disabled_error_message
    log = []
    x = from_np(ng, X, requires_grad=True)
    with graph.saved_tensors_hooks(*counting_hooks(log)):
        with (
            pytest.raises(RuntimeError) as info,
            graph.disable_saved_tensors_hooks("cannot disable now"),
        ):
            pytest.fail("the body must not run")
        assert str(info.value) == "cannot disable now"
        assert get() is None
        x.pow(2)
    assert log == ["pack"]
    x.pow(2)
    assert log == ["pack"]


def test_private_push_pop_functions(ng):
    A = ng._C._autograd
    log = []
    x = from_np(ng, X, requires_grad=True)
    A._push_saved_tensors_default_hooks(*counting_hooks(log))
    try:
        y = x.pow(2)
    finally:
        A._pop_saved_tensors_default_hooks()
    x.pow(2)
    assert log == ["pack"]
    y.sum().backward()
    assert log == ["pack", "unpack"]


def test_private_disable_enable_functions(ng):
    A = ng._C._autograd
    assert A._saved_tensors_hooks_get_disabled_error_message() is None
    A._saved_tensors_hooks_disable("private message")
    try:
        assert A._saved_tensors_hooks_get_disabled_error_message() == "private message"
        with pytest.raises(RuntimeError, match="^private message$"):
            A._push_saved_tensors_default_hooks(lambda t: t, lambda t: t)
    finally:
        A._saved_tensors_hooks_enable()
    assert A._saved_tensors_hooks_get_disabled_error_message() is None


# ----------------------------------------------------------------------------------
# Errors of default hooks


@pytest.mark.parametrize("target", ["leaf", "non-leaf"])
def test_pack_hook_modifying_its_input_in_place(ng, target):
    x = from_np(ng, X, requires_grad=True)
    a = x if target == "leaf" else x.clone()

    def pack(t):
        t.mul_(2)  # pack runs under no_grad, so this is allowed even on a leaf
        return t.detach()

    with (
        pytest.raises(RuntimeError) as info,
        ng.autograd.graph.saved_tensors_hooks(pack, lambda p: p),
    ):
        a.pow(2)
    assert str(info.value) == PACK_IN_PLACE


@pytest.mark.parametrize(
    "result, type_name",
    [(lambda p: 3, "int"), (lambda p: None, "NoneType"), (lambda p: [p], "list")],
)
def test_unpack_hook_returning_a_non_tensor(ng, result, type_name):
    x = from_np(ng, X, requires_grad=True)
    with ng.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), result):
        y = x.pow(2)
    with pytest.raises(TypeError, match=re.escape(f"{UNPACK_NOT_TENSOR} {type_name}")):
        _ = y.grad_fn._saved_self
    with pytest.raises(TypeError, match=re.escape(f"{UNPACK_NOT_TENSOR} {type_name}")):
        y.sum().backward()


def _mutate_after_save(lib, hooks):
    x = from_np(lib, X, requires_grad=True)
    a = x.clone()
    if hooks == "none":
        y = a.pow(2)
    else:
        pack = {"clone": lambda t: t.clone(), "detach": lambda t: t.detach()}[hooks]
        with lib.autograd.graph.saved_tensors_hooks(pack, lambda p: p):
            y = a.pow(2)
    a.mul_(10)
    try:
        y.sum().backward()
    except RuntimeError as e:
        return "error: " + str(e)[: len(VERSION_ERROR)]
    return to_np(x.grad).tolist()


@pytest.mark.usefixtures("torch_ref")
@pytest.mark.parametrize(
    "hooks, expected",
    [
        ("none", "error: " + VERSION_ERROR),
        ("clone", (2 * X).tolist()),  # no version check; the copy has the old values
        ("detach", (2 * 10 * X).tolist()),  # no version check; shares the new values
    ],
)
def test_default_hooks_skip_the_version_check(ng, hooks, expected):
    got, ref = run_both(lambda lib: _mutate_after_save(lib, hooks))
    assert got == ref == expected


# ----------------------------------------------------------------------------------
# Per-saved-tensor hooks: grad_fn._raw_saved_x.register_hooks(pack, unpack)


def test_register_hooks_on_a_saved_tensor(ng):
    x = from_np(ng, X, requires_grad=True)
    y = x.pow(2)
    raw = y.grad_fn._raw_saved_self
    log = []

    def pack(t):
        log.append(("pack", t is x, t.requires_grad, t.grad_fn))
        return t.detach().clone()

    def unpack(p):
        log.append("unpack")
        return p * 3

    assert raw.register_hooks(pack, unpack) is None
    assert log == [("pack", False, False, None)]  # called at once, with a detached tensor
    assert_close(y.grad_fn._saved_self, 3 * X)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert log[1:] == ["unpack"] * 3
    assert_close(x.grad, 2 * 2 * 3 * X)


def test_register_hooks_on_a_saved_output(ng):
    x = from_np(ng, X, requires_grad=True)
    y = x.exp()
    received = []
    y.grad_fn._raw_saved_result.register_hooks(
        lambda t: received.append((t is y, t.requires_grad)) or t.detach().clone(),
        lambda p: p,
    )
    assert received == [(False, False)]
    r = y.grad_fn._saved_result
    assert r.grad_fn is y.grad_fn
    y.sum().backward()
    assert_close(x.grad, np.exp(X), rtol=1e-6)


def test_register_hooks_twice(ng):
    x = from_np(ng, X, requires_grad=True)
    y = x.pow(2)
    raw = y.grad_fn._raw_saved_self
    raw.register_hooks(lambda t: t.clone(), lambda p: p)
    with pytest.raises(RuntimeError) as info:
        raw.register_hooks(lambda t: t.clone(), lambda p: p)
    assert str(info.value) == ALREADY_SET


def test_register_hooks_after_default_hooks(ng):
    x = from_np(ng, X, requires_grad=True)
    with ng.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda p: p):
        y = x.pow(2)
    with pytest.raises(RuntimeError) as info:
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t.clone(), lambda p: p)
    assert str(info.value) == ALREADY_SET


def test_register_hooks_after_freed(ng):
    x = from_np(ng, X, requires_grad=True)
    y = x.pow(2)
    raw = y.grad_fn._raw_saved_self
    y.sum().backward()
    with pytest.raises(RuntimeError) as info:
        raw.register_hooks(lambda t: t.clone(), lambda p: p)
    assert str(info.value) == FREED
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        _ = y.grad_fn._saved_self


def test_register_hooks_on_none_value(ng):
    x = from_np(ng, X, requires_grad=True)
    y = x * 2  # self is not saved: other does not require grad
    assert y.grad_fn._saved_self is None
    with pytest.raises(RuntimeError) as info:
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t.clone(), lambda p: p)
    assert str(info.value) == NONE_VALUE


def test_register_hooks_pack_modifying_in_place(ng):
    x = from_np(ng, X, requires_grad=True)
    a = x.clone()
    y = a.pow(2)

    def pack(t):
        t.add_(1)
        return t

    with pytest.raises(RuntimeError) as info:
        y.grad_fn._raw_saved_self.register_hooks(pack, lambda p: p)
    assert str(info.value) == PACK_IN_PLACE


def test_register_hooks_unpack_not_a_tensor(ng):
    x = from_np(ng, X, requires_grad=True)
    y = x.pow(2)
    y.grad_fn._raw_saved_self.register_hooks(lambda t: t.clone(), lambda p: 3)
    with pytest.raises(TypeError, match=re.escape(f"{UNPACK_NOT_TENSOR} int")):
        _ = y.grad_fn._saved_self


def test_saved_tensor_cannot_be_created_from_python(ng):
    x = from_np(ng, X, requires_grad=True)
    raw = x.pow(2).grad_fn._raw_saved_self
    assert type(raw).__name__ == "SavedTensor"
    with pytest.raises(
        RuntimeError,
        match="Trying to create a SavedTensor object from Python is forbidden.",
    ):
        type(raw)()
