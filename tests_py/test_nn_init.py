"""nn.init and nn.utils against torch: deterministic initialisations and
gains exactly, random ones by their bounds/statistics and reproducibility
under manual_seed (npgrad's stream is not torch's), errors as torch's;
gradient clipping and parameter vectors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from oracle import assert_close, assert_same_error, from_np, run_both, to_np


@pytest.mark.parametrize(
    "args",
    [("linear",), ("conv2d",), ("sigmoid",), ("tanh",), ("relu",), ("leaky_relu",), ("leaky_relu", 0.2), ("selu",)],
)
def test_calculate_gain(args):
    got, expected = run_both(lambda lib: lib.nn.init.calculate_gain(*args))
    assert got == expected


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.nn.init.calculate_gain("nope"),
        lambda lib: lib.nn.init.calculate_gain("leaky_relu", True),
        lambda lib: lib.nn.init.eye_(lib.empty(2)),
        lambda lib: lib.nn.init.dirac_(lib.empty(2, 2)),
        lambda lib: lib.nn.init.dirac_(lib.empty(3, 2, 2), groups=2),
        lambda lib: lib.nn.init.xavier_uniform_(lib.empty(3)),
        lambda lib: lib.nn.init.kaiming_normal_(lib.empty(3, 3), mode="fan"),
        lambda lib: lib.nn.init.orthogonal_(lib.empty(3)),
    ],
)
def test_init_errors(call):
    assert_same_error(call)


def test_deterministic_inits_match_torch():
    def prog(lib):
        init = lib.nn.init
        w = lib.nn.Parameter(lib.empty(2, 3))
        out = [to_np(init.constant_(w, 0.25)), to_np(init.ones_(lib.empty(2))), to_np(init.zeros_(lib.empty(2)))]
        out.append(to_np(init.eye_(lib.empty(3, 2))))
        out.append(to_np(init.dirac_(lib.empty(4, 2, 3), groups=2)))
        out.append(to_np(init.dirac_(lib.empty(2, 2, 3, 3))))
        out.append(to_np(init.dirac_(lib.empty(1, 1, 1, 2, 3))))
        out.append((w.requires_grad, w.is_leaf, w.grad_fn is None, type(w).__name__))
        return out

    got, expected = run_both(prog)
    for g, e in zip(got[:-1], expected[:-1]):
        assert_close(g, e)
    assert got[-1] == expected[-1]


@pytest.mark.parametrize(
    "name,kwargs,bound",
    [
        ("uniform_", {"a": -0.5, "b": 0.25}, 0.5),
        ("xavier_uniform_", {"gain": 2.0}, 2.0 * math.sqrt(6 / (20 + 30))),
        ("kaiming_uniform_", {"a": math.sqrt(5)}, 1 / math.sqrt(30)),
        ("kaiming_uniform_", {"mode": "fan_out", "nonlinearity": "relu"}, math.sqrt(6 / 20)),
        ("trunc_normal_", {"std": 2.0, "a": -1.0, "b": 3.0}, 3.0),
        ("trunc_normal_", {"mean": 5.0, "a": -1.0, "b": 0.0}, 1.0),
    ],
)
def test_random_inits_bounds_and_seed(ng, name, kwargs, bound):
    fn = getattr(ng.nn.init, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # trunc_normal_'s mean far from [a, b]
        ng.manual_seed(7)
        a = fn(ng.empty(20, 30), **kwargs)
        ng.manual_seed(7)
        b = fn(ng.empty(20, 30), **kwargs)
    assert to_np(a).tolist() == to_np(b).tolist()
    assert float(a.abs().max()) <= bound + 1e-6
    if name == "trunc_normal_":
        lo, hi = kwargs["a"], kwargs["b"]
        assert lo <= float(a.min()) and float(a.max()) <= hi


@pytest.mark.parametrize(
    "name,kwargs,std",
    [
        ("normal_", {"mean": 1.0, "std": 0.5}, 0.5),
        ("xavier_normal_", {}, math.sqrt(2 / (40 + 50))),
        ("kaiming_normal_", {"nonlinearity": "relu"}, math.sqrt(2 / 50)),
    ],
)
def test_normal_inits_statistics(ng, name, kwargs, std):
    ng.manual_seed(0)
    t = getattr(ng.nn.init, name)(ng.empty(40, 50), **kwargs)
    assert abs(float(t.mean()) - kwargs.get("mean", 0.0)) < 4 * std / math.sqrt(2000)
    assert abs(float(t.std()) / std - 1) < 0.1


def test_inits_run_without_recording_history(ng):
    w = ng.nn.Parameter(ng.empty(3, 3))
    for fn in (ng.nn.init.uniform_, ng.nn.init.normal_, ng.nn.init.xavier_uniform_, ng.nn.init.orthogonal_):
        assert fn(w) is w
        assert w.grad_fn is None and w.requires_grad


def test_orthogonal(ng):
    for shape in ((3, 5), (5, 3), (2, 3, 2)):
        w = ng.nn.init.orthogonal_(ng.empty(*shape), gain=2.0)
        m = to_np(w).reshape(shape[0], -1)
        small = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
        assert_close(small, 4.0 * np.eye(min(m.shape)), rtol=1e-5, atol=1e-5)


def test_kaiming_of_an_empty_tensor_warns():
    def prog(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            t = lib.nn.init.kaiming_uniform_(lib.empty(0, 3))
        return tuple(t.shape), [str(x.message) for x in w]

    got, expected = run_both(prog)
    assert got == expected


# ------------------------------------------------------------------ nn.utils

G1 = np.array([[3.0, -4.0], [0.5, 1.0]])
G2 = np.array([-12.0, 0.25])


def _params(lib, dtype=None):
    p1 = lib.nn.Parameter(lib.zeros(2, 2, dtype=dtype))
    p2 = lib.nn.Parameter(lib.zeros(2, dtype=dtype))
    p3 = lib.nn.Parameter(lib.zeros(1, dtype=dtype))  # no gradient
    p1.grad = from_np(lib, G1).to(p1.dtype)
    p2.grad = from_np(lib, G2).to(p1.dtype)
    return [p1, p2, p3]


@pytest.mark.parametrize("norm_type", [2.0, 1, float("inf"), 0.5])
@pytest.mark.parametrize("max_norm", [1.0, 100.0])
def test_clip_grad_norm(norm_type, max_norm):
    def prog(lib):
        params = _params(lib)
        total = lib.nn.utils.clip_grad_norm_(params, max_norm, norm_type=norm_type)
        return to_np(total), str(total.dtype), [to_np(p.grad) for p in params if p.grad is not None]

    got, expected = run_both(prog)
    assert_close(got[0], expected[0], rtol=1e-5)
    assert got[1] == expected[1]
    for g, e in zip(got[2], expected[2]):
        assert_close(g, e, rtol=1e-5)


def test_clip_grad_norm_edge_cases():
    def prog(lib):
        out = []
        p = lib.nn.Parameter(lib.zeros(2, dtype=lib.float64))
        p.grad = lib.tensor([3.0, 4.0], dtype=lib.float64)
        out.append(to_np(lib.nn.utils.clip_grad_norm_(p, 1)).item())  # one tensor, not a list
        out.append(to_np(p.grad).tolist())
        out.append(to_np(lib.nn.utils.clip_grad_norm_([lib.nn.Parameter(lib.zeros(1))], 1.0)).item())
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.nn.utils.clip_grad_norm_((x for x in []), 1.0)
        out.append([str(x.message) for x in w])
        q = lib.nn.Parameter(lib.zeros(2))
        q.grad = lib.tensor([float("nan"), 1.0])
        out.append(np.isnan(to_np(lib.nn.utils.clip_grad_norm_([q], 1.0))).item())
        return out

    got, expected = run_both(prog)
    assert got == expected


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.nn.utils.clip_grad_norm_(_inf_params(lib), 1.0, error_if_nonfinite=True),
        lambda lib: lib.nn.utils.vector_to_parameters([1.0], _params(lib)),
    ],
)
def test_utils_errors(call):
    assert_same_error(call)


def _inf_params(lib):
    p = lib.nn.Parameter(lib.zeros(2))
    p.grad = lib.tensor([float("inf"), 1.0])
    return [p]


def test_clip_grad_value():
    def prog(lib):
        params = _params(lib)
        assert lib.nn.utils.clip_grad_value_(params, 1.0) is None
        lib.nn.utils.clip_grad_value_(params[0], 0.5)
        return [to_np(p.grad).tolist() for p in params if p.grad is not None]

    got, expected = run_both(prog)
    assert got == expected


def test_parameters_to_vector_and_back():
    def prog(lib):
        params = _params(lib)
        vec = lib.nn.utils.parameters_to_vector(params)
        out = [to_np(vec).tolist(), vec.grad_fn.name(), tuple(vec.shape)]
        lib.nn.utils.vector_to_parameters(lib.arange(7.0), params)
        out.append([to_np(p).tolist() for p in params])
        out.append([type(p).__name__ for p in params])
        return out

    got, expected = run_both(prog)
    assert got == expected
