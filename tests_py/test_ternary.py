"""lerp, addcmul, addcdiv and glu against torch.

Values, nodes, saved state, gradients and second order are compared through
op_specs (``TERNARY``); here: dtypes and type promotion, broadcasting, the in-place
forms (version counter, leaf error, self's shape), and torch's errors.
"""

from __future__ import annotations

import numpy as np
import pytest

from oracle import assert_same_error, assert_same_result, from_np, run_both

RNG = np.random.default_rng(3)
A = RNG.uniform(0.5, 1.5, size=(2, 3))
B = RNG.uniform(0.5, 1.5, size=(2, 3))
C = RNG.uniform(0.5, 1.5, size=(3,))


def _t(lib, a, dtype=None, requires_grad=False):
    t = from_np(lib, np.asarray(a), requires_grad)
    return t if dtype is None else t.to(dtype)


CALLS = {
    "lerp_float32": lambda lib: lib.lerp(_t(lib, A, lib.float32), _t(lib, B, lib.float32), 0.25),
    "lerp_weight_one_is_end": lambda lib: lib.lerp(_t(lib, A), _t(lib, B), 1.0),
    "lerp_0dim_float64_weight": lambda lib: lib.lerp(
        _t(lib, A, lib.float32), _t(lib, B, lib.float32), lib.tensor(0.7, dtype=lib.float64)
    ),
    "lerp_broadcast_weight": lambda lib: _t(lib, A).lerp(_t(lib, B[0]), _t(lib, C)),
    "lerp_float16": lambda lib: lib.lerp(_t(lib, A, lib.float16), _t(lib, B, lib.float16), 0.3),
    "addcmul_int": lambda lib: lib.addcmul(
        lib.ones(2, 3, dtype=lib.int64), lib.full((2, 3), 3), lib.full((3,), 2), value=2
    ),
    "addcmul_int_float_value": lambda lib: lib.addcmul(
        lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64), value=0.5
    ),
    "addcmul_promotes": lambda lib: lib.addcmul(_t(lib, A, lib.float32), _t(lib, B), _t(lib, C)),
    "addcmul_int_tensors_into_float": lambda lib: lib.addcmul(
        _t(lib, A, lib.float32), lib.ones(3, dtype=lib.int64), lib.ones(3, dtype=lib.int64)
    ),
    "addcdiv_value": lambda lib: _t(lib, A).addcdiv(_t(lib, B), _t(lib, C), value=-2),
    "addcdiv_int_self": lambda lib: lib.addcdiv(
        lib.ones(3, dtype=lib.int64), _t(lib, C, lib.float32), _t(lib, C, lib.float32)
    ),
    "addcdiv_float16": lambda lib: lib.addcdiv(
        _t(lib, A, lib.float16), _t(lib, B, lib.float16), _t(lib, C, lib.float16)
    ),
    "glu_last_dim": lambda lib: lib.nn.functional.glu(_t(lib, np.arange(24.0).reshape(2, 3, 4) / 10)),
    "glu_negative_dim": lambda lib: lib.nn.functional.glu(
        _t(lib, np.arange(24.0).reshape(2, 4, 3) / 10, lib.float32), -2
    ),
}


@pytest.mark.usefixtures("torch_ref")
@pytest.mark.parametrize("name", sorted(CALLS))
def test_values_and_dtypes_match_torch(name):
    got, expected = run_both(CALLS[name])
    assert_same_result(got, expected)


INPLACE = {
    "lerp_number": lambda lib, s: s.lerp_(_t(lib, C), 0.4),
    "lerp_tensor": lambda lib, s: s.lerp_(_t(lib, B), _t(lib, C)),
    "addcmul": lambda lib, s: s.addcmul_(_t(lib, B), _t(lib, C), value=3),
    "addcdiv": lambda lib, s: s.addcdiv_(_t(lib, B), _t(lib, C)),
}


@pytest.mark.usefixtures("torch_ref")
@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_forms_write_self_and_bump_the_version(name):
    def run(lib):
        s = _t(lib, A)
        version = s._version
        out = INPLACE[name](lib, s)
        assert out is s
        assert s._version == version + 1
        return s

    got, expected = run_both(run)
    assert_same_result(got, expected)


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_on_a_leaf_requiring_grad_raises(ng, name):
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        INPLACE[name](ng, _t(ng, A, requires_grad=True))


@pytest.mark.usefixtures("torch_ref")
@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_gradients_match_torch(name):
    def run(lib):
        x = _t(lib, A, requires_grad=True)
        out = INPLACE[name](lib, x * 1)
        return lib.autograd.grad(out.sum(), x)[0]

    got, expected = run_both(run)
    assert_same_result(got, expected)


ERRORS = {
    "lerp_end_dtype": lambda lib: lib.lerp(_t(lib, A, lib.float32), _t(lib, B), 0.5),
    "lerp_weight_dtype": lambda lib: lib.lerp(_t(lib, A, lib.float32), _t(lib, B, lib.float32), _t(lib, B)),
    "lerp_integer": lambda lib: lib.lerp(lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64), 0.5),
    "lerp_integer_tensor_weight": lambda lib: lib.lerp(
        lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)
    ),
    "lerp_shapes": lambda lib: lib.lerp(_t(lib, A), _t(lib, np.ones(4)), 0.5),
    "lerp_inplace_broadcast": lambda lib: _t(lib, C).lerp_(_t(lib, A), 0.5),
    "addcdiv_integer_division": lambda lib: lib.addcdiv(
        _t(lib, A), lib.ones(3, dtype=lib.int64), lib.ones(3, dtype=lib.int64)
    ),
    "addcmul_bool": lambda lib: lib.addcmul(
        lib.ones(2, dtype=lib.bool), lib.ones(2, dtype=lib.bool), lib.ones(2, dtype=lib.bool)
    ),
    "addcmul_inplace_cast": lambda lib: lib.ones(3, dtype=lib.int64).addcmul_(_t(lib, C), _t(lib, C)),
    "addcmul_inplace_broadcast": lambda lib: _t(lib, C).addcmul_(_t(lib, A), _t(lib, A)),
    "glu_odd": lambda lib: lib.nn.functional.glu(_t(lib, A)),
    "glu_scalar": lambda lib: lib.nn.functional.glu(_t(lib, 1.0)),
    "glu_dim": lambda lib: lib.nn.functional.glu(_t(lib, A), 2),
    "glu_integer": lambda lib: lib.nn.functional.glu(lib.ones(2, 4, dtype=lib.int64)),
    "glu_native_0dim": lambda lib: lib._C._nn.glu(_t(lib, 1.0)),
}


@pytest.mark.usefixtures("torch_ref")
@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    assert_same_error(ERRORS[name])
