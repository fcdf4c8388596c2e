"""nn.Module against torch: registration and attribute rules, iteration,
state_dict and its loading, repr, conversions, forward hooks and the full
backward hooks (BackwardHookFunctionBackward nodes), global hooks, copying.

Each differential test runs the same program on npgrad and on torch; weights
come from NumPy through load_state_dict (the RNG streams differ).
"""

from __future__ import annotations

import copy
import pickle
import re
import warnings
from collections import OrderedDict

import numpy as np
import pytest

from oracle import assert_same_error, from_np, graph_desc, run_both, to_np

W = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])
B = np.array([0.1, -0.2])


def _net(lib):
    """Linear(3, 2) -> ReLU -> Linear(2, 1), deterministic weights."""
    net = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.ReLU(), lib.nn.Linear(2, 1))
    state = {
        "0.weight": from_np(lib, W).float(),
        "0.bias": from_np(lib, B).float(),
        "2.weight": from_np(lib, np.array([[1.0, -2.0]])).float(),
        "2.bias": from_np(lib, np.array([0.5])).float(),
    }
    net.load_state_dict(state)
    return net


class _Block:
    """A Module subclass with a parameter, buffers and submodules (built per library)."""

    @staticmethod
    def make(lib):
        class Block(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.Parameter(lib.ones(2))
                self.register_buffer("running", lib.zeros(2))
                self.register_buffer("scratch", lib.zeros(1), persistent=False)
                self.inner = lib.nn.Sequential(lib.nn.Identity(), lib.nn.Tanh())
                self.empty = None

            def forward(self, x):
                return self.inner(x * self.w) + self.running

        return Block()


# ------------------------------------------------------------------ registration


def test_attributes_register_parameters_buffers_and_modules():
    def prog(lib):
        m = _Block.make(lib)
        m.extra = lib.nn.Parameter(lib.zeros(1))
        m.plain = lib.zeros(1)  # a plain tensor is a plain attribute
        m.b2 = lib.nn.Buffer(lib.ones(1), persistent=False)
        m.running = lib.ones(2)  # reassigning a buffer keeps it a buffer
        out = (
            [n for n, _ in m.named_parameters()],
            [n for n, _ in m.named_buffers()],
            [n for n, _ in m.named_children()],
            [n for n, _ in m.named_modules()],
            list(m.state_dict()),
            "plain" in m.__dict__,
            sorted(m._non_persistent_buffers_set),
        )
        m.extra = None  # None keeps the name registered
        del m.running
        return out, list(m._parameters.items())[-1], [n for n, _ in m.named_buffers()]

    got, expected = run_both(prog)
    assert got == expected


def test_replacing_a_plain_attribute_moves_it_between_kinds():
    def prog(lib):
        m = lib.nn.Module()
        m.x = 1
        m.x = lib.nn.Parameter(lib.ones(1))
        in_dict = "x" in m.__dict__
        del m.x
        m.x = lib.nn.ReLU()
        return in_dict, list(m._parameters), list(m._modules), "x" in dir(m)

    got, expected = run_both(prog)
    assert got == expected


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: setattr(_Block.make(lib), "w", lib.ones(2)),
        lambda lib: setattr(_Block.make(lib), "inner", 3),
        lambda lib: setattr(_Block.make(lib), "running", "x"),
        lambda lib: _Block.make(lib).register_parameter("w2", lib.ones(1)),
        lambda lib: _Block.make(lib).register_parameter("a.b", None),
        lambda lib: _Block.make(lib).register_parameter("", None),
        lambda lib: _Block.make(lib).register_parameter(1, None),
        lambda lib: _Block.make(lib).register_parameter("training", None),
        lambda lib: _Block.make(lib).register_parameter("n", lib.nn.Parameter(lib.ones(1)) * 2),
        lambda lib: _Block.make(lib).register_buffer("b", 3),
        lambda lib: _Block.make(lib).register_buffer("a.b", None),
        lambda lib: _Block.make(lib).register_buffer("w", None),
        lambda lib: _Block.make(lib).add_module("m", 3),
        lambda lib: _Block.make(lib).add_module("a.b", None),
        lambda lib: _Block.make(lib).add_module("", None),
        lambda lib: _Block.make(lib).add_module("w", None),
        lambda lib: _Block.make(lib).nothing,
        lambda lib: _Block.make(lib).get_submodule("inner.0.x"),
        lambda lib: _Block.make(lib).get_submodule("w"),
        lambda lib: _Block.make(lib).get_parameter("inner.nothing"),
        lambda lib: _Block.make(lib).get_parameter("running"),
        lambda lib: _Block.make(lib).get_buffer("w"),
        lambda lib: _Block.make(lib).set_submodule("", lib.nn.ReLU()),
        lambda lib: _Block.make(lib).set_submodule("w", lib.nn.ReLU()),
        lambda lib: _Block.make(lib).set_submodule("inner.5", lib.nn.ReLU(), strict=True),
        lambda lib: _Block.make(lib).set_submodule("inner.0", 3),
        lambda lib: lib.nn.Module()(1),
        lambda lib: lib.nn.Module(1),
        lambda lib: lib.nn.Module(x=1),
        lambda lib: lib.nn.Module().train(1),
        lambda lib: lib.nn.Linear(1, 1).to(lib.int64),
    ],
)
def test_module_errors(call):
    assert_same_error(call)


