"""LayerNorm, GroupNorm and RMSNorm modules against torch: parameters (names,
shapes, initial values), repr, outputs and gradients with torch's weights, and
the constructor and input errors."""

from __future__ import annotations

import numpy as np
import pytest

from oracle import assert_close, assert_same_error, from_np, run_both, to_np

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 4, 3))

# (class, args, kwargs): the options of each module.
MODULES = [
    ("LayerNorm", (3,), {}),
    ("LayerNorm", ([4, 3],), {"eps": 1e-3}),
    ("LayerNorm", ((3,),), {"bias": False}),
    ("LayerNorm", (3,), {"elementwise_affine": False}),
    ("GroupNorm", (2, 4), {}),
    ("GroupNorm", (1, 4), {"eps": 0.1, "bias": False}),
    ("GroupNorm", (4, 4), {"affine": False}),
    ("RMSNorm", (3,), {}),
    ("RMSNorm", ([4, 3],), {"eps": 1e-2}),
    ("RMSNorm", (3,), {"elementwise_affine": False}),
]


@pytest.mark.parametrize("name,args,kwargs", MODULES)
def test_normalization_module_matches_torch(ng, torch_ref, name, args, kwargs):
    # torch's module with perturbed parameters; the same state loaded by key.
    torch_ref.manual_seed(0)
    ref = getattr(torch_ref.nn, name)(*args, dtype=torch_ref.float64, **kwargs)
    initial = {k: to_np(v) for k, v in ref.state_dict().items()}
    state = {k: v + RNG.standard_normal(v.shape) for k, v in initial.items()}

    def prog(lib):
        m = getattr(lib.nn, name)(*args, dtype=lib.float64, **kwargs)
        start = {k: to_np(v) for k, v in m.state_dict().items()}
        m.load_state_dict({k: from_np(lib, v) for k, v in state.items()})
        x = from_np(lib, X, requires_grad=True)
        y = m(x)
        (y * from_np(lib, np.cos(np.arange(y.numel())).reshape(X.shape))).sum().backward()
        grads = {n: to_np(p.grad) for n, p in m.named_parameters()}
        return repr(m), start, to_np(y), to_np(x.grad), grads, y.grad_fn.name()

    got, expected = run_both(prog)
    assert got[0] == expected[0]
    assert list(got[1]) == list(expected[1]) == list(initial)
    for k, v in expected[1].items():
        np.testing.assert_array_equal(got[1][k], v)  # ones and zeros
    assert_close(got[2], expected[2], rtol=1e-7, atol=1e-9)
    assert_close(got[3], expected[3], rtol=1e-7, atol=1e-9)
    assert list(got[4]) == list(expected[4])
    for k, v in expected[4].items():
        assert_close(got[4][k], v, rtol=1e-7, atol=1e-9)
    assert got[5] == expected[5]


def test_normalization_module_attributes_and_float32(ng, torch_ref):
    def prog(lib):
        ln, gn, rms = lib.nn.LayerNorm(3), lib.nn.GroupNorm(2, 4), lib.nn.RMSNorm([4, 3])
        x = from_np(lib, X.astype(np.float32))
        outs = [m(x) for m in (ln, gn, rms)]
        return (
            (ln.normalized_shape, ln.eps, ln.elementwise_affine, ln.weight.dtype == lib.float32),
            (gn.num_groups, gn.num_channels, gn.eps, gn.affine),
            (rms.normalized_shape, rms.eps, rms.elementwise_affine),
            [(str(o.dtype), to_np(o)) for o in outs],
        )

    got, expected = run_both(prog)
    assert got[:3] == expected[:3]
    for (gd, g), (ed, e) in zip(got[3], expected[3]):
        assert gd.rsplit(".")[-1] == ed.rsplit(".")[-1]
        assert_close(g, e, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.nn.GroupNorm(3, 4),
        lambda lib: lib.nn.GroupNorm(2, 4)(lib.zeros(2, 3, 5)),
        lambda lib: lib.nn.LayerNorm(5)(lib.zeros(2, 3)),
        lambda lib: lib.nn.RMSNorm([2, 3])(lib.zeros(3, 2)),
    ],
)
def test_normalization_module_errors(ng, torch_ref, call):
    assert_same_error(call)
