"""nn layers and containers against torch: constructor defaults and
extra_repr, outputs and gradients, containers' indexing and editing, and the
linear layer's graph (F.linear's nodes)."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

from oracle import assert_close, assert_same_error, from_np, graph_desc, run_both, to_np

X = np.array([[-2.5, -0.7, 0.3, 1.2], [0.9, 1.6, 4.0, -0.1]])

# (class name, constructor args, kwargs): every activation module and a few settings.
LAYERS = [
    ("ReLU", (), {}),
    ("ReLU", (True,), {}),
    ("ReLU6", (), {}),
    ("LeakyReLU", (0.2,), {}),
    ("LeakyReLU", (), {"inplace": True}),
    ("ELU", (0.5,), {}),
    ("SELU", (), {}),
    ("CELU", (2.0, True), {}),
    ("GELU", (), {}),
    ("GELU", ("tanh",), {}),
    ("SiLU", (), {}),
    ("Mish", (), {"inplace": True}),
    ("Softplus", (2.0, 3.0), {}),
    ("Softsign", (), {}),
    ("Hardtanh", (-0.5, 2.0), {}),
    ("Hardtanh", (), {"inplace": True}),
    ("Hardsigmoid", (True,), {}),
    ("Hardswish", (), {}),
    ("LogSigmoid", (), {}),
    ("Tanhshrink", (), {}),
    ("Softshrink", (0.8,), {}),
    ("Hardshrink", (), {}),
    ("Threshold", (0.5, -1.0), {}),
    ("Threshold", (0.5, -1.0, True), {}),
    ("Sigmoid", (), {}),
    ("Tanh", (), {}),
    ("Softmax", (1,), {}),
    ("LogSoftmax", (), {"dim": 0}),
    ("Softmin", (-1,), {}),
    ("Identity", (3,), {"x": 1}),
    ("Flatten", (), {}),
    ("Flatten", (0, 1), {}),
    ("Unflatten", (1, (2, 2)), {}),
    ("Dropout", (0.3,), {}),
    ("Dropout1d", (), {"p": 0.2}),
    ("Dropout2d", (0.1, True), {"shape": (1, 2, 2, 2)}),
    ("AlphaDropout", (), {}),
]


@pytest.mark.parametrize("name,args,kwargs", LAYERS, ids=lambda v: v if isinstance(v, str) else "")
def test_layer_repr_output_and_gradient(name, args, kwargs):
    kwargs = dict(kwargs)
    shape = kwargs.pop("shape", X.shape)

    def prog(lib):
        m = getattr(lib.nn, name)(*args, **kwargs).eval()
        x = from_np(lib, X.reshape(shape), requires_grad=True)
        y = m(x.clone() if getattr(m, "inplace", False) else x)
        y.sum().backward() if y.requires_grad else None
        return repr(m), to_np(y), None if x.grad is None else to_np(x.grad), isinstance(m, lib.nn.Module)

    got, expected = run_both(prog)
    assert got[0] == expected[0] and got[3] == expected[3]
    assert_close(got[1], expected[1])
    assert_close(got[2], expected[2])


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.nn.Dropout(1.5),
        lambda lib: lib.nn.Hardtanh(1.0, 0.5),
        lambda lib: lib.nn.Unflatten(1, 4),
        lambda lib: lib.nn.Unflatten(1, (2, 2.0)),
        lambda lib: lib.nn.Linear(2, 2)(lib.ones(3, 3)),
    ],
)
def test_layer_errors(call):
    assert_same_error(call)


def test_dropout_modules_follow_training_mode(ng):
    m = ng.nn.Dropout(1.0)
    assert m(ng.ones(2)).tolist() == [0.0, 0.0]
    assert m.eval()(ng.ones(2)).tolist() == [1.0, 1.0]


def test_linear_default_init_shapes_bounds_and_seed(ng):
    ng.manual_seed(3)
    a = ng.nn.Linear(5, 4)
    ng.manual_seed(3)
    b = ng.nn.Linear(5, 4)
    assert a.weight.shape == (4, 5) and a.bias.shape == (4,)
    assert to_np(a.weight).tolist() == to_np(b.weight).tolist()
    bound = 1 / 5**0.5
    assert a.weight.abs().max().item() <= bound and a.bias.abs().max().item() <= bound
    assert a.weight.dtype == ng.float32 and a.weight.requires_grad
    d = ng.nn.Linear(2, 3, bias=False, dtype=ng.float64)
    assert d.bias is None and d.weight.dtype == ng.float64 and list(d.state_dict()) == ["weight"]


@pytest.mark.parametrize("shape", [(4,), (2, 4), (3, 2, 4), (1, 2, 1, 4)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_graph_values_and_grads(shape, bias):
    rng = np.random.default_rng(0)
    xa, wa, ba = rng.standard_normal(shape), rng.standard_normal((3, 4)), rng.standard_normal(3)

    def prog(lib):
        x = from_np(lib, xa, requires_grad=True)
        fc = lib.nn.Linear(4, 3, bias=bias, dtype=lib.float64)
        fc.load_state_dict({"weight": from_np(lib, wa), **({"bias": from_np(lib, ba)} if bias else {})})
        y = fc(x)
        (y * y).sum().backward()
        grads = [to_np(x.grad)] + [to_np(p.grad) for p in fc.parameters()]
        return graph_desc(y.grad_fn), to_np(y), grads

    got, expected = run_both(prog)
    assert got[0] == expected[0]
    assert_close(got[1], expected[1])
    for g, e in zip(got[2], expected[2]):
        assert_close(g, e)


def test_functional_linear_non_contiguous_and_errors():
    def prog(lib):
        x = from_np(lib, np.arange(24.0).reshape(2, 4, 3), requires_grad=True).transpose(1, 2)
        w = from_np(lib, np.ones((2, 4)), requires_grad=True)
        b = from_np(lib, np.array([1.0, -1.0]), requires_grad=True)
        y = lib.nn.functional.linear(x, w, b)
        return graph_desc(y.grad_fn), to_np(y).tolist()

    got, expected = run_both(prog)
    assert got == expected
    for call in (
        lambda lib: lib.nn.functional.linear(1, lib.ones(2, 2)),
        lambda lib: lib.nn.functional.linear(lib.ones(2), lib.ones(2, 2), 3),
        lambda lib: lib.nn.functional.linear(lib.ones(()), lib.ones(2, 2)),
        lambda lib: lib.nn.functional.linear(lib.ones(3), lib.ones(2, 2)),
    ):
        assert_same_error(call)


# ------------------------------------------------------------------ containers


def test_sequential_indexing_and_editing():
    def prog(lib):
        a, b, c = lib.nn.ReLU(), lib.nn.Tanh(), lib.nn.Sigmoid()
        s = lib.nn.Sequential(a, b)
        out = [len(s), s[0] is a, s[-1] is b, type(s[0:1]).__name__, repr(s[1:])]
        s.append(c)
        s.insert(0, lib.nn.Identity())
        s.insert(-1, lib.nn.ELU())
        out.append([type(m).__name__ for m in s])
        s[1] = lib.nn.SiLU()
        del s[0]
        out.append(list(s._modules))
        out.append(type(s.pop(-1)).__name__)
        s.extend([lib.nn.Softsign()])
        t = s + lib.nn.Sequential(a)
        s += lib.nn.Sequential(b)
        out.append([type(m).__name__ for m in t])
        out.append([type(m).__name__ for m in s])
        out.append(len(lib.nn.Sequential(a, b) * 2))
        named = lib.nn.Sequential(OrderedDict(first=a, second=b))
        out.append((list(named._modules), named.second is b, repr(named)))
        out.append(to_np(lib.nn.Sequential(a, b)(lib.tensor([-1.0, 1.0]))).round(6).tolist())
        del named[0:1]
        out.append(list(named._modules))
        return out

    got, expected = run_both(prog)
    assert got == expected


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.nn.Sequential(lib.nn.ReLU())[3],
        lambda lib: lib.nn.Sequential(lib.nn.ReLU()) + [1],
        lambda lib: lib.nn.Sequential(lib.nn.ReLU()).insert(5, lib.nn.ReLU()),
        lambda lib: lib.nn.Sequential(1),
        lambda lib: lib.nn.ModuleList([lib.nn.ReLU()])[1],
        lambda lib: lib.nn.ModuleList(3),
        lambda lib: lib.nn.ModuleDict([("a",)]),
        lambda lib: lib.nn.ModuleDict(3),
        lambda lib: lib.nn.ParameterList().extend(lib.ones(2)),
        lambda lib: lib.nn.ParameterList()(1),
        lambda lib: lib.nn.ParameterDict()[1],
        lambda lib: lib.nn.ParameterDict()(1),
    ],
)
def test_container_errors(call):
    assert_same_error(call)


def test_sequential_multiplier_errors():
    # The messages name the class by its module path, which differs.
    assert_same_error(lambda lib: lib.nn.Sequential(lib.nn.ReLU()) * 0, key="Non-positive multiplication factor 0")
    assert_same_error(lambda lib: lib.nn.Sequential(lib.nn.ReLU()) * 1.5, key="unsupported operand type(s) for *")


def test_module_list_and_dict():
    def prog(lib):
        relu, tanh = lib.nn.ReLU(), lib.nn.Tanh()
        ml = lib.nn.ModuleList([relu, tanh])
        ml.append(lib.nn.Linear(1, 1))
        ml.insert(1, lib.nn.Identity())
        ml += [lib.nn.ReLU()]
        out = [len(ml), [type(m).__name__ for m in ml], ml[-1] is not relu, len(ml[1:3]), repr(ml)]
        del ml[0]
        out.append(list(ml._modules))
        out.append(type(ml.pop(0)).__name__)
        out.append(len(ml + lib.nn.ModuleList([relu])))
        out.append([n for n, _ in ml.named_parameters()])
        md = lib.nn.ModuleDict({"b": relu, "a": tanh})
        md["c"] = lib.nn.Identity()
        md.update([("d", lib.nn.Sigmoid())])
        out.append((list(md), list(md.keys()), "a" in md, len(md), md["a"] is tanh))
        out.append(type(md.pop("b")).__name__)
        out.append(repr(md))
        md.clear()
        out.append(len(md))
        return out

    got, expected = run_both(prog)
    assert got == expected


def test_parameter_list_and_dict():
    def prog(lib):
        pl = lib.nn.ParameterList([lib.ones(2), lib.nn.Parameter(lib.zeros(1)), "x"])
        pl.append(lib.ones(2, 2, dtype=lib.float64))
        out = [len(pl), [type(p).__name__ for p in pl], repr(pl), len(pl[1:]), [n for n, _ in pl.named_parameters()]]
        pl[0] = lib.zeros(3)
        out.append(type(pl[0]).__name__)
        pd = lib.nn.ParameterDict({"b": lib.ones(1), "a": lib.zeros(2)})
        pd["c"] = 3
        pd.update(OrderedDict(z=lib.ones(1), y=lib.ones(1)))
        out += [list(pd), [n for n, _ in pd.named_parameters()], repr(pd), "a" in pd, len(pd)]
        out.append(pd.get("nothing", 5))
        out.append(pd.setdefault("d", 1.5))
        out.append(list(pd.copy()))
        out.append(pd.popitem()[0])
        out.append(type(pd.pop("a")).__name__)
        out.append(list(reversed(pd)))
        out.append(list(pd | lib.nn.ParameterDict({"q": lib.ones(1)})))
        out.append(list(pd.fromkeys(["k"], lib.ones(1))))
        pd.clear()
        out.append(len(pd))
        return out

    got, expected = run_both(prog)
    assert got == expected


def test_containers_train_together(ng):
    net = ng.nn.Sequential(ng.nn.Linear(3, 4), ng.nn.ReLU(), ng.nn.Linear(4, 1))
    x = ng.ones(5, 3)
    loss = net(x).pow(2).mean()
    loss.backward()
    assert all(p.grad is not None and p.grad.shape == p.shape for p in net.parameters())
    with ng.no_grad():
        for p in net.parameters():
            p -= 0.1 * p.grad
    assert net(x).pow(2).mean().item() < loss.item()