def test_assigning_before_init_errors():
    def prog(lib, what):
        class Early(lib.nn.Module):
            def __init__(self):
                if what == "param":
                    self.p = lib.nn.Parameter(lib.ones(1))
                elif what == "module":
                    self.m = lib.nn.ReLU()
                else:
                    self.register_buffer("b", lib.ones(1))

        Early()

    for what in ("param", "module", "buffer"):
        assert_same_error(lambda lib, what=what: prog(lib, what))


def test_get_and_set_submodule_parameter_buffer(ng):
    m = _Block.make(ng)
    assert m.get_submodule("") is m and m.get_submodule("inner.1") is m.inner[1]
    assert m.get_parameter("w") is m.w and m.get_buffer("running") is m.running
    relu = ng.nn.ReLU()
    m.set_submodule("inner.1", relu, strict=True)
    m.set_submodule("inner.extra", relu)
    assert m.inner[1] is relu and m.inner.extra is relu


def test_iteration_with_shared_modules_and_parameters():
    def prog(lib):
        shared = lib.nn.Linear(1, 1)
        net = lib.nn.Sequential(shared, lib.nn.ReLU(), shared)
        net[1].tied = shared.weight
        return (
            [n for n, _ in net.named_parameters()],
            [n for n, _ in net.named_parameters(remove_duplicate=False)],
            [n for n, _ in net.named_parameters(prefix="net", recurse=False)],
            [n for n, _ in net.named_modules(prefix="root")],
            [n for n, _ in net.named_modules(remove_duplicate=False)],
            [n for n, _ in net.named_children()],
            len(list(net.parameters())),
            len(list(net.modules())),
            len(list(net[1].parameters(recurse=False))),
        )

    got, expected = run_both(prog)
    assert got == expected


# ------------------------------------------------------------------ state_dict


def test_state_dict_keys_values_metadata_and_keep_vars():
    def prog(lib):
        net = _net(lib)
        sd = net.state_dict()
        kept = net.state_dict(keep_vars=True)
        prefixed = net.state_dict(prefix="model.")
        return (
            list(sd),
            [to_np(v).tolist() for v in sd.values()],
            [v.requires_grad for v in sd.values()],
            kept["0.weight"] is net[0].weight,
            list(prefixed),
            dict(sd._metadata),
            type(sd).__name__,
        )

    got, expected = run_both(prog)
    assert got == expected


def test_load_state_dict_reports_as_torch():
    def prog(lib):
        net = _net(lib)
        sd = dict(net.state_dict())
        sd["extra"] = lib.ones(1)
        sd["2.nothing"] = lib.ones(1)
        del sd["0.bias"]
        res = net.load_state_dict(sd, strict=False)
        ok = net.load_state_dict(net.state_dict())
        return repr(res), res.missing_keys, res.unexpected_keys, repr(ok), str(ok)

    got, expected = run_both(prog)
    assert got == expected


@pytest.mark.parametrize(
    "change",
    [
        lambda lib, sd: sd.pop("0.bias"),
        lambda lib, sd: sd.update(extra=lib.ones(1)),
        lambda lib, sd: sd.update({"0.weight": lib.ones(3, 3)}),
        lambda lib, sd: sd.update({"0.weight": 3}),
        lambda lib, sd: (sd.pop("2.bias"), sd.update({"0.bias": lib.ones(5), "zzz": lib.ones(1)})),
    ],
)
def test_load_state_dict_errors(change):
    def prog(lib):
        net = _net(lib)
        sd = dict(net.state_dict())
        change(lib, sd)
        net.load_state_dict(sd)

    err = assert_same_error(prog, length=400)
    assert str(err).startswith("Error(s) in loading state_dict for Sequential:")


