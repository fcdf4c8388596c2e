"""None (and other non-tensors) where a tensor belongs: torch's TypeError, never a crash.

Each call below once killed the interpreter (the bindings let None through as a
null tensor). The expected texts are torch 2.13's, so this file also passes with
torch as the library under test.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import oracle


def _x(ng: Any) -> Any:
    return ng.ones(2, 2)


# (call, the first line of torch's message)
CALLS: list[tuple[str, Callable[[Any], Any], str]] = (
    [
        (
            name,
            (lambda n: lambda ng: getattr(ng, n)(None))(name),
            f"{name}(): argument 'input' (position 1) must be Tensor, not NoneType",
        )
        for name in [
            "abs",
            "clone",
            "cos",
            "exp",
            "log",
            "max",
            "min",
            "mean",
            "neg",
            "reciprocal",
            "relu",
            "sigmoid",
            "sin",
            "sqrt",
            "squeeze",
            "sum",
            "t",
            "tanh",
        ]
    ]
    + [
        (
            f"{name}(None, x)",
            (lambda n: lambda ng: getattr(ng, n)(None, _x(ng)))(name),
            f"{name}(): argument 'input' (position 1) must be Tensor, not NoneType",
        )
        for name in ["add", "div", "mul", "sub", "mm", "matmul"]
    ]
    + [
        (
            f"{name}(None)",
            (lambda n: lambda ng: getattr(ng, n)(None))(name),
            f"{name}(): argument 'input' (position 1) must be Tensor, not NoneType",
        )
        for name in ["amax", "amin", "argmax", "argmin", "prod"]
    ]
    + [
        (
            f"{name}(None)",
            (lambda n: lambda ng: getattr(ng, n)(None))(name),
            f"{name}() received an invalid combination of arguments - got (NoneType), but expected one of:",
        )
        for name in ["any", "all", "var", "std", "var_mean", "std_mean"]
    ]
    + [
        (
            "logsumexp(None, 0)",
            lambda ng: ng.logsumexp(None, 0),
            "logsumexp(): argument 'input' (position 1) must be Tensor, not NoneType",
        )
    ]
    + [
        (
            "permute(None, (0, 1))",
            lambda ng: ng.permute(None, (0, 1)),
            "permute(): argument 'input' (position 1) must be Tensor, not NoneType",
        ),
        (
            "reshape(None, (4,))",
            lambda ng: ng.reshape(None, (4,)),
            "reshape(): argument 'input' (position 1) must be Tensor, not NoneType",
        ),
        (
            "squeeze(None, 0)",
            lambda ng: ng.squeeze(None, 0),
            "squeeze() received an invalid combination of arguments - got (NoneType, int), but expected one of:",
        ),
        (
            "mean(None, 0)",
            lambda ng: ng.mean(None, 0),
            "mean() received an invalid combination of arguments - got (NoneType, int), but expected one of:",
        ),
        (
            "sum(None, 0)",
            lambda ng: ng.sum(None, 0),
            "sum() received an invalid combination of arguments - got (NoneType, int), but expected one of:",
        ),
        (
            "matmul(x, None)",
            lambda ng: ng.matmul(_x(ng), None),
            "matmul(): argument 'other' (position 2) must be Tensor, not NoneType",
        ),
        (
            "where(None, x, x)",
            lambda ng: ng.where(None, _x(ng), _x(ng)),
            "where() received an invalid combination of arguments - got (NoneType, Tensor, Tensor), "
            "but expected one of:",
        ),
        (
            "x.copy_(None)",
            lambda ng: _x(ng).copy_(None),
            "copy_(): argument 'other' (position 1) must be Tensor, not NoneType",
        ),
        (
            "x.expand_as(None)",
            lambda ng: _x(ng).expand_as(None),
            "expand_as(): argument 'other' (position 1) must be Tensor, not NoneType",
        ),
        (
            "x.matmul(None)",
            lambda ng: _x(ng).matmul(None),
            "matmul(): argument 'other' (position 1) must be Tensor, not NoneType",
        ),
        ("x.mm(None)", lambda ng: _x(ng).mm(None), "mm(): argument 'mat2' (position 1) must be Tensor, not NoneType"),
        (
            "x.view_as(None)",
            lambda ng: _x(ng).view_as(None),
            "view_as(): argument 'other' (position 1) must be Tensor, not NoneType",
        ),
    ]
)


@pytest.mark.parametrize("call,fn,message", CALLS, ids=[c[0] for c in CALLS])
def test_none_for_a_tensor_raises_torchs_type_error(ng, call, fn, message):
    with pytest.raises(TypeError) as info:
        fn(ng)
    assert str(info.value).split("\n")[0] == message.split("\n")[0]
    # Nothing is broken afterwards.
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


# Other wrong types, keywords, counts: torch's argument-parser texts.
MISMATCHES: list[tuple[str, Callable[[Any], Any], str]] = [
    ("sin('a')", lambda ng: ng.sin("a"), "sin(): argument 'input' (position 1) must be Tensor, not str"),
    ("sin(input=None)", lambda ng: ng.sin(input=None), "sin(): argument 'input' must be Tensor, not NoneType"),
    ("mm(x, 3)", lambda ng: ng.mm(_x(ng), 3), "mm(): argument 'mat2' (position 2) must be Tensor, not int"),
    ("x.mm(mat2=None)", lambda ng: _x(ng).mm(mat2=None), "mm(): argument 'mat2' must be Tensor, not NoneType"),
    (
        "x.copy_(other=None)",
        lambda ng: _x(ng).copy_(other=None),
        "copy_(): argument 'other' must be Tensor, not NoneType",
    ),
    (
        "x.transpose('a', 0)",
        lambda ng: _x(ng).transpose("a", 0),
        "transpose(): argument 'dim0' (position 1) must be int, not str",
    ),
    (
        "transpose(x, 0, 1.5)",
        lambda ng: ng.transpose(_x(ng), 0, 1.5),
        "transpose(): argument 'dim1' (position 3) must be int, not float",
    ),
    ("softmax(x, dim='a')", lambda ng: ng.softmax(_x(ng), dim="a"), "softmax(): argument 'dim' must be int, not str"),
    (
        "x.unsqueeze(None)",
        lambda ng: _x(ng).unsqueeze(None),
        "unsqueeze(): argument 'dim' (position 1) must be int, not NoneType",
    ),
    ("sin()", lambda ng: ng.sin(), 'sin() missing 1 required positional arguments: "input"'),
    (
        "transpose(x, 0)",
        lambda ng: ng.transpose(_x(ng), 0),
        'transpose() missing 1 required positional arguments: "dim1"',
    ),
    ("sin(x, x)", lambda ng: ng.sin(_x(ng), _x(ng)), "sin() takes 1 positional argument but 2 were given"),
    ("sin(x, foo=1)", lambda ng: ng.sin(_x(ng), foo=1), "sin() got an unexpected keyword argument 'foo'"),
    (
        "clamp(None)",
        lambda ng: ng.clamp(None),
        "clamp() received an invalid combination of arguments - got (NoneType), but expected one of:",
    ),
    (
        "where(x > 0, None, x)",
        lambda ng: ng.where(_x(ng) > 0, None, _x(ng)),
        "where() received an invalid combination of arguments - got (Tensor, NoneType, Tensor), but expected one of:",
    ),
    (
        "pow(None, 2)",
        lambda ng: ng.pow(None, 2),
        "pow() received an invalid combination of arguments - got (NoneType, int), but expected one of:",
    ),
    (
        "x.pow(None)",
        lambda ng: _x(ng).pow(None),
        "pow() received an invalid combination of arguments - got (NoneType), but expected one of:",
    ),
    (
        "stack(None)",
        lambda ng: ng.stack(None),
        "stack(): argument 'tensors' (position 1) must be tuple of Tensors, not NoneType",
    ),
    ("cat('ab')", lambda ng: ng.cat("ab"), "cat(): argument 'tensors' (position 1) must be tuple of Tensors, not str"),
    (
        "cat([x, None])",
        lambda ng: ng.cat([_x(ng), None]),
        "expected Tensor as element 1 in argument 0, but got NoneType",
    ),
]


@pytest.mark.parametrize("call,fn,message", MISMATCHES, ids=[c[0] for c in MISMATCHES])
def test_argument_mismatch_gets_torchs_text(ng, call, fn, message):
    with pytest.raises(TypeError) as info:
        fn(ng)
    assert str(info.value).split("\n")[0] == message


def test_unbound_method_on_none_names_the_descriptor(ng):
    with pytest.raises(
        TypeError, match=r"descriptor 'sin' for '.*Tensor.*' objects doesn't apply to a 'NoneType' object"
    ):
        ng.Tensor.sin(None)


@pytest.mark.parametrize(
    "value,message",
    [
        (2**64 + 1, "int too big to convert"),
        (-(2**63) - 1, "can't convert negative int to unsigned"),
    ],
)
def test_python_int_past_int64_is_an_overflow_error(ng, value, message):
    x = ng.ones(2, dtype=ng.float64)
    for fn in (lambda: x * value, lambda: x.mul_(value), lambda: x.add(value)):
        with pytest.raises(OverflowError, match=message):
            fn()


def test_none_where_torch_accepts_it_keeps_its_meaning(ng):
    x = ng.tensor([-1.0, 2.0], requires_grad=True)
    assert ng.clamp(x, min=None, max=1.0).tolist() == [-1.0, 1.0]
    assert x.clamp(min=0.0, max=None).tolist() == [0.0, 2.0]
    y = (x * 2).sum()
    y.backward(gradient=None, retain_graph=True)
    (g,) = ng.autograd.grad(y, x, grad_outputs=None)
    assert g.tolist() == [2.0, 2.0]
    # A hook returning None keeps the gradient; a tuple with None stays None.
    assert x.grad.tolist() == [2.0, 2.0]
    z = x * 3
    z.register_hook(lambda g: None)
    z.sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]
    w = x * 3
    w.grad_fn.register_prehook(lambda grad_outputs: (None,))
    w.sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]  # no gradient reached x


@pytest.mark.skipif(oracle.AGAINST_TORCH, reason="torch 2.13 segfaults on an out-of-range GradientEdge")
@pytest.mark.parametrize("output_nr", [1, 99, -1, 2**70])
@pytest.mark.parametrize("where", ["grad inputs", "grad outputs", "backward inputs"])
def test_gradient_edge_past_the_nodes_outputs_is_a_clear_error(ng, output_nr, where):
    from npgrad.autograd.graph import GradientEdge

    x = ng.ones(2, requires_grad=True)
    y = x.sin()
    edge = GradientEdge(y.grad_fn, output_nr)
    with pytest.raises(
        RuntimeError,
        match=rf"GradientEdge's output_nr {output_nr} is out of range: "
        r"its node SinBackward0 has 1 output$",
    ):
        if where == "grad inputs":
            ng.autograd.grad(y.sum(), [edge])
        elif where == "grad outputs":
            ng.autograd.grad([edge], [x], grad_outputs=[ng.ones(2)])
        else:
            ng.autograd.backward(y.sum(), inputs=[edge])
    # The graph was not touched: a valid edge still works.
    (g,) = ng.autograd.grad(y.sum(), [GradientEdge(y.grad_fn, 0)])
    assert g.tolist() == [1.0, 1.0]


@pytest.mark.skipif(oracle.AGAINST_TORCH, reason="torch 2.13 segfaults on an out-of-range GradientEdge")
def test_gradient_edge_output_nr_of_a_wrong_type(ng):
    from npgrad.autograd.graph import GradientEdge

    x = ng.ones(2, requires_grad=True)
    y = x * 2
    with pytest.raises(TypeError, match="GradientEdge's output_nr must be an int but got str"):
        ng.autograd.grad(y.sum(), [GradientEdge(y.grad_fn, "0")])
    acc = ng.autograd.graph.get_gradient_edge(x)
    with pytest.raises(RuntimeError, match="has 1 output$"):
        ng.autograd.grad(y.sum(), [GradientEdge(acc.node, 1)])


@pytest.mark.skipif(oracle.AGAINST_TORCH, reason="torch's reentrant recursion never ends (it starts threads)")
def test_unbounded_reentrant_backward_is_a_recursion_error(ng):
    """A hook that runs backward on the graph that is running it recurses without
    end; past 32768 nested passes that is Python's RecursionError, not threads
    started until the process dies."""
    x = ng.ones(2, requires_grad=True)
    y = (x * 2).sum()
    depth = [0]

    def hook(g):
        depth[0] += 1
        ng.autograd.grad(y, x, retain_graph=True)
        return g

    y.grad_fn.register_prehook(lambda go: hook(go))
    with pytest.raises(RecursionError, match="maximum recursion depth exceeded: 32768 backward passes"):
        y.backward(retain_graph=True)
    assert depth[0] == 32768  # the last one's backward raised
    z = ng.ones(2, requires_grad=True)
    (z * z).sum().backward()
    assert z.grad.tolist() == [2.0, 2.0]