def test_load_state_dict_copies_or_assigns():
    def prog(lib):
        net = _net(lib)
        w = net[0].weight
        new = lib.zeros(2, 3, dtype=lib.float64)
        net.load_state_dict({"0.weight": new}, strict=False)
        copied = (net[0].weight is w, str(net[0].weight.dtype), net[0].weight._version)
        net.load_state_dict({"0.weight": new}, strict=False, assign=True)
        assigned = (
            net[0].weight is w,
            type(net[0].weight).__name__,
            str(net[0].weight.dtype),
            net[0].weight.requires_grad,
        )
        scalar = lib.nn.Module()
        scalar.s = lib.nn.Parameter(lib.tensor(1.0))
        scalar.load_state_dict({"s": lib.tensor([5.0])})  # a 1-element 1-D value fills a 0-d one
        return copied, assigned, scalar.s.item()

    got, expected = run_both(prog)
    assert got == expected
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        _net(__import__("oracle").lib()).load_state_dict([1])


def test_state_dict_and_load_hooks_and_extra_state():
    def prog(lib):
        log = []

        class WithState(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.v = 1

            def get_extra_state(self):
                return {"v": self.v}

            def set_extra_state(self, state):
                self.v = state["v"]

        m = lib.nn.Sequential(WithState(), lib.nn.Linear(1, 1))
        m[0].register_state_dict_pre_hook(lambda mod, prefix, keep: log.append(("pre", prefix, keep)))
        m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: log.append(("post", list(sd))))
        m[0].register_load_state_dict_pre_hook(lambda mod, sd, prefix, *a: log.append(("lpre", prefix, list(sd))))
        m.register_load_state_dict_post_hook(lambda mod, keys: log.append(("lpost", list(keys.missing_keys))))
        sd = m.state_dict()
        sd["0._extra_state"] = {"v": 7}
        m.load_state_dict(sd)
        bad = lib.nn.Linear(1, 1)
        bad.register_state_dict_post_hook(lambda *a: {})
        try:
            bad.state_dict()
        except RuntimeError as e:
            log.append(str(e))
        missing = m.load_state_dict({}, strict=False)
        return log, m[0].v, list(sd), missing.missing_keys

    got, expected = run_both(prog)
    assert got == expected


# ------------------------------------------------------------------ repr


def test_repr_as_torch():
    def prog(lib):
        class Custom(lib.nn.Module):
            def extra_repr(self):
                return "a=1\nb=2"

        net = lib.nn.Sequential(
            OrderedDict(
                fc=lib.nn.Linear(3, 2, bias=False),
                body=lib.nn.ModuleList([lib.nn.ReLU(), lib.nn.ReLU(), lib.nn.Linear(1, 1), lib.nn.Tanh()]),
                d=lib.nn.ModuleDict({"drop": lib.nn.Dropout(0.1)}),
                c=Custom(),
                e=lib.nn.Sequential(),
            )
        )
        c2 = Custom()
        c2.child = lib.nn.Identity()
        return repr(net), repr(c2), repr(lib.nn.Module()), repr(lib.nn.ModuleList())

    got, expected = run_both(prog)
    assert got == expected


# ------------------------------------------------------------------ state changes


def test_train_eval_requires_grad_zero_grad():
    def prog(lib):
        net = _net(lib)
        out = [net.eval() is net, [m.training for m in net.modules()]]
        net.train()
        out.append(all(m.training for m in net.modules()))
        net(lib.ones(1, 3)).sum().backward()
        net.zero_grad(set_to_none=False)
        out.append([to_np(p.grad).tolist() for p in net.parameters()])
        net.zero_grad()
        out.append([p.grad for p in net.parameters()])
        net.requires_grad_(False)
        out.append([p.requires_grad for p in net.parameters()])
        return out

    got, expected = run_both(prog)
    assert got == expected


def test_dtype_conversions_keep_the_parameter_objects():
    def prog(lib):
        net = _net(lib)
        net[0].register_buffer("count", lib.zeros(1, dtype=lib.int64))
        w = net[0].weight
        net(lib.ones(1, 3)).sum().backward()
        out = []
        for convert in (
            lambda: net.double(),
            lambda: net.float(),
            lambda: net.to(lib.float64),
            lambda: net.to(dtype=lib.float32),
            lambda: net.type(lib.float64),
            lambda: net.half(),
            lambda: net.bfloat16(),
            lambda: net.to(lib.ones(1, dtype=lib.float64)),
            lambda: net.cpu(),
        ):
            assert convert() is net
            out.append((net[0].weight is w, str(w.dtype), str(w.grad.dtype), str(net[0].count.dtype)))
        return out

    got, expected = run_both(prog)
    assert got == expected


def test_bfloat16_module_forward_and_backward_match_torch():
    """Module.bfloat16 casts the floating parameters; the forward and the
    gradients then match torch's bfloat16 to its precision (8 bits)."""

    def prog(lib):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.GELU(), lib.nn.LayerNorm(8), lib.nn.Linear(8, 2))
        net.load_state_dict({k: lib.tensor(v) for k, v in _weights(lib, net).items()})
        net.bfloat16()
        x = lib.tensor(np.linspace(-1, 1, 12).reshape(3, 4), dtype=lib.bfloat16)
        out = net(x)
        out.sum().backward()
        return out, net[0].weight.grad, net[3].bias.grad

    got, expected = run_both(prog)
    for g, e in zip(got, expected):
        assert str(g.dtype) == str(e.dtype) == "torch.bfloat16"
        np.testing.assert_allclose(to_np(g).astype(np.float64), to_np(e).astype(np.float64), rtol=2e-2, atol=2e-2)


def _weights(lib, net):
    """Fixed weights for net's parameters, the same in both libraries."""
    rng = np.random.default_rng(3)
    return {k: rng.uniform(-0.5, 0.5, tuple(v.shape)).astype(np.float32) for k, v in net.state_dict().items()}


def test_apply_and_dir():
    def prog(lib):
        net = _net(lib)
        seen = []
        net.apply(lambda m: seen.append(type(m).__name__))
        d = dir(net[0])
        return seen, [k for k in ("weight", "bias", "forward", "training", "_parameters") if k in d], "0" in dir(net)

    got, expected = run_both(prog)
    assert got == expected


def test_deepcopy_and_pickle(ng):
    net = _net(ng)
    net[0].register_buffer("count", ng.zeros(1))
    c = copy.deepcopy(net)
    assert type(c[0].weight) is ng.nn.Parameter and c[0].weight is not net[0].weight
    assert c[0].weight.data_ptr() != net[0].weight.data_ptr()
    x = ng.ones(2, 3)
    assert to_np(c(x)).tolist() == to_np(net(x)).tolist()
    p = pickle.loads(pickle.dumps(net))
    assert repr(p) == repr(net) and to_np(p(x)).tolist() == to_np(net(x)).tolist()
    assert [n for n, _ in p.named_buffers()] == ["0.count"]


# ------------------------------------------------------------------ forward hooks


def test_forward_hooks_order_results_and_kwargs():
    def prog(lib):
        log = []

        class Add(lib.nn.Module):
            def forward(self, x, y=0):
                return x + y

        m = Add()
        m.register_forward_pre_hook(lambda mod, args: log.append(("pre", len(args))))
        m.register_forward_pre_hook(lambda mod, args: (args[0] * 10,), prepend=True)
        m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"y": kwargs.get("y", 0) + 1}), with_kwargs=True)
        h = m.register_forward_hook(lambda mod, args, out: out * 2)
        m.register_forward_hook(lambda mod, args, kwargs, out: log.append(("kw", sorted(kwargs))), with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: log.append(("first", out.item())), prepend=True)
        r1 = m(lib.tensor(1.0), y=lib.tensor(2.0)).item()
        h.remove()
        r2 = m(lib.tensor(1.0)).item()
        return log, r1, r2

    got, expected = run_both(prog)
    assert got == expected


def test_forward_pre_hook_with_kwargs_must_return_a_pair():
    def prog(lib):
        m = lib.nn.Identity()
        m.register_forward_pre_hook(lambda mod, args, kwargs: 1, with_kwargs=True)
        m(lib.ones(1))

    assert_same_error(prog)


def test_always_call_hooks_run_when_forward_raises():
    def prog(lib):
        log = []

        class Fails(lib.nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        m = Fails()
        m.register_forward_hook(lambda mod, args, out: log.append("plain"))
        m.register_forward_hook(lambda mod, args, out: log.append(("always", out)), always_call=True)

        def bad(mod, args, out):
            raise KeyError("hook")

        m.register_forward_hook(bad, always_call=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                m(lib.ones(1))
            except ValueError as e:
                log.append(str(e))
        log.append([str(x.message) for x in w])
        return log

    got, expected = run_both(prog)
    assert got == expected


def test_global_forward_hooks():
    def prog(lib):
        from importlib import import_module

        mm = import_module(lib.__name__ + ".nn.modules.module")
        log = []
        handles = [
            mm.register_module_forward_pre_hook(lambda mod, args: log.append(("gpre", type(mod).__name__))),
            mm.register_module_forward_hook(lambda mod, args, out: out + 1),
            mm.register_module_forward_hook(lambda mod, args, out: log.append("gpost"), always_call=True),
        ]
        m = lib.nn.Identity()
        m.register_forward_pre_hook(lambda mod, args: log.append("local pre"))
        try:
            r = m(lib.zeros(1)).item()
        finally:
            for h in handles:
                h.remove()
        return log, r, m(lib.zeros(1)).item()

    got, expected = run_both(prog)
    assert got == expected


# ------------------------------------------------------------------ backward hooks


def _record_backward(lib, x_requires_grad=True, change_input=False, change_output=False):
    log = []
    net = _net(lib)
    fc = net[0]

    def pre(mod, grad_output):
        log.append(("pre", [to_np(g).round(6).tolist() for g in grad_output]))
        return (grad_output[0] * 2,) if change_output else None

    def post(mod, grad_input, grad_output):
        log.append(
            (
                "post",
                [None if g is None else to_np(g).round(6).tolist() for g in grad_input],
                [to_np(g).round(6).tolist() for g in grad_output],
            )
        )
        return (grad_input[0] * 0,) if change_input else None

    fc.register_full_backward_pre_hook(pre)
    fc.register_full_backward_hook(post)
    x = from_np(lib, np.array([[1.0, 2.0, -1.0]], dtype=np.float32), requires_grad=x_requires_grad)
    y = net(x)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y.sum().backward()
    grads = [to_np(p.grad).round(6).tolist() for p in fc.parameters()]
    xg = None if not x_requires_grad else to_np(x.grad).round(6).tolist()
    return log, grads, xg, graph_desc(y.grad_fn), [str(m.message)[:60] for m in w]


@pytest.mark.parametrize(
    "kw",
    [{}, {"change_input": True}, {"change_output": True}, {"x_requires_grad": False}],
)
def test_full_backward_hooks(kw):
    got, expected = run_both(lambda lib: _record_backward(lib, **kw))
    assert got == expected


def test_backward_hook_nodes_and_tuple_outputs():
    def prog(lib):
        class Split(lib.nn.Module):
            def forward(self, a, n, b):
                return a * 2, n, b * 3

        m = Split()
        log = []
        m.register_full_backward_hook(
            lambda mod, gi, go: log.append(([g is None for g in gi], [g is None for g in go]))
        )
        a = lib.ones(2, requires_grad=True)
        b = lib.ones(2)
        out = m(a, 5, b)
        names = [t.grad_fn.name() if isinstance(t, lib.Tensor) and t.grad_fn is not None else None for t in out]
        (out[0].sum() + out[2].sum()).backward()
        return names, out[1], log, to_np(a.grad).tolist(), graph_desc(out[0].grad_fn)

    got, expected = run_both(prog)
    assert got == expected


def _hooked(lib, hook=None, pre=None):
    """A module computing ``x * 1`` with the given full backward hooks."""

    class Mul(lib.nn.Module):
        def forward(self, x):
            return x * 1

    m = Mul()
    m.register_full_backward_hook(hook or (lambda mod, gi, go: None))
    if pre is not None:
        m.register_full_backward_pre_hook(pre)
    return m


@pytest.mark.parametrize(
    "call",
    [
        # in place on an output of BackwardHookFunction (the input returned as is)
        lambda lib: _hooked_out(lib).add_(1),
        # a hook returning the wrong number of gradients
        lambda lib: _hooked(lib, hook=lambda m, gi, go: (None, None))(lib.ones(2, requires_grad=True)).sum().backward(),
        lambda lib: _hooked(lib, pre=lambda m, go: (go[0], go[0]))(lib.ones(2, requires_grad=True)).sum().backward(),
    ],
)
def test_backward_hook_errors(call):
    assert_same_error(call)


def _hooked_out(lib):
    m = lib.nn.Identity()
    m.register_full_backward_hook(lambda mod, gi, go: None)
    return m(lib.ones(2, requires_grad=True))


def test_global_backward_hooks():
    def prog(lib):
        from importlib import import_module

        mm = import_module(lib.__name__ + ".nn.modules.module")
        log = []
        h1 = mm.register_module_full_backward_pre_hook(lambda mod, go: log.append(("gpre", type(mod).__name__)))
        h2 = mm.register_module_full_backward_hook(lambda mod, gi, go: log.append(("gpost", type(mod).__name__)))
        try:
            x = lib.ones(1, 3, requires_grad=True)
            _net(lib)(x).sum().backward()
        finally:
            h1.remove()
            h2.remove()
        return log

    got, expected = run_both(prog)
    assert got == expected


def test_no_hooks_means_no_extra_nodes():
    def prog(lib):
        return graph_desc(_net(lib)(lib.ones(1, 3)).grad_fn)

    got, expected = run_both(prog)
    assert got == expected


def _non_full_hook_run(lib, build, x_requires_grad=True):
    """Runs build(lib) with a non-full backward hook; returns what the hook saw
    (grad_input, grad_output as NumPy, None kept) and the warnings."""
    lib.manual_seed(0)
    module = build(lib)
    seen = []
    module.register_backward_hook(
        lambda m, gi, go: seen.append(
            (type(m).__name__, [None if g is None else to_np(g) for g in gi], [to_np(g) for g in go])
        )
    )
    x = lib.tensor([[1.0, -2.0, 3.0], [0.5, 0.0, -1.0]], requires_grad=x_requires_grad)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = module(x)
    out.backward(lib.ones_like(out))
    return seen, [(w.category.__name__, str(w.message)) for w in caught]


@pytest.mark.parametrize(
    "build",
    [lambda L: L.nn.Tanh(), lambda L: L.nn.Sigmoid(), lambda L: L.nn.Linear(3, 2)],
    ids=["tanh", "sigmoid", "linear"],
)
def test_non_full_backward_hook_sees_the_output_node_gradients_as_torch(torch_ref, build):
    import npgrad

    got, got_warnings = _non_full_hook_run(npgrad, build)
    want, want_warnings = _non_full_hook_run(torch_ref, build)
    assert got_warnings == want_warnings
    assert len(got) == len(want) == 1
    assert got[0][0] == want[0][0]
    for side in (1, 2):
        assert [None if g is None else g.shape for g in got[0][side]] == [
            None if g is None else g.shape for g in want[0][side]
        ]
    # Linear's weights are random: compare the values of the weightless modules.
    if got[0][0] != "Linear":
        np.testing.assert_allclose(got[0][1][0], want[0][1][0], rtol=1e-5)


def test_full_and_non_full_backward_hooks_do_not_mix(ng):
    m = ng.nn.Tanh()
    m.register_backward_hook(lambda *a: None)
    message = (
        "Cannot use both regular backward hooks and full backward hooks on a single Module. "
        "Please use only one of them."
    )
    with pytest.raises(RuntimeError, match=re.escape(message)):
        m.register_full_backward_hook(lambda *a: None)
    m2 = ng.nn.Tanh()
    m2.register_full_backward_hook(lambda *a: None)
    with pytest.raises(RuntimeError, match=re.escape(message)):
        m2.register_backward_hook(lambda *a: None)


def test_global_non_full_backward_hook(ng):
    from importlib import import_module

    module_mod = import_module(f"{ng.__name__}.nn.modules.module")
    # The global kind (full or not) is set by the first registration and never
    # reset, in both libraries: saved and restored around this test.
    kind = module_mod._global_is_full_backward_hook
    module_mod._global_is_full_backward_hook = None
    seen = []
    handle = module_mod.register_module_backward_hook(lambda m, gi, go: seen.append(type(m).__name__))
    try:
        with pytest.raises(RuntimeError, match="as a global Module hook"):
            module_mod.register_module_full_backward_hook(lambda *a: None)
        m = ng.nn.Tanh()  # the hook holds its module weakly
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # a leaf input: torch's warning
            m(ng.zeros(2, requires_grad=True)).sum().backward()
    finally:
        handle.remove()
        module_mod._global_is_full_backward_hook = kind
    assert seen == ["Tanh"]
