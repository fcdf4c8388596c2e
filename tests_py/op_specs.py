"""The differentiable ops of the README's API surface as data: how to call each one, on which inputs,
which backward node torch records for it, and which saved attributes to compare.

Used by test_ops.py (forward values, node names, graph structure, saved values) and
test_gradients.py (gradients against central finite differences).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from oracle import from_np

REAL = "real"  # |v| in [0.2, 1.0], random sign: away from the kinks of relu/abs at 0
POS = "pos"  # v in [0.5, 2.0]: inside the domain of log, sqrt, pow with real exponent


def R(*shape: int) -> tuple[tuple[int, ...], str]:
    return shape, REAL


def P(*shape: int) -> tuple[tuple[int, ...], str]:
    return shape, POS


@dataclass(frozen=True)
class Op:
    id: str
    fn: Callable[..., Any]  # fn(lib, *tensors) -> tensor
    inputs: tuple[tuple[tuple[int, ...], str], ...]
    node: str  # type(out.grad_fn).__name__ (and .name()) in torch
    saved: tuple[str, ...] = ()  # _saved_* attributes whose values are compared
    # inputs that only give a shape (view_as, expand_as): not differentiated
    shape_only: tuple[int, ...] = ()
    # False where torch has no derivative of the backward formula (hardsigmoid)
    double_backward: bool = True
    # False where torch has no float16/bfloat16 kernel (cdist off the matmul path)
    reduced_floats: bool = True

    @property
    def grad_mask(self) -> tuple[bool, ...]:
        """Which inputs the op is differentiable with respect to."""
        return tuple(i not in self.shape_only for i in range(len(self.inputs)))

    def arrays(self, dtype: Any = np.float64) -> list[np.ndarray]:
        """Deterministic input data for this op."""
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        out = []
        for shape, domain in self.inputs:
            if domain == POS:
                a = rng.uniform(0.5, 2.0, shape)
            else:
                a = rng.uniform(0.2, 1.0, shape) * rng.choice([-1.0, 1.0], shape)
            out.append(np.asarray(a, dtype=dtype))
        return out

    def tensors(self, lib: Any, dtype: Any = np.float64, requires_grad: Any = True) -> list[Any]:
        """Input tensors of ``lib``; ``requires_grad`` is a bool or one bool per input."""
        flags = requires_grad if isinstance(requires_grad, (tuple, list)) else [requires_grad] * len(self.inputs)
        return [from_np(lib, a, rg) for a, rg in zip(self.arrays(dtype), flags)]


def _cond(lib: Any) -> Any:
    return lib.tensor([[True, False, True], [False, True, True]])


def _unary(name: str, domain: str, node: str, saved: str) -> list[Op]:
    """The method form ``x.name()`` and the function form ``lib.name(x)``."""
    return [
        Op(
            f"{name}_method",
            lambda lib, x: getattr(x, name)(),
            (((2, 3), domain),),
            node,
            (saved,),
        ),
        Op(
            f"{name}_function",
            lambda lib, x: getattr(lib, name)(x),
            (((2, 3), domain),),
            node,
            (saved,),
        ),
    ]


# fmt: off
ARITHMETIC = [
    Op("add", lambda lib, a, b: a + b, (R(2, 3), R(2, 3)), "AddBackward0", ("_saved_alpha",)),
    Op("add_broadcast", lambda lib, a, b: a + b, (R(2, 3), R(3)), "AddBackward0"),
    Op("add_function_alpha", lambda lib, a, b: lib.add(a, b, alpha=2), (R(2, 3), R(2, 3)), "AddBackward0", ("_saved_alpha",)),
    Op("add_scalar", lambda lib, a: a + 1.5, (R(2, 3),), "AddBackward0", ("_saved_alpha",)),
    Op("radd_scalar", lambda lib, a: 1.5 + a, (R(2, 3),), "AddBackward0"),
    Op("sub", lambda lib, a, b: a - b, (R(2, 3), R(2, 3)), "SubBackward0", ("_saved_alpha",)),
    Op("sub_function_broadcast", lambda lib, a, b: lib.sub(a, b), (R(2, 1), R(1, 3)), "SubBackward0"),
    Op("sub_scalar", lambda lib, a: a - 1.5, (R(2, 3),), "SubBackward0"),
    Op("rsub_scalar", lambda lib, a: 2 - a, (R(2, 3),), "RsubBackward1", ("_saved_alpha",)),
    Op("mul", lambda lib, a, b: a * b, (R(2, 3), R(2, 3)), "MulBackward0", ("_saved_self", "_saved_other")),
    Op("mul_function_broadcast", lambda lib, a, b: lib.mul(a, b), (R(2, 3), R(2, 1)), "MulBackward0", ("_saved_self", "_saved_other")),
    Op("mul_scalar", lambda lib, a: a * 2.5, (R(2, 3),), "MulBackward0", ("_saved_self", "_saved_other")),
    Op("rmul_scalar", lambda lib, a: 2 * a, (R(2, 3),), "MulBackward0", ("_saved_self", "_saved_other")),
    Op("mul_0dim", lambda lib, a, b: a * b, (R(2, 3), R()), "MulBackward0", ("_saved_self", "_saved_other")),
    Op("div", lambda lib, a, b: a / b, (R(2, 3), R(2, 3)), "DivBackward0", ("_saved_self", "_saved_other")),
    Op("div_function_broadcast", lambda lib, a, b: lib.div(a, b), (R(2, 3), R(3)), "DivBackward0", ("_saved_self", "_saved_other")),
    Op("div_scalar", lambda lib, a: a / 4, (R(2, 3),), "DivBackward0", ("_saved_self", "_saved_other")),
    Op("rdiv_scalar", lambda lib, a: 1 / a, (R(2, 3),), "MulBackward0", ("_saved_self", "_saved_other")),
    Op("mul_method_inplace_other", lambda lib, a, b: a.clone().mul_(b), (R(2, 3), R(3)), "MulBackward0", ("_saved_self", "_saved_other")),
    Op("atan2", lambda lib, a, b: lib.atan2(a, b), (R(2, 3), R(2, 3)), "Atan2Backward0", ("_saved_self", "_saved_other")),
    Op("atan2_method_broadcast", lambda lib, a, b: a.atan2(b), (R(2, 3), R(3)), "Atan2Backward0", ("_saved_self", "_saved_other")),
    Op("maximum", lambda lib, a, b: lib.maximum(a, b), (R(2, 3), R(2, 3)), "MaximumBackward0", ("_saved_self", "_saved_other")),
    Op("maximum_method_broadcast", lambda lib, a, b: a.maximum(b), (R(2, 3), R(2, 1)), "MaximumBackward0", ("_saved_self", "_saved_other")),
    Op("minimum", lambda lib, a, b: lib.minimum(a, b), (R(2, 3), R(2, 3)), "MinimumBackward0", ("_saved_self", "_saved_other")),
    Op("minimum_method_broadcast", lambda lib, a, b: a.minimum(b), (R(3), R(2, 3)), "MinimumBackward0", ("_saved_self", "_saved_other")),
    Op("hypot", lambda lib, a, b: lib.hypot(a, b), (R(2, 3), R(2, 3)), "HypotBackward0", ("_saved_self", "_saved_other", "_saved_result")),
    Op("hypot_method_broadcast", lambda lib, a, b: a.hypot(b), (R(2, 3), R(3)), "HypotBackward0", ("_saved_self", "_saved_other", "_saved_result")),
    Op("logaddexp", lambda lib, a, b: lib.logaddexp(a, b), (R(2, 3), R(2, 3)), "LogaddexpBackward0", ("_saved_self", "_saved_other")),
    Op("logaddexp_method_broadcast", lambda lib, a, b: a.logaddexp(b), (R(2, 3), R(2, 1)), "LogaddexpBackward0", ("_saved_self", "_saved_other")),
    Op("neg", lambda lib, a: -a, (R(2, 3),), "NegBackward0"),
    Op("neg_function", lambda lib, a: lib.neg(a), (R(2, 3),), "NegBackward0"),
    Op("pow_scalar", lambda lib, a: a**2, (R(2, 3),), "PowBackward0", ("_saved_self", "_saved_exponent")),
    Op("pow_function_float", lambda lib, a: lib.pow(a, 1.5), (P(2, 3),), "PowBackward0", ("_saved_self", "_saved_exponent")),
    Op("square", lambda lib, a: lib.square(a), (R(2, 3),), "PowBackward0", ("_saved_self", "_saved_exponent")),
    Op("square_method", lambda lib, a: a.square(), (R(2, 3),), "PowBackward0", ("_saved_self", "_saved_exponent")),
    Op("pow_tensor", lambda lib, a, b: a**b, (P(2, 3), R(2, 3)), "PowBackward1", ("_saved_self", "_saved_exponent", "_saved_result")),
    Op("rpow_scalar", lambda lib, a: 2**a, (R(2, 3),), "PowBackward2", ("_saved_self", "_saved_exponent", "_saved_result")),
    Op("mm", lambda lib, a, b: lib.mm(a, b), (R(2, 3), R(3, 4)), "MmBackward0", ("_saved_self", "_saved_mat2")),
    Op("matmul_2d_2d", lambda lib, a, b: a @ b, (R(2, 3), R(3, 4)), "MmBackward0", ("_saved_self", "_saved_mat2")),
    Op("matmul_function_2d_2d", lambda lib, a, b: lib.matmul(a, b), (R(2, 3), R(3, 2)), "MmBackward0"),
    Op("matmul_1d_1d", lambda lib, a, b: a @ b, (R(3), R(3)), "DotBackward0", ("_saved_self", "_saved_tensor")),
    Op("matmul_2d_1d", lambda lib, a, b: lib.matmul(a, b), (R(2, 3), R(3)), "MvBackward0", ("_saved_self", "_saved_vec")),
]

POINTWISE = [
    *_unary("exp", REAL, "ExpBackward0", "_saved_result"),
    *_unary("log", POS, "LogBackward0", "_saved_self"),
    *_unary("sin", REAL, "SinBackward0", "_saved_self"),
    *_unary("cos", REAL, "CosBackward0", "_saved_self"),
    *_unary("tanh", REAL, "TanhBackward0", "_saved_result"),
    *_unary("sigmoid", REAL, "SigmoidBackward0", "_saved_result"),
    *_unary("relu", REAL, "ReluBackward0", "_saved_result"),
    *_unary("abs", REAL, "AbsBackward0", "_saved_self"),
    *_unary("sqrt", POS, "SqrtBackward0", "_saved_result"),
    *_unary("reciprocal", POS, "ReciprocalBackward0", "_saved_result"),
    *_unary("log1p", POS, "Log1PBackward0", "_saved_self"),
    *_unary("expm1", REAL, "Expm1Backward0", "_saved_result"),
    *_unary("erf", REAL, "ErfBackward0", "_saved_self"),
    *_unary("exp2", REAL, "Exp2Backward0", "_saved_result"),
    *_unary("log2", POS, "Log2Backward0", "_saved_self"),
    *_unary("log10", POS, "Log10Backward0", "_saved_self"),
    *_unary("rsqrt", POS, "RsqrtBackward0", "_saved_result"),
    *_unary("atan", REAL, "AtanBackward0", "_saved_self"),
    *_unary("asin", REAL, "AsinBackward0", "_saved_self"),
    *_unary("acos", REAL, "AcosBackward0", "_saved_self"),
    *_unary("sinh", REAL, "SinhBackward0", "_saved_self"),
    *_unary("cosh", REAL, "CoshBackward0", "_saved_self"),
    *_unary("tan", REAL, "TanBackward0", "_saved_result"),
    *_unary("erfc", REAL, "ErfcBackward0", "_saved_self"),
    # Piecewise constant (zero gradient) or frac's pass-through: their nodes save nothing.
    Op("sign_method", lambda lib, a: a.sign(), (R(2, 3),), "SignBackward0"),
    Op("sign_function", lambda lib, a: lib.sign(a), (R(2, 3),), "SignBackward0"),
    Op("floor_method", lambda lib, a: a.floor(), (R(2, 3),), "FloorBackward0"),
    Op("floor_function", lambda lib, a: lib.floor(a), (R(2, 3),), "FloorBackward0"),
    Op("ceil_method", lambda lib, a: a.ceil(), (R(2, 3),), "CeilBackward0"),
    Op("ceil_function", lambda lib, a: lib.ceil(a), (R(2, 3),), "CeilBackward0"),
    Op("trunc_method", lambda lib, a: a.trunc(), (R(2, 3),), "TruncBackward0"),
    Op("trunc_function", lambda lib, a: lib.trunc(a), (R(2, 3),), "TruncBackward0"),
    Op("round_method", lambda lib, a: a.round(), (R(2, 3),), "RoundBackward0"),
    Op("round_function", lambda lib, a: lib.round(a), (R(2, 3),), "RoundBackward0"),
    Op("frac_method", lambda lib, a: a.frac(), (R(2, 3),), "FracBackward0"),
    Op("frac_function", lambda lib, a: lib.frac(a), (R(2, 3),), "FracBackward0"),
    Op("clamp_min_max", lambda lib, a: a.clamp(min=-0.45, max=0.55), (R(2, 3),), "ClampBackward1", ("_saved_self", "_saved_min", "_saved_max")),
    Op("clamp_min", lambda lib, a: a.clamp(min=0.3), (R(2, 3),), "ClampBackward1", ("_saved_min", "_saved_max")),
    Op("clamp_function_max", lambda lib, a: lib.clamp(a, max=-0.3), (R(2, 3),), "ClampBackward1", ("_saved_min", "_saved_max")),
    Op("where", lambda lib, a, b: lib.where(_cond(lib), a, b), (R(2, 3), R(2, 3)), "WhereBackward0", ("_saved_condition",)),
    Op("where_broadcast", lambda lib, a, b: lib.where(_cond(lib), a, b), (R(2, 3), R(3)), "WhereBackward0"),
]

REDUCTIONS = [
    Op("sum", lambda lib, a: a.sum(), (R(2, 3),), "SumBackward0"),
    Op("sum_function", lambda lib, a: lib.sum(a), (R(2, 3),), "SumBackward0"),
    Op("sum_dim", lambda lib, a: a.sum(1), (R(2, 3),), "SumBackward1", ("_saved_dim", "_saved_keepdim")),
    Op("sum_dim_keepdim", lambda lib, a: a.sum(dim=0, keepdim=True), (R(2, 3),), "SumBackward1", ("_saved_dim", "_saved_keepdim")),
    Op("sum_negative_dim", lambda lib, a: a.sum(dim=-1), (R(2, 3, 2),), "SumBackward1"),
    Op("mean_negative_dim", lambda lib, a: a.mean((-1, 0)), (R(2, 3, 2),), "MeanBackward1", ("_saved_dim",)),
    Op("mean", lambda lib, a: a.mean(), (R(2, 3),), "MeanBackward0"),
    Op("mean_dim", lambda lib, a: a.mean(1), (R(2, 3),), "MeanBackward1", ("_saved_dim", "_saved_keepdim")),
    Op("mean_function_dim_keepdim", lambda lib, a: lib.mean(a, dim=0, keepdim=True), (R(2, 3),), "MeanBackward1"),
    Op("max", lambda lib, a: a.max(), (R(2, 3),), "MaxBackward1", ("_saved_self", "_saved_result")),
    Op("max_function", lambda lib, a: lib.max(a), (R(2, 3),), "MaxBackward1"),
    Op("max_dim", lambda lib, a: a.max(dim=1).values, (R(2, 3),), "MaxBackward0", ("_saved_dim", "_saved_keepdim", "_saved_indices")),
    Op("max_negative_dim", lambda lib, a: a.max(-2).values, (R(2, 3, 2),), "MaxBackward0", ("_saved_dim", "_saved_indices")),
    Op("max_function_dim_keepdim", lambda lib, a: lib.max(a, 0, keepdim=True)[0], (R(2, 3),), "MaxBackward0", ("_saved_dim", "_saved_keepdim", "_saved_indices")),
    Op("min", lambda lib, a: a.min(), (R(2, 3),), "MinBackward1", ("_saved_self", "_saved_result")),
    Op("min_dim", lambda lib, a: a.min(0).values, (R(2, 3),), "MinBackward0", ("_saved_dim", "_saved_keepdim", "_saved_indices")),
    Op("min_negative_dim_keepdim", lambda lib, a: a.min(-1, keepdim=True).values, (R(2, 3),), "MinBackward0", ("_saved_dim",)),
    Op("min_function_dim", lambda lib, a: lib.min(a, dim=1)[0], (R(2, 3),), "MinBackward0"),
    Op("softmax", lambda lib, a: a.softmax(dim=1), (R(2, 3),), "SoftmaxBackward0", ("_saved_dim", "_saved_result")),
    Op("softmax_function", lambda lib, a: lib.softmax(a, 0), (R(2, 3),), "SoftmaxBackward0", ("_saved_dim", "_saved_result")),
    Op("log_softmax", lambda lib, a: a.log_softmax(1), (R(2, 3),), "LogSoftmaxBackward0", ("_saved_dim", "_saved_result")),
    Op("log_softmax_function", lambda lib, a: lib.log_softmax(a, dim=0), (R(2, 3),), "LogSoftmaxBackward0", ("_saved_dim", "_saved_result")),
    Op("softmax_negative_dim", lambda lib, a: a.softmax(-1), (R(2, 3),), "SoftmaxBackward0", ("_saved_dim",)),
    Op("log_softmax_negative_dim", lambda lib, a: a.log_softmax(-2), (R(2, 3),), "LogSoftmaxBackward0", ("_saved_dim",)),
]

VIEWS = [
    Op("view", lambda lib, a: a.view(3, 2), (R(2, 3),), "ViewBackward0"),
    Op("view_minus_one", lambda lib, a: a.view(-1), (R(2, 3),), "ViewBackward0"),
    Op("view_as", lambda lib, a, b: a.view_as(b), (R(2, 3), R(6)), "ViewBackward0", shape_only=(1,)),
    Op("reshape", lambda lib, a: a.reshape(3, 2), (R(2, 3),), "ViewBackward0"),
    Op("reshape_tuple", lambda lib, a: a.reshape((6,)), (R(2, 3),), "ViewBackward0"),
    Op("expand", lambda lib, a: a.expand(2, 3), (R(3),), "ExpandBackward0"),
    Op("expand_minus_one", lambda lib, a: a.expand(4, -1), (R(1, 3),), "ExpandBackward0"),
    Op("expand_as", lambda lib, a, b: a.expand_as(b), (R(2, 1), R(2, 3)), "ExpandBackward0", shape_only=(1,)),
    Op("t", lambda lib, a: a.t(), (R(2, 3),), "TBackward0"),
    Op("transpose", lambda lib, a: a.transpose(0, 2), (R(2, 3, 2),), "TransposeBackward0", ("_saved_dim0", "_saved_dim1")),
    Op("permute", lambda lib, a: a.permute(2, 0, 1), (R(2, 3, 2),), "PermuteBackward0", ("_saved_dims",)),
    Op("squeeze", lambda lib, a: a.squeeze(), (R(2, 1, 3),), "SqueezeBackward0"),
    Op("squeeze_dim", lambda lib, a: a.squeeze(1), (R(2, 1, 3),), "SqueezeBackward1", ("_saved_dim",)),
    Op("squeeze_negative_dims", lambda lib, a: a.squeeze((-2, 0)), (R(2, 1, 3),), "SqueezeBackward2", ("_saved_dim",)),
    Op("unsqueeze", lambda lib, a: a.unsqueeze(1), (R(2, 3),), "UnsqueezeBackward0", ("_saved_dim",)),
    Op("unsqueeze_negative_dim", lambda lib, a: a.unsqueeze(-1), (R(2, 3),), "UnsqueezeBackward0", ("_saved_dim",)),
    Op("split", lambda lib, a: a.split(2, 1)[1], (R(2, 5),), "SplitBackward0", ("_saved_dim", "_saved_split_size", "_saved_self_sym_sizes")),
    Op("split_last_piece", lambda lib, a: lib.split(a, 2, -1)[2], (R(2, 5),), "SplitBackward0", ("_saved_dim",)),
    Op("split_sections", lambda lib, a: lib.split(a, [1, 3], dim=-1)[0], (R(2, 4),), "SplitWithSizesBackward0", ("_saved_dim", "_saved_split_sizes")),
    Op("split_with_sizes", lambda lib, a: a.split_with_sizes((2, 1))[1], (R(3, 2),), "SplitWithSizesBackward0", ("_saved_split_sizes",)),
    Op("chunk", lambda lib, a: a.chunk(2)[1], (R(3, 2),), "SplitBackward0", ("_saved_split_size",)),
    Op("unbind", lambda lib, a: lib.unbind(a, -1)[2], (R(2, 3),), "UnbindBackward0", ("_saved_dim",)),
    Op("getitem_int", lambda lib, a: a[1], (R(2, 3),), "SelectBackward0", ("_saved_dim", "_saved_index")),
    Op("getitem_negative_int", lambda lib, a: a[:, -1], (R(2, 3),), "SelectBackward0"),
    Op("getitem_two_ints", lambda lib, a: a[1, 2], (R(2, 3),), "SelectBackward0"),
    Op("getitem_slice", lambda lib, a: a[:, 1:3], (R(2, 4),), "SliceBackward0", ("_saved_dim", "_saved_start", "_saved_end", "_saved_step")),
    Op("getitem_step", lambda lib, a: a[::2], (R(5, 2),), "SliceBackward0", ("_saved_dim", "_saved_start", "_saved_step")),
    Op("getitem_int_slice", lambda lib, a: a[0, 1:], (R(2, 3),), "SliceBackward0"),
    Op("getitem_none", lambda lib, a: a[None], (R(2, 3),), "UnsqueezeBackward0", ("_saved_dim",)),
    Op("getitem_ellipsis", lambda lib, a: a[..., 1], (R(2, 3, 2),), "SelectBackward0", ("_saved_dim", "_saved_index")),
]

COPIES = [
    Op("clone", lambda lib, a: a.clone(), (R(2, 3),), "CloneBackward0"),
    Op("contiguous", lambda lib, a: a.t().contiguous(), (R(2, 3),), "CloneBackward0"),
    Op("reshape_copy", lambda lib, a: a.t().reshape(6), (R(2, 3),), "UnsafeViewBackward0"),
    Op("cat", lambda lib, a, b: lib.cat([a, b]), (R(2, 3), R(1, 3)), "CatBackward0", ("_saved_dim",)),
    Op("cat_dim", lambda lib, a, b: lib.cat((a, b), dim=1), (R(2, 3), R(2, 2)), "CatBackward0", ("_saved_dim",)),
    Op("cat_negative_dim", lambda lib, a, b: lib.cat((a, b), dim=-1), (R(2, 3), R(2, 2)), "CatBackward0", ("_saved_dim",)),
    Op("stack", lambda lib, a, b: lib.stack([a, b]), (R(2, 3), R(2, 3)), "StackBackward0", ("_saved_dim",)),
    Op("stack_dim", lambda lib, a, b: lib.stack([a, b], dim=1), (R(2, 3), R(2, 3)), "StackBackward0", ("_saved_dim",)),
    Op("stack_negative_dim", lambda lib, a, b: lib.stack([a, b], -2), (R(2, 3), R(2, 3)), "StackBackward0", ("_saved_dim",)),
    Op("index_tensor", lambda lib, a: a[lib.tensor([1, 0, 1])], (R(2, 3),), "IndexBackward0", ("_saved_indices",)),
    Op("index_list", lambda lib, a: a[[2, 0]], (R(3, 2),), "IndexBackward0", ("_saved_indices",)),
    Op("index_second_dim", lambda lib, a: a[:, lib.tensor([2, 0, 2])], (R(2, 3),), "IndexBackward0", ("_saved_indices",)),
]

MASKING = [
    Op("masked_fill_number", lambda lib, a: a.masked_fill(_cond(lib), 0.5), (R(2, 3),), "MaskedFillBackward0", ("_saved_mask",)),
    Op("masked_fill_function_mask_broadcast", lambda lib, a: lib.masked_fill(a, _cond(lib)[0], -1.0), (R(2, 3),), "MaskedFillBackward0", ("_saved_mask",)),
    Op("masked_fill_tensor_value", lambda lib, a, v: a.masked_fill(_cond(lib), v), (R(2, 3), R()), "MaskedFillBackward1", ("_saved_mask",)),
    Op("masked_fill_self_broadcast", lambda lib, a, v: lib.masked_fill(a, _cond(lib), v), (R(3), R()), "MaskedFillBackward1", ("_saved_mask",)),
    Op("masked_fill_inplace", lambda lib, a, v: a.clone().masked_fill_(_cond(lib)[1], v), (R(2, 3), R()), "MaskedFillBackward1", ("_saved_mask",)),
    Op("masked_fill_inplace_number", lambda lib, a: (a * 1).masked_fill_(_cond(lib), 2), (R(2, 3),), "MaskedFillBackward0", ("_saved_mask",)),
    Op("where_method_number", lambda lib, a: a.where(_cond(lib), 0.5), (R(2, 3),), "WhereBackward0", ("_saved_condition",)),
    Op("where_method_tensor", lambda lib, a, b: a.where(_cond(lib), b), (R(2, 3), R(2, 1)), "WhereBackward0", ("_saved_condition",)),
    Op("where_number_input", lambda lib, b: lib.where(_cond(lib), 2, b), (R(2, 3),), "WhereBackward0", ("_saved_condition",)),
    Op("nan_to_num", lambda lib, a: lib.nan_to_num(a), (R(2, 3),), "NanToNumBackward0", ("_saved_self",)),
    Op("nan_to_num_method", lambda lib, a: a.nan_to_num(1.0, 2.0, -2.0), (R(2, 3),), "NanToNumBackward0", ("_saved_self",)),
    Op("nan_to_num_inplace", lambda lib, a: a.clone().nan_to_num_(nan=1.0), (R(2, 3),), "NanToNumBackward0", ("_saved_self",)),
    Op("clip", lambda lib, a: lib.clip(a, -0.45, 0.55), (R(2, 3),), "ClampBackward1", ("_saved_self", "_saved_min", "_saved_max")),
    Op("clip_method", lambda lib, a: a.clip(min=0.3), (R(2, 3),), "ClampBackward1", ("_saved_min", "_saved_max")),
    Op("clip_inplace", lambda lib, a: a.clone().clip_(max=0.3), (R(2, 3),), "ClampBackward1", ("_saved_self", "_saved_min", "_saved_max")),
]

_AMAX_SAVED = ("_saved_dim", "_saved_keepdim", "_saved_self", "_saved_result")
_VAR_SAVED = ("_saved_dim", "_saved_correction", "_saved_keepdim", "_saved_self")

# Reductions over dims with torch's keepdim / correction arguments.
DIM_REDUCTIONS = [
    Op("amax", lambda lib, a: a.amax(), (R(2, 3),), "AmaxBackward0", _AMAX_SAVED),
    Op("amax_function_dim", lambda lib, a: lib.amax(a, 1), (R(2, 3),), "AmaxBackward0", _AMAX_SAVED),
    Op("amax_dims_keepdim", lambda lib, a: a.amax((0, -1), keepdim=True), (R(2, 3, 2),), "AmaxBackward0", _AMAX_SAVED),
    Op("amin", lambda lib, a: a.amin(dim=0), (R(2, 3),), "AminBackward0", _AMAX_SAVED),
    Op("amin_function_negative_dim", lambda lib, a: lib.amin(a, -1), (R(2, 3),), "AminBackward0", _AMAX_SAVED),
    Op("var", lambda lib, a: a.var(), (R(2, 3),), "VarBackward0", _VAR_SAVED),
    Op("var_function_dim", lambda lib, a: lib.var(a, 1), (R(2, 3),), "VarBackward0", _VAR_SAVED),
    Op("var_correction_keepdim", lambda lib, a: a.var(0, correction=0, keepdim=True), (R(3, 2),), "VarBackward0", _VAR_SAVED),
    Op("var_unbiased_false", lambda lib, a: a.var((0, 1), unbiased=False), (R(2, 3),), "VarBackward0", _VAR_SAVED),
    Op("std", lambda lib, a: a.std(), (R(2, 3),), "StdBackward0", (*_VAR_SAVED, "_saved_result")),
    Op("std_function_dim_correction", lambda lib, a: lib.std(a, dim=-1, correction=2), (R(2, 4),), "StdBackward0", (*_VAR_SAVED, "_saved_result")),
    Op("var_mean_var", lambda lib, a: lib.var_mean(a, 1)[0], (R(2, 3),), "VarMeanBackward0", _VAR_SAVED),
    Op("var_mean_mean", lambda lib, a: lib.var_mean(a, (0,), keepdim=True)[1], (R(2, 3),), "VarMeanBackward0", _VAR_SAVED),
    Op("std_mean_std", lambda lib, a: lib.std_mean(a)[0], (R(2, 3),), "StdMeanBackward0", (*_VAR_SAVED, "_saved_result0")),
    Op("std_mean_mean", lambda lib, a: lib.std_mean(a, 0, unbiased=False)[1], (R(2, 3),), "StdMeanBackward0", (*_VAR_SAVED, "_saved_result0")),
    Op("logsumexp", lambda lib, a: a.logsumexp(1), (R(2, 3),), "LogsumexpBackward0", ("_saved_dim", "_saved_keepdim", "_saved_self", "_saved_result")),
    Op("logsumexp_function_dims_keepdim", lambda lib, a: lib.logsumexp(a, (0, -1), keepdim=True), (R(2, 3, 2),), "LogsumexpBackward0", ("_saved_dim", "_saved_keepdim", "_saved_result")),
    Op("nansum", lambda lib, a: a.nansum(), (R(2, 3),), "NansumBackward0", ("_saved_dim", "_saved_keepdim", "_saved_self")),
    Op("nansum_function_dims_keepdim", lambda lib, a: lib.nansum(a, (0, -1), keepdim=True), (R(2, 3, 2),), "NansumBackward0", ("_saved_dim", "_saved_keepdim", "_saved_self")),
    Op("prod", lambda lib, a: a.prod(), (R(2, 3),), "ProdBackward0", ("_saved_self", "_saved_result")),
    Op("prod_function_dim", lambda lib, a: lib.prod(a, 1), (R(2, 3),), "ProdBackward1", ("_saved_dim", "_saved_keepdim", "_saved_self", "_saved_result")),
    Op("prod_negative_dim_keepdim", lambda lib, a: a.prod(-2, keepdim=True), (R(3, 2),), "ProdBackward1", ("_saved_dim", "_saved_keepdim", "_saved_result")),
]

_ADDMM_SAVED = (
    "_saved_mat1", "_saved_mat2", "_saved_alpha", "_saved_beta", "_saved_mat1_sym_sizes",
    "_saved_mat1_sym_strides", "_saved_mat2_sym_sizes", "_saved_mat2_sym_strides",
)
_BADDBMM_SAVED = ("_saved_batch1", "_saved_batch2", "_saved_alpha", "_saved_beta")
_ADDMV_SAVED = ("_saved_mat", "_saved_vec", "_saved_alpha", "_saved_beta")
_MM_SAVED = ("_saved_self", "_saved_mat2", "_saved_self_sym_sizes", "_saved_self_sym_strides", "_saved_mat2_sym_sizes", "_saved_mat2_sym_strides")

# The matrix products, and matmul for each rank combination: the graph torch records
# (folds into mm/mv, expands into bmm) depends on which operands require grad, which
# test_ops varies.
LINALG = [
    Op("addmm", lambda lib, s, a, b: lib.addmm(s, a, b), (R(4), R(2, 3), R(3, 4)), "AddmmBackward0", _ADDMM_SAVED),
    Op("addmm_beta_alpha", lambda lib, s, a, b: lib.addmm(s, a, b, beta=2, alpha=0.5), (R(2, 4), R(2, 3), R(3, 4)), "AddmmBackward0", _ADDMM_SAVED),
    Op("addmm_method", lambda lib, s, a, b: s.addmm(a, b, alpha=-1.5), (R(2, 1), R(2, 3), R(3, 4)), "AddmmBackward0", _ADDMM_SAVED),
    Op("addmm_linear", lambda lib, x, w, bias: lib.addmm(bias, x, w.t()), (R(2, 3), R(4, 3), R(4)), "AddmmBackward0", _ADDMM_SAVED),
    Op("addmm_inplace", lambda lib, s, a, b: s.clone().addmm_(a, b, beta=0.5, alpha=2), (R(2, 4), R(2, 3), R(3, 4)), "AddmmBackward0", _ADDMM_SAVED),
    Op("bmm", lambda lib, a, b: lib.bmm(a, b), (R(2, 2, 3), R(2, 3, 4)), "BmmBackward0", ("_saved_self", "_saved_mat2")),
    Op("bmm_method", lambda lib, a, b: a.bmm(b.transpose(1, 2)), (R(2, 2, 3), R(2, 4, 3)), "BmmBackward0", ("_saved_self", "_saved_mat2")),
    Op("baddbmm", lambda lib, s, a, b: lib.baddbmm(s, a, b, beta=2, alpha=3), (R(2, 1, 4), R(2, 2, 3), R(2, 3, 4)), "BaddbmmBackward0", _BADDBMM_SAVED),
    Op("baddbmm_method", lambda lib, s, a, b: s.baddbmm(a, b), (R(4), R(2, 2, 3), R(2, 3, 4)), "BaddbmmBackward0", _BADDBMM_SAVED),
    Op("baddbmm_inplace", lambda lib, s, a, b: s.clone().baddbmm_(a, b, alpha=0.5), (R(2, 2, 4), R(2, 2, 3), R(2, 3, 4)), "BaddbmmBackward0", _BADDBMM_SAVED),
    Op("dot", lambda lib, a, b: lib.dot(a, b), (R(3), R(3)), "DotBackward0", ("_saved_self", "_saved_tensor")),
    Op("dot_method", lambda lib, a, b: a.dot(b), (R(4), R(4)), "DotBackward0", ("_saved_self", "_saved_tensor")),
    Op("mv", lambda lib, a, b: lib.mv(a, b), (R(2, 3), R(3)), "MvBackward0", ("_saved_self", "_saved_vec")),
    Op("mv_method", lambda lib, a, b: a.mv(b), (R(3, 2), R(2)), "MvBackward0", ("_saved_self", "_saved_vec")),
    Op("addmv", lambda lib, s, a, b: lib.addmv(s, a, b, beta=0.5, alpha=2), (R(2), R(2, 3), R(3)), "AddmvBackward0", _ADDMV_SAVED),
    Op("addmv_method_broadcast", lambda lib, s, a, b: s.addmv(a, b), (R(), R(2, 3), R(3)), "AddmvBackward0", _ADDMV_SAVED),
    Op("addmv_inplace", lambda lib, s, a, b: s.clone().addmv_(a, b, beta=2), (R(2), R(2, 3), R(3)), "AddmvBackward0", _ADDMV_SAVED),
    Op("outer", lambda lib, a, b: lib.outer(a, b), (R(2), R(3)), "MulBackward0", ("_saved_self", "_saved_other")),
    Op("ger", lambda lib, a, b: lib.ger(a, b), (R(3), R(2)), "MulBackward0", ("_saved_self", "_saved_other")),
    Op("outer_method", lambda lib, a, b: a.outer(b), (R(2), R(2)), "MulBackward0"),
    Op("ger_method", lambda lib, a, b: a.ger(b), (R(2), R(3)), "MulBackward0"),
    Op("matmul_1d_2d", lambda lib, a, b: a @ b, (R(3), R(3, 4)), "SqueezeBackward4", ("_saved_dim", "_saved_self_sym_sizes")),
    Op("matmul_3d_2d", lambda lib, a, b: a @ b, (R(5, 2, 3), R(3, 4)), "UnsafeViewBackward0", ("_saved_self_sym_sizes",)),
    Op("matmul_4d_2d", lambda lib, a, b: lib.matmul(a, b), (R(2, 3, 2, 3), R(3, 2)), "UnsafeViewBackward0", ("_saved_self_sym_sizes",)),
    Op("matmul_3d_2d_transposed", lambda lib, a, b: a.transpose(1, 2) @ b, (R(2, 3, 2), R(3, 4)), "UnsafeViewBackward0", ("_saved_self_sym_sizes",)),
    Op("matmul_3d_1d", lambda lib, a, b: a @ b, (R(2, 2, 3), R(3)), "UnsafeViewBackward0", ("_saved_self_sym_sizes",)),
    Op("matmul_2d_3d", lambda lib, a, b: a @ b, (R(2, 3), R(4, 3, 2)), "CloneBackward0"),
    Op("matmul_1d_3d", lambda lib, a, b: a.matmul(b), (R(3), R(2, 3, 4)), "UnsafeViewBackward0", ("_saved_self_sym_sizes",)),
    Op("matmul_1d_4d", lambda lib, a, b: a @ b, (R(3), R(2, 2, 3, 2)), "UnsafeViewBackward0", ("_saved_self_sym_sizes",)),
    Op("matmul_3d_3d", lambda lib, a, b: a @ b, (R(2, 2, 3), R(2, 3, 4)), "UnsafeViewBackward0", ("_saved_self_sym_sizes",)),
    Op("matmul_3d_3d_batch_broadcast", lambda lib, a, b: a @ b, (R(1, 2, 3), R(3, 3, 2)), "CloneBackward0"),
    Op("matmul_3d_3d_rhs_batch_broadcast", lambda lib, a, b: a @ b, (R(3, 2, 3), R(1, 3, 2)), "UnsafeViewBackward0", ("_saved_self_sym_sizes",)),
    Op("matmul_4d_3d", lambda lib, a, b: lib.matmul(a, b), (R(2, 3, 2, 3), R(3, 3, 2)), "UnsafeViewBackward0", ("_saved_self_sym_sizes",)),
    Op("matmul_4d_4d_broadcast", lambda lib, a, b: a @ b, (R(2, 1, 2, 3), R(1, 3, 3, 2)), "UnsafeViewBackward0", ("_saved_self_sym_sizes",)),
    Op("tensordot", lambda lib, a, b: lib.tensordot(a, b), (R(2, 3, 4), R(3, 4, 2)), "ViewBackward0", ("_saved_self_sym_sizes",)),
    Op("tensordot_lists", lambda lib, a, b: lib.tensordot(a, b, dims=([1, 2], [1, 0])), (R(2, 3, 4), R(4, 3, 2)), "ViewBackward0", ("_saved_self_sym_sizes",)),
    Op("tensordot_size_one", lambda lib, a, b: lib.tensordot(a, b, dims=([1], [0])), (R(2, 1), R(3, 2)), "ViewBackward0", ("_saved_self_sym_sizes",)),
    Op("tensordot_outer", lambda lib, a, b: lib.tensordot(a, b, dims=0), (R(2, 3), R(2)), "ViewBackward0", ("_saved_self_sym_sizes",)),
    Op("kron", lambda lib, a, b: lib.kron(a, b), (R(2, 3), R(2, 2)), "UnsafeViewBackward0", ("_saved_self_sym_sizes",)),
    Op("kron_method_broadcast_ranks", lambda lib, a, b: a.kron(b), (R(3), R(2, 2)), "UnsafeViewBackward0", ("_saved_self_sym_sizes",)),
    Op("matmul_4d_1d", lambda lib, a, b: a @ b, (R(2, 2, 2, 3), R(3)), "UnsafeViewBackward0", ("_saved_self_sym_sizes",)),
    Op("einsum_mm", lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), (R(2, 3), R(3, 4)), "ViewBackward0", ("_saved_self_sym_sizes",)),
    Op("einsum_bmm", lambda lib, a, b: lib.einsum("bij,bjk->bik", a, b), (R(2, 2, 3), R(2, 3, 4)), "ViewBackward0", ("_saved_self_sym_sizes",)),
    Op("einsum_attention", lambda lib, q, k: lib.einsum("bhqd,bhkd->bhqk", q, k), (R(2, 2, 3, 4), R(2, 2, 5, 4)), "ViewBackward0", ("_saved_self_sym_sizes",)),
    Op("einsum_diagonal", lambda lib, a: lib.einsum("ii->i", a), (R(3, 3),), "PermuteBackward0", ("_saved_dims",)),
    Op("einsum_trace", lambda lib, a: lib.einsum("ii", a), (R(3, 3),), "SumBackward1", ("_saved_dim", "_saved_keepdim", "_saved_self_sym_sizes")),
    Op("einsum_dot", lambda lib, a, b: lib.einsum("i,i->", a, b), (R(4), R(4)), "ViewBackward0", ("_saved_self_sym_sizes",)),
    Op("einsum_transpose", lambda lib, a: lib.einsum("ij->ji", a), (R(2, 3),), "PermuteBackward0", ("_saved_dims",)),
    Op("einsum_ellipsis_broadcast", lambda lib, a, b: lib.einsum("...ij,...jk", a, b), (R(2, 2, 3), R(3, 4)), "ViewBackward0", ("_saved_self_sym_sizes",)),
    Op("einsum_outer", lambda lib, a, b: lib.einsum("i,j->ij", a, b), (R(2), R(3)), "MulBackward0", ("_saved_self", "_saved_other")),
    Op("einsum_three_operands", lambda lib, a, b, c: lib.einsum("ij,jk,kl->il", a, b, c), (R(2, 3), R(3, 2), R(2, 2)), "ViewBackward0", ("_saved_self_sym_sizes",)),
    Op("einsum_swapped_operands", lambda lib, w, x: lib.einsum("fd,bd->bf", w, x), (R(4, 3), R(2, 3)), "ViewBackward0", ("_saved_self_sym_sizes",)),
    Op("einsum_sum_one_side", lambda lib, a, b: lib.einsum("ijk,j->i", a, b), (R(2, 3, 2), R(3)), "ViewBackward0", ("_saved_self_sym_sizes",)),
]

def _idx(lib: Any) -> Any:
    """An index along dim 1 of a (2, 3) tensor, of shape (2, 2), with a repeat."""
    return lib.tensor([[0, 2], [1, 1]])


def _rows(lib: Any) -> Any:
    return lib.tensor([1, 0, 1])


# fmt: off
INDEXING = [
    Op("gather", lambda lib, a: lib.gather(a, 1, _idx(lib)), (R(2, 3),), "GatherBackward0", ("_saved_dim", "_saved_index", "_saved_self", "_saved_sparse_grad")),
    Op("gather_method_negative_dim", lambda lib, a: a.gather(-1, _idx(lib)[:, :1]), (R(2, 3),), "GatherBackward0", ("_saved_dim", "_saved_index")),
    Op("scatter", lambda lib, a, s: lib.scatter(a, 1, lib.tensor([[0, 2], [1, 0]]), s), (R(2, 3), R(2, 2)), "ScatterBackward0", ("_saved_dim", "_saved_index")),
    Op("scatter_method_value", lambda lib, a: a.scatter(0, lib.tensor([[1, 0, 1]]), 0.5), (R(2, 3),), "ScatterBackward1", ("_saved_dim", "_saved_index")),
    Op("scatter_inplace", lambda lib, a, s: a.clone().scatter_(1, lib.tensor([[2], [0]]), s), (R(2, 3), R(2, 1)), "ScatterBackward0", ("_saved_dim", "_saved_index")),
    Op("scatter_add", lambda lib, a, s: lib.scatter_add(a, 1, _idx(lib), s), (R(2, 3), R(2, 2)), "ScatterAddBackward0", ("_saved_dim", "_saved_index")),
    Op("scatter_add_inplace", lambda lib, a, s: (a * 1).scatter_add_(0, lib.tensor([[1, 1, 0]]), s), (R(2, 3), R(1, 3)), "ScatterAddBackward0", ("_saved_dim", "_saved_index")),
    Op("scatter_reduce_sum", lambda lib, a, s: a.scatter_reduce(1, _idx(lib), s, "sum"), (R(2, 3), R(2, 2)), "ScatterReduceBackward0", ("_saved_dim", "_saved_include_self", "_saved_index", "_saved_reduce", "_saved_result", "_saved_self", "_saved_src")),
    Op("scatter_reduce_mean", lambda lib, a, s: a.scatter_reduce(1, _idx(lib), s, "mean"), (R(2, 3), R(2, 2)), "ScatterReduceBackward0", ("_saved_dim", "_saved_include_self", "_saved_index", "_saved_reduce", "_saved_result", "_saved_self", "_saved_src")),
    Op("scatter_reduce_prod", lambda lib, a, s: a.scatter_reduce(1, _idx(lib), s, "prod", include_self=False), (R(2, 3), R(2, 2)), "ScatterReduceBackward0", ("_saved_dim", "_saved_include_self", "_saved_index", "_saved_reduce", "_saved_result", "_saved_self", "_saved_src")),
    Op("scatter_reduce_amax", lambda lib, a, s: a.scatter_reduce(1, _idx(lib), s, "amax"), (R(2, 3), R(2, 2)), "ScatterReduceBackward0", ("_saved_dim", "_saved_include_self", "_saved_index", "_saved_reduce", "_saved_result", "_saved_self", "_saved_src")),
    Op("scatter_reduce_amin", lambda lib, a, s: a.scatter_reduce(1, _idx(lib), s, "amin", include_self=False), (R(2, 3), R(2, 2)), "ScatterReduceBackward0", ("_saved_dim", "_saved_include_self", "_saved_index", "_saved_reduce", "_saved_result", "_saved_self", "_saved_src")),
    Op("index_select", lambda lib, a: lib.index_select(a, 1, _rows(lib)), (R(2, 3),), "IndexSelectBackward0", ("_saved_dim", "_saved_index", "_saved_self_sym_sizes")),
    Op("index_select_method", lambda lib, a: a.index_select(-2, lib.tensor([1])), (R(2, 3),), "IndexSelectBackward0", ("_saved_dim", "_saved_index")),
    Op("index_add", lambda lib, a, s: lib.index_add(a, 1, _rows(lib), s, alpha=2), (R(2, 3), R(2, 3)), "IndexAddBackward0", ("_saved_alpha", "_saved_dim", "_saved_index", "_saved_source", "_saved_source_dim")),
    Op("index_add_inplace", lambda lib, a, s: a.clone().index_add_(0, lib.tensor([1]), s), (R(2, 3), R(1, 3)), "IndexAddBackward0", ("_saved_alpha", "_saved_source")),
    Op("index_copy", lambda lib, a, s: lib.index_copy(a, 1, lib.tensor([2, 0]), s), (R(2, 3), R(2, 2)), "IndexCopyBackward0", ("_saved_dim", "_saved_index", "_saved_source", "_saved_source_dim")),
    Op("index_copy_inplace", lambda lib, a, s: (a * 1).index_copy_(0, lib.tensor([1]), s), (R(2, 3), R(1, 3)), "IndexCopyBackward0", ("_saved_index", "_saved_source")),
    Op("masked_select", lambda lib, a: lib.masked_select(a, _cond(lib)), (R(2, 3),), "MaskedSelectBackward0", ("_saved_mask", "_saved_self")),
    Op("masked_select_broadcast", lambda lib, a: a.masked_select(_cond(lib)), (R(3),), "MaskedSelectBackward0", ("_saved_mask", "_saved_self")),
    Op("masked_scatter", lambda lib, a, s: lib.masked_scatter(a, _cond(lib), s), (R(2, 3), R(5)), "MaskedScatterBackward0", ("_saved_mask", "_saved_source_sym_sizes")),
    Op("masked_scatter_inplace", lambda lib, a, s: a.clone().masked_scatter_(_cond(lib)[0], s), (R(2, 3), R(2, 3)), "MaskedScatterBackward0", ("_saved_mask", "_saved_source_sym_sizes")),
    Op("take_along_dim", lambda lib, a: lib.take_along_dim(a, _idx(lib), dim=1), (R(2, 3),), "GatherBackward0", ("_saved_dim", "_saved_index", "_saved_self")),
    Op("take_along_dim_broadcast", lambda lib, a: a.take_along_dim(lib.tensor([[2, 0]]), 1), (R(2, 3),), "GatherBackward0", ("_saved_dim", "_saved_index")),
    Op("take_along_dim_flat", lambda lib, a: lib.take_along_dim(a, lib.tensor([5, 0, 5])), (R(2, 3),), "GatherBackward0", ("_saved_dim", "_saved_index", "_saved_self")),
    Op("index_put", lambda lib, a, v: a.index_put((lib.tensor([1, 0]),), v), (R(2, 3), R(3)), "IndexPutBackward0", ("_saved_accumulate", "_saved_indices")),
    Op("index_put_accumulate", lambda lib, a, v: lib.index_put(a, (_rows(lib), lib.tensor([0, 2, 0])), v, accumulate=True), (R(2, 3), R(3)), "IndexPutBackward0", ("_saved_accumulate", "_saved_indices")),
    Op("index_put_inplace", lambda lib, a, v: a.clone().index_put_((lib.tensor([0]),), v, True), (R(2, 3), R()), "IndexPutBackward0", ("_saved_accumulate", "_saved_indices")),
]
# fmt: on

# The shape ops: copies (flip, roll, repeat, ...) and views (narrow, diagonal, unfold, ...).
SHAPE = [
    Op("flip", lambda lib, a: a.flip(0, -1), (R(2, 3),), "FlipBackward0", ("_saved_dims",)),
    Op("fliplr_function", lambda lib, a: lib.fliplr(a), (R(2, 3),), "FlipBackward0", ("_saved_dims",)),
    Op(
        "roll",
        lambda lib, a: lib.roll(a, (1, -2), (0, -1)),
        (R(2, 3),),
        "RollBackward0",
        ("_saved_shifts", "_saved_dims"),
    ),
    Op("roll_flat", lambda lib, a: a.roll(2), (R(2, 3),), "RollBackward0", ("_saved_shifts", "_saved_dims")),
    Op(
        "repeat",
        lambda lib, a: a.repeat(2, 1, 2),
        (R(2, 3),),
        "RepeatBackward0",
        ("_saved_repeats", "_saved_self_sym_sizes"),
    ),
    Op("tile", lambda lib, a: lib.tile(a, (2,)), (R(2, 3),), "RepeatBackward0", ("_saved_repeats",)),
    Op(
        "repeat_interleave",
        lambda lib, a: a.repeat_interleave(2, dim=1),
        (R(2, 3),),
        "ViewBackward0",
        ("_saved_self_sym_sizes",),
    ),
    Op(
        "repeat_interleave_tensor",
        lambda lib, a: lib.repeat_interleave(a, lib.tensor([2, 0, 1]), -1),
        (R(2, 3),),
        "IndexSelectBackward0",
        ("_saved_dim", "_saved_index", "_saved_self_sym_sizes"),
    ),
    Op(
        "narrow",
        lambda lib, a: a.narrow(-1, -2, 2),
        (R(2, 3),),
        "SliceBackward0",
        ("_saved_dim", "_saved_start", "_saved_end"),
    ),
    Op(
        "select_function",
        lambda lib, a: lib.select(a, 1, -1),
        (R(2, 3),),
        "SelectBackward0",
        ("_saved_dim", "_saved_index"),
    ),
    Op("flatten", lambda lib, a: a.flatten(1), (R(2, 3, 2),), "ViewBackward0", ("_saved_self_sym_sizes",)),
    Op("flatten_copy", lambda lib, a: lib.flatten(a.transpose(0, 1)), (R(2, 3),), "UnsafeViewBackward0"),
    Op("unflatten", lambda lib, a: a.unflatten(-1, (2, -1)), (R(3, 4),), "ViewBackward0", ("_saved_self_sym_sizes",)),
    Op("movedim", lambda lib, a: lib.movedim(a, (0, -1), (1, 0)), (R(2, 3, 2),), "PermuteBackward0", ("_saved_dims",)),
    Op("swapaxes", lambda lib, a: a.swapaxes(-1, 0), (R(2, 3),), "TransposeBackward0", ("_saved_dim0", "_saved_dim1")),
    Op("triu", lambda lib, a: a.triu(1), (R(3, 4),), "TriuBackward0", ("_saved_diagonal",)),
    Op("tril_batched", lambda lib, a: lib.tril(a, -1), (R(2, 3, 3),), "TrilBackward0", ("_saved_diagonal",)),
    Op("triu_inplace", lambda lib, a: a.clone().triu_(-1), (R(3, 3),), "TriuBackward0", ("_saved_diagonal",)),
    Op(
        "diag_of_vector",
        lambda lib, a: lib.diag(a, -1),
        (R(3),),
        "DiagEmbedBackward0",
        ("_saved_offset", "_saved_dim1", "_saved_dim2"),
    ),
    Op(
        "diag_of_matrix",
        lambda lib, a: a.diag(1),
        (R(3, 4),),
        "DiagonalBackward0_copy",
        ("_saved_offset", "_saved_dim1", "_saved_dim2", "_saved_self_sym_sizes"),
    ),
    Op(
        "diagonal",
        lambda lib, a: a.diagonal(-1, 2, 0),
        (R(3, 2, 4),),
        "DiagonalBackward0",
        ("_saved_offset", "_saved_dim1", "_saved_dim2", "_saved_self_sym_sizes"),
    ),
    Op(
        "diag_embed",
        lambda lib, a: lib.diag_embed(a, 1, 0, -1),
        (R(2, 3),),
        "DiagEmbedBackward0",
        ("_saved_offset", "_saved_dim1", "_saved_dim2"),
    ),
    Op(
        "unfold",
        lambda lib, a: a.unfold(-1, 3, 2),
        (R(2, 6),),
        "UnfoldBackward0",
        ("_saved_dimension", "_saved_size", "_saved_step", "_saved_self_sym_sizes"),
    ),
    Op("unfold_overlapping", lambda lib, a: a.unfold(0, 2, 1), (R(4, 2),), "UnfoldBackward0"),
    Op("T", lambda lib, a: a.T, (R(2, 3),), "PermuteBackward0", ("_saved_dims",)),
    Op("mT", lambda lib, a: a.mT, (R(2, 2, 3),), "TransposeBackward0", ("_saved_dim0", "_saved_dim1")),
]

_SELECT_SAVED = ("_saved_dim", "_saved_indices", "_saved_keepdim", "_saved_self_sym_sizes")
_SORT_SAVED = ("_saved_dim", "_saved_indices", "_saved_self_sym_sizes")
_NORM_SAVED = ("_saved_dim", "_saved_keepdim", "_saved_ord", "_saved_self", "_saved_result")

# Scans, sorting, selection along a dim and vector norms (inputs without ties).
SORTING = [
    Op("cumsum", lambda lib, a: a.cumsum(1), (R(2, 3),), "CumsumBackward0", ("_saved_dim",)),
    Op(
        "cumsum_function_negative_dim", lambda lib, a: lib.cumsum(a, -2), (R(3, 2),), "CumsumBackward0", ("_saved_dim",)
    ),
    Op(
        "cumprod",
        lambda lib, a: a.cumprod(-1),
        (R(2, 3),),
        "CumprodBackward0",
        ("_saved_dim", "_saved_self", "_saved_result"),
    ),
    Op(
        "cumprod_function",
        lambda lib, a: lib.cumprod(a, 0),
        (R(3, 2),),
        "CumprodBackward0",
        ("_saved_dim", "_saved_self", "_saved_result"),
    ),
    Op("sort", lambda lib, a: a.sort()[0], (R(2, 3),), "SortBackward0", _SORT_SAVED),
    Op(
        "sort_function_descending", lambda lib, a: lib.sort(a, 0, True).values, (R(3, 2),), "SortBackward0", _SORT_SAVED
    ),
    Op("sort_stable", lambda lib, a: a.sort(stable=True, dim=-2).values, (R(3, 2),), "SortBackward1", _SORT_SAVED),
    Op("msort", lambda lib, a: lib.msort(a), (R(3, 2),), "SortBackward0", _SORT_SAVED),
    Op("topk", lambda lib, a: a.topk(2).values, (R(2, 3),), "TopkBackward0", _SORT_SAVED),
    Op(
        "topk_function_smallest",
        lambda lib, a: lib.topk(a, 2, 0, largest=False)[0],
        (R(3, 2),),
        "TopkBackward0",
        _SORT_SAVED,
    ),
    Op("median", lambda lib, a: a.median(), (R(2, 3),), "MedianBackward0", ("_saved_self", "_saved_result")),
    Op("median_function_dim", lambda lib, a: lib.median(a, 1).values, (R(2, 3),), "MedianBackward1", _SELECT_SAVED),
    Op(
        "median_negative_dim_keepdim",
        lambda lib, a: a.median(-2, keepdim=True)[0],
        (R(3, 2),),
        "MedianBackward1",
        _SELECT_SAVED,
    ),
    Op("kthvalue", lambda lib, a: a.kthvalue(2).values, (R(2, 3),), "KthvalueBackward0", _SELECT_SAVED),
    Op(
        "kthvalue_function_dim_keepdim",
        lambda lib, a: lib.kthvalue(a, 3, 0, True)[0],
        (R(3, 2),),
        "KthvalueBackward0",
        _SELECT_SAVED,
    ),
    Op("norm", lambda lib, a: a.norm(), (R(2, 3),), "LinalgVectorNormBackward0", _NORM_SAVED),
    Op("norm_function_p1_dim", lambda lib, a: lib.norm(a, 1, 1), (R(2, 3),), "LinalgVectorNormBackward0", _NORM_SAVED),
    Op(
        "norm_p3_dims_keepdim",
        lambda lib, a: a.norm(3.0, (0, -1), keepdim=True),
        (R(2, 3, 2),),
        "LinalgVectorNormBackward0",
        _NORM_SAVED,
    ),
    Op("norm_inf", lambda lib, a: a.norm(float("inf"), 0), (R(2, 3),), "LinalgVectorNormBackward0", _NORM_SAVED),
    Op(
        "norm_fro_dims", lambda lib, a: lib.norm(a, "fro", (0, 1)), (R(2, 3),), "LinalgVectorNormBackward0", _NORM_SAVED
    ),
]


def _F(lib: Any) -> Any:
    return lib.nn.functional


_ELU_SAVED = ("_saved_self", "_saved_alpha", "_saved_scale", "_saved_input_scale")

# torch.nn.functional's activations: the activation table's nodes (with their
# scalar parameters saved), the in-place forms' nodes, and torch's composites.
ACTIVATIONS = [
    Op("F_relu", lambda lib, a: _F(lib).relu(a), (R(2, 3),), "ReluBackward0", ("_saved_result",)),
    Op(
        "F_relu6",
        lambda lib, a: _F(lib).relu6(a * 4),
        (R(2, 3),),
        "HardtanhBackward0",
        ("_saved_self", "_saved_min_val", "_saved_max_val"),
    ),
    Op(
        "F_leaky_relu",
        lambda lib, a: _F(lib).leaky_relu(a, 0.2),
        (R(2, 3),),
        "LeakyReluBackward0",
        ("_saved_self", "_saved_negative_slope"),
    ),
    Op(
        "F_leaky_relu_inplace",
        lambda lib, a: _F(lib).leaky_relu(a * 1, inplace=True),
        (R(2, 3),),
        "LeakyReluBackward1",
        ("_saved_result", "_saved_negative_slope"),
    ),
    Op("F_elu", lambda lib, a: _F(lib).elu(a, 0.5), (R(2, 3),), "EluBackward0", _ELU_SAVED),
    Op(
        "F_elu_inplace",
        lambda lib, a: _F(lib).elu_(a * 1, 2.0),
        (R(2, 3),),
        "EluBackward1",
        ("_saved_result", "_saved_alpha", "_saved_scale"),
    ),
    Op("F_selu", lambda lib, a: _F(lib).selu(a), (R(2, 3),), "EluBackward0", _ELU_SAVED),
    Op(
        "selu_function_inplace",
        lambda lib, a: lib.selu_(a * 1),
        (R(2, 3),),
        "EluBackward1",
        ("_saved_result", "_saved_alpha", "_saved_scale"),
    ),
    Op("F_celu", lambda lib, a: _F(lib).celu(a, 2.0), (R(2, 3),), "CeluBackward0", ("_saved_self", "_saved_alpha")),
    Op(
        "celu_function_inplace",
        lambda lib, a: lib.celu_(a * 1, 0.5),
        (R(2, 3),),
        "CeluBackward1",
        ("_saved_result", "_saved_alpha"),
    ),
    Op("F_gelu", lambda lib, a: _F(lib).gelu(a), (R(2, 3),), "GeluBackward0", ("_saved_self", "_saved_approximate")),
    Op(
        "F_gelu_tanh",
        lambda lib, a: _F(lib).gelu(a, approximate="tanh"),
        (R(2, 3),),
        "GeluBackward0",
        ("_saved_self", "_saved_approximate"),
    ),
    Op("F_silu", lambda lib, a: _F(lib).silu(a), (R(2, 3),), "SiluBackward0", ("_saved_self",)),
    Op(
        "F_silu_inplace",
        lambda lib, a: _F(lib).silu(a * 1, inplace=True),
        (R(2, 3),),
        "SiluBackward0",
        ("_saved_self",),
    ),
    Op("F_mish", lambda lib, a: _F(lib).mish(a * 3), (R(2, 3),), "MishBackward0", ("_saved_self",)),
    Op(
        "F_softplus",
        lambda lib, a: _F(lib).softplus(a),
        (R(2, 3),),
        "SoftplusBackward0",
        ("_saved_self", "_saved_beta", "_saved_threshold"),
    ),
    Op(
        "F_softplus_beta_threshold",
        lambda lib, a: _F(lib).softplus(a, 2, 1.0),
        (R(2, 3),),
        "SoftplusBackward0",
        ("_saved_self", "_saved_beta", "_saved_threshold"),
    ),
    Op("F_softsign", lambda lib, a: _F(lib).softsign(a), (R(2, 3),), "DivBackward0", ("_saved_self", "_saved_other")),
    Op(
        "F_hardtanh",
        lambda lib, a: _F(lib).hardtanh(a, -0.5, 0.5),
        (R(2, 3),),
        "HardtanhBackward0",
        ("_saved_self", "_saved_min_val", "_saved_max_val"),
    ),
    Op(
        "F_hardtanh_inplace",
        lambda lib, a: _F(lib).hardtanh_(a * 2),
        (R(2, 3),),
        "HardtanhBackward0",
        ("_saved_self", "_saved_min_val", "_saved_max_val"),
    ),
    Op(
        "F_hardsigmoid",
        lambda lib, a: _F(lib).hardsigmoid(a * 4),
        (R(2, 3),),
        "HardsigmoidBackward0",
        ("_saved_self",),
        double_backward=False,
    ),
    Op("F_hardswish", lambda lib, a: _F(lib).hardswish(a * 4), (R(2, 3),), "HardswishBackward0", ("_saved_self",)),
    Op(
        "F_hardswish_inplace",
        lambda lib, a: _F(lib).hardswish(a * 4, inplace=True),
        (R(2, 3),),
        "HardswishBackward0",
        ("_saved_self",),
    ),
    Op(
        "F_logsigmoid",
        lambda lib, a: _F(lib).logsigmoid(a * 3),
        (R(2, 3),),
        "LogSigmoidBackward0",
        ("_saved_self", "_saved_buffer"),
    ),
    Op("F_tanhshrink", lambda lib, a: _F(lib).tanhshrink(a), (R(2, 3),), "SubBackward0", ("_saved_alpha",)),
    Op(
        "F_softshrink",
        lambda lib, a: _F(lib).softshrink(a),
        (R(2, 3),),
        "SoftshrinkBackward0",
        ("_saved_self", "_saved_lambd"),
    ),
    Op(
        "F_hardshrink",
        lambda lib, a: _F(lib).hardshrink(a, 0.6),
        (R(2, 3),),
        "HardshrinkBackward0",
        ("_saved_self", "_saved_lambd"),
    ),
    Op(
        "hardshrink_method",
        lambda lib, a: a.hardshrink(),
        (R(2, 3),),
        "HardshrinkBackward0",
        ("_saved_self", "_saved_lambd"),
    ),
    Op(
        "F_threshold",
        lambda lib, a: _F(lib).threshold(a, 0.1, 2.0),
        (R(2, 3),),
        "ThresholdBackward0",
        ("_saved_self", "_saved_threshold"),
    ),
    Op(
        "F_threshold_inplace",
        lambda lib, a: _F(lib).threshold_(a * 1, -0.1, 2.0),
        (R(2, 3),),
        "ThresholdBackward1",
        ("_saved_self", "_saved_threshold"),
    ),
    Op("F_sigmoid", lambda lib, a: _F(lib).sigmoid(a), (R(2, 3),), "SigmoidBackward0", ("_saved_result",)),
    Op("F_tanh", lambda lib, a: _F(lib).tanh(a), (R(2, 3),), "TanhBackward0", ("_saved_result",)),
    Op(
        "F_softmax",
        lambda lib, a: _F(lib).softmax(a, dim=1),
        (R(2, 3),),
        "SoftmaxBackward0",
        ("_saved_dim", "_saved_result"),
    ),
    Op(
        "F_log_softmax",
        lambda lib, a: _F(lib).log_softmax(a, dim=-1),
        (R(2, 3),),
        "LogSoftmaxBackward0",
        ("_saved_dim", "_saved_result"),
    ),
    Op(
        "F_softmin",
        lambda lib, a: _F(lib).softmin(a, dim=0),
        (R(2, 3),),
        "SoftmaxBackward0",
        ("_saved_dim", "_saved_result"),
    ),
]

# fmod and remainder: a Python number records the *Backward0 node (nothing saved),
# a tensor the *Backward1 node.
MODULO = [
    Op("fmod_number", lambda lib, a: lib.fmod(a, 0.3), (R(2, 3),), "FmodBackward0"),
    Op(
        "fmod_tensor_broadcast",
        lambda lib, a, b: lib.fmod(a, b),
        (R(2, 3), P(3)),
        "FmodBackward1",
        ("_saved_self", "_saved_other"),
    ),
    Op(
        "fmod_method_inplace",
        lambda lib, a, b: (a * 1).fmod_(b),
        (R(2, 3), P(2, 3)),
        "FmodBackward1",
        ("_saved_self", "_saved_other"),
    ),
    Op("remainder_number", lambda lib, a: lib.remainder(a, 0.3), (R(2, 3),), "RemainderBackward0"),
    Op("remainder_operator", lambda lib, a: a % 0.7, (R(2, 3),), "RemainderBackward0"),
    Op(
        "remainder_tensor",
        lambda lib, a, b: a.remainder(b),
        (R(2, 3), P(2, 3)),
        "RemainderBackward1",
        ("_saved_self", "_saved_other"),
    ),
    Op(
        "remainder_operator_tensor",
        lambda lib, a, b: a % b,
        (R(2, 3), P(2, 1)),
        "RemainderBackward1",
        ("_saved_self", "_saved_other"),
    ),
    Op("remainder_inplace_number", lambda lib, a: (a * 1).remainder_(0.4), (R(2, 3),), "RemainderBackward0"),
]


def _const(lib: Any, like: Any, values: Any) -> Any:
    """A constant tensor of ``like``'s dtype (a target that needs no gradient)."""
    return lib.tensor(values, dtype=like.dtype)


_SIGNS = [[1.0, -1.0, 1.0], [-1.0, 1.0, 1.0]]
_LOSS_SAVED = ("_saved_reduction", "_saved_self", "_saved_target")
_NLL_SAVED = (
    "_saved_ignore_index",
    "_saved_reduction",
    "_saved_self",
    "_saved_target",
    "_saved_total_weight",
    "_saved_weight",
)

# lerp, addcmul, addcdiv (functions, methods, in-place forms) and glu.
TERNARY = [
    Op("lerp_number", lambda lib, a, b: lib.lerp(a, b, 0.3), (R(2, 3), R(2, 3)), "LerpBackward0", ("_saved_weight",)),
    Op("lerp_number_high_method", lambda lib, a, b: a.lerp(b, 0.8), (R(2, 3), R(3)), "LerpBackward0"),
    Op(
        "lerp_tensor",
        lambda lib, a, b, w: lib.lerp(a, b, w),
        (R(2, 3), R(3), R(2, 3)),
        "LerpBackward1",
        ("_saved_self", "_saved_end", "_saved_weight"),
    ),
    Op(
        "lerp_tensor_inplace",
        lambda lib, a, b, w: (a * 1).lerp_(b, w),
        (R(2, 3), R(2, 3), R(3)),
        "LerpBackward1",
        ("_saved_self", "_saved_end", "_saved_weight"),
    ),
    Op("lerp_number_inplace", lambda lib, a, b: (a * 1).lerp_(b, 0.6), (R(2, 3), R(2, 3)), "LerpBackward0"),
    Op(
        "addcmul",
        lambda lib, a, b, c: lib.addcmul(a, b, c, value=0.5),
        (R(2, 3), R(2, 3), R(3)),
        "AddcmulBackward0",
        ("_saved_tensor1", "_saved_tensor2", "_saved_value"),
    ),
    Op(
        "addcmul_inplace",
        lambda lib, a, b, c: (a * 1).addcmul_(b, c, value=2),
        (R(2, 3), R(2, 1), R(2, 3)),
        "AddcmulBackward0",
        ("_saved_tensor1", "_saved_tensor2", "_saved_value"),
    ),
    Op(
        "addcdiv",
        lambda lib, a, b, c: lib.addcdiv(a, b, c, value=-1.5),
        (R(2, 3), R(2, 3), P(2, 3)),
        "AddcdivBackward0",
        ("_saved_tensor1", "_saved_tensor2", "_saved_value"),
    ),
    Op(
        "addcdiv_method_inplace",
        lambda lib, a, b, c: (a * 1).addcdiv_(b, c),
        (R(2, 3), R(3), P(2, 3)),
        "AddcdivBackward0",
        ("_saved_tensor1", "_saved_tensor2", "_saved_value"),
    ),
    Op("F_glu", lambda lib, a: _F(lib).glu(a), (R(2, 4),), "GluBackward0", ("_saved_dim", "_saved_self")),
    Op("F_glu_dim0", lambda lib, a: _F(lib).glu(a, 0), (R(4, 3),), "GluBackward0", ("_saved_dim", "_saved_self")),
]

# torch.nn.functional's losses: the native ones' nodes (which also differentiate
# the target where torch does), and torch's composites.
LOSSES = [
    Op("F_mse_loss", lambda lib, a, b: _F(lib).mse_loss(a, b), (R(2, 3), R(2, 3)), "MseLossBackward0", _LOSS_SAVED),
    Op(
        "F_mse_loss_sum",
        lambda lib, a, b: _F(lib).mse_loss(a, b, reduction="sum"),
        (R(2, 3), R(2, 3)),
        "MseLossBackward0",
        _LOSS_SAVED,
    ),
    Op(
        "F_mse_loss_none",
        lambda lib, a, b: _F(lib).mse_loss(a, b, reduction="none"),
        (R(2, 3), R(2, 3)),
        "MseLossBackward0",
    ),
    Op("F_l1_loss", lambda lib, a, b: _F(lib).l1_loss(a, -b), (P(2, 3), P(2, 3)), "MeanBackward0"),
    Op(
        "F_l1_loss_none", lambda lib, a, b: _F(lib).l1_loss(a, -b, reduction="none"), (P(2, 3), P(2, 3)), "AbsBackward0"
    ),
    Op(
        "F_smooth_l1_loss",
        lambda lib, a, b: _F(lib).smooth_l1_loss(a, b * 2, beta=0.5),
        (R(2, 3), R(2, 3)),
        "SmoothL1LossBackward0",
        ("_saved_beta", *_LOSS_SAVED),
    ),
    Op(
        "F_smooth_l1_loss_none",
        lambda lib, a, b: _F(lib).smooth_l1_loss(a, b, reduction="none"),
        (R(2, 3), R(2, 3)),
        "SmoothL1LossBackward0",
    ),
    Op(
        "F_huber_loss",
        lambda lib, a, b: _F(lib).huber_loss(a, b * 2, delta=0.7),
        (R(2, 3), R(2, 3)),
        "HuberLossBackward0",
        ("_saved_delta", *_LOSS_SAVED),
    ),
    Op(
        "F_huber_loss_sum",
        lambda lib, a, b: _F(lib).huber_loss(a, b, reduction="sum"),
        (R(2, 3), R(2, 3)),
        "HuberLossBackward0",
    ),
    Op(
        "F_soft_margin_loss",
        lambda lib, a: _F(lib).soft_margin_loss(a, _const(lib, a, _SIGNS)),
        (R(2, 3),),
        "SoftMarginLossBackward0",
        _LOSS_SAVED,
    ),
    Op(
        "F_binary_cross_entropy",
        lambda lib, a, b: _F(lib).binary_cross_entropy(a / 2.5, b / 2.5),
        (P(2, 3), P(2, 3)),
        "BinaryCrossEntropyBackward0",
        ("_saved_weight", *_LOSS_SAVED),
    ),
    Op(
        "F_binary_cross_entropy_weight_none",
        lambda lib, a, b: _F(lib).binary_cross_entropy(
            a / 2.5, b / 2.5, _const(lib, a, [1.0, 2.0, 0.5]), reduction="none"
        ),
        (P(2, 3), P(2, 3)),
        "BinaryCrossEntropyBackward0",
        ("_saved_weight", *_LOSS_SAVED),
    ),
    Op(
        "F_binary_cross_entropy_with_logits",
        lambda lib, a, b: _F(lib).binary_cross_entropy_with_logits(a, b / 2.5),
        (R(2, 3), P(2, 3)),
        "BinaryCrossEntropyWithLogitsBackward0",
        ("_saved_weight", "_saved_pos_weight", *_LOSS_SAVED),
    ),
    Op(
        "F_binary_cross_entropy_with_logits_weights",
        lambda lib, a, b: _F(lib).binary_cross_entropy_with_logits(
            a, b / 2.5, _const(lib, a, [[1.0], [0.5]]), reduction="sum", pos_weight=_const(lib, a, [2.0, 0.5, 1.0])
        ),
        (R(2, 3), P(2, 3)),
        "BinaryCrossEntropyWithLogitsBackward0",
        ("_saved_weight", "_saved_pos_weight", *_LOSS_SAVED),
    ),
    Op(
        "F_nll_loss", lambda lib, a: _F(lib).nll_loss(a, lib.tensor([2, 0])), (R(2, 3),), "NllLossBackward0", _NLL_SAVED
    ),
    Op(
        "F_nll_loss_weight_ignore",
        lambda lib, a: _F(lib).nll_loss(a, lib.tensor([2, 0, 1]), _const(lib, a, [1.0, 2.0, 0.5]), ignore_index=0),
        (R(3, 3),),
        "NllLossBackward0",
        _NLL_SAVED,
    ),
    Op(
        "F_nll_loss_none",
        lambda lib, a: _F(lib).nll_loss(a, lib.tensor([2, 0, 1]), reduction="none"),
        (R(3, 3),),
        "NllLossBackward0",
        _NLL_SAVED,
    ),
    Op(
        "F_nll_loss_1d",
        lambda lib, a: _F(lib).nll_loss(a, lib.tensor(1), reduction="sum"),
        (R(3),),
        "NllLossBackward0",
        _NLL_SAVED,
    ),
    Op(
        "F_nll_loss_2d",
        lambda lib, a: _F(lib).nll_loss(a, lib.tensor([[[0, 2], [1, 1]]])),
        (R(1, 3, 2, 2),),
        "NllLoss2DBackward0",
        _NLL_SAVED,
    ),
    Op(
        "F_nll_loss_kdim_none",
        lambda lib, a: _F(lib).nll_loss(a, lib.tensor([[0, 2], [1, 1]]), reduction="none"),
        (R(2, 3, 2),),
        "ViewBackward0",
    ),
    Op(
        "F_cross_entropy",
        lambda lib, a: _F(lib).cross_entropy(a, lib.tensor([2, 0])),
        (R(2, 3),),
        "NllLossBackward0",
        _NLL_SAVED,
    ),
    Op(
        "F_cross_entropy_kdim",
        lambda lib, a: _F(lib).cross_entropy(a, lib.tensor([[0, 2], [1, 1]]), reduction="sum"),
        (R(2, 3, 2),),
        "NllLoss2DBackward0",
    ),
    Op(
        "F_kl_div_batchmean",
        lambda lib, a: _F(lib).kl_div(a, _const(lib, a, [[0.2, 0.3, 0.5], [0.0, 0.6, 0.4]]), reduction="batchmean"),
        (R(2, 3),),
        "DivBackward0",
    ),
    Op(
        "F_kl_div_log_target",
        lambda lib, a, b: _F(lib).kl_div(a, b, reduction="sum", log_target=True),
        (R(2, 3), R(2, 3)),
        "SumBackward0",
    ),
    Op(
        "F_poisson_nll_loss",
        lambda lib, a: _F(lib).poisson_nll_loss(a, _const(lib, a, [[1.0, 2.0, 0.0], [3.0, 1.0, 2.0]]), full=True),
        (R(2, 3),),
        "MeanBackward0",
    ),
    Op(
        "F_gaussian_nll_loss",
        lambda lib, a, b, v: _F(lib).gaussian_nll_loss(a, b, v, reduction="sum"),
        (R(2, 3), R(2, 3), P(2, 3)),
        "SumBackward0",
    ),
]

_MAX_POOL_SAVED = (
    "_saved_self",
    "_saved_result1",
    "_saved_kernel_size",
    "_saved_stride",
    "_saved_padding",
    "_saved_dilation",
    "_saved_ceil_mode",
)
_AVG_POOL_SAVED = (
    "_saved_self",
    "_saved_kernel_size",
    "_saved_stride",
    "_saved_padding",
    "_saved_ceil_mode",
    "_saved_count_include_pad",
    "_saved_divisor_override",
)
_SQUEEZE_SAVED = ("_saved_dim", "_saved_self_sym_sizes")

POOLING = [
    Op(
        "F_max_pool2d",
        lambda lib, a: _F(lib).max_pool2d(a, 2),
        (R(1, 2, 4, 4),),
        "MaxPool2DWithIndicesBackward0",
        _MAX_POOL_SAVED,
    ),
    Op(
        "F_max_pool2d_padding_ceil",
        lambda lib, a: _F(lib).max_pool2d(a, 3, stride=2, padding=1, ceil_mode=True),
        (R(2, 5, 6),),
        "MaxPool2DWithIndicesBackward0",
        _MAX_POOL_SAVED,
    ),
    Op(
        "F_max_pool2d_dilation",
        lambda lib, a: _F(lib).max_pool2d(a, (2, 3), stride=1, dilation=2, return_indices=True)[0],
        (R(1, 1, 5, 6),),
        "MaxPool2DWithIndicesBackward0",
        _MAX_POOL_SAVED,
    ),
    Op(
        "F_max_pool1d", lambda lib, a: _F(lib).max_pool1d(a, 3, 2, 1), (R(2, 3, 6),), "SqueezeBackward1", _SQUEEZE_SAVED
    ),
    Op(
        "F_avg_pool2d", lambda lib, a: _F(lib).avg_pool2d(a, 2), (R(1, 2, 4, 4),), "AvgPool2DBackward0", _AVG_POOL_SAVED
    ),
    Op(
        "F_avg_pool2d_padding_ceil",
        lambda lib, a: _F(lib).avg_pool2d(a, 3, 2, 1, ceil_mode=True, count_include_pad=False),
        (R(2, 5, 6),),
        "AvgPool2DBackward0",
        _AVG_POOL_SAVED,
    ),
    Op(
        "F_avg_pool2d_divisor",
        lambda lib, a: _F(lib).avg_pool2d(a, (2, 3), (1, 2), divisor_override=4),
        (R(1, 1, 4, 5),),
        "AvgPool2DBackward0",
        _AVG_POOL_SAVED,
    ),
    Op("F_avg_pool1d", lambda lib, a: _F(lib).avg_pool1d(a, 2, 1, 1), (R(2, 5),), "SqueezeBackward1", _SQUEEZE_SAVED),
    Op(
        "F_adaptive_avg_pool2d",
        lambda lib, a: _F(lib).adaptive_avg_pool2d(a, (2, 3)),
        (R(1, 2, 5, 7),),
        "AdaptiveAvgPool2DBackward0",
        ("_saved_self",),
    ),
    Op(
        "F_adaptive_avg_pool2d_one",
        lambda lib, a: _F(lib).adaptive_avg_pool2d(a, 1),
        (R(2, 3, 4),),
        "MeanBackward1",
        ("_saved_dim", "_saved_keepdim"),
    ),
    Op(
        "F_adaptive_avg_pool1d",
        lambda lib, a: _F(lib).adaptive_avg_pool1d(a, 3),
        (R(2, 7),),
        "SqueezeBackward1",
        _SQUEEZE_SAVED,
    ),
    Op(
        "F_adaptive_max_pool2d",
        lambda lib, a: _F(lib).adaptive_max_pool2d(a, (3, None)),
        (R(1, 2, 5, 4),),
        "AdaptiveMaxPool2DBackward0",
        ("_saved_self", "_saved_result1"),
    ),
    Op(
        "F_adaptive_max_pool1d",
        lambda lib, a: _F(lib).adaptive_max_pool1d(a, 4),
        (R(2, 7),),
        "SqueezeBackward1",
        _SQUEEZE_SAVED,
    ),
    Op("F_pad", lambda lib, a: _F(lib).pad(a, (1, 2, 0, 1)), (R(2, 3, 4),), "ConstantPadNdBackward0", ("_saved_pad",)),
    Op("F_pad_crop_value", lambda lib, a: _F(lib).pad(a, [-1, 2], value=1.5), (R(2, 4),), "ConstantPadNdBackward0"),
]

_CONV_SAVED = (
    "_saved_bias_sym_sizes_opt",
    "_saved_dilation",
    "_saved_groups",
    "_saved_input",
    "_saved_output_padding",
    "_saved_padding",
    "_saved_stride",
    "_saved_transposed",
    "_saved_weight",
)
_WINDOW_SAVED = ("_saved_dilation", "_saved_kernel_size", "_saved_padding", "_saved_stride")

# The convolutions (one ConvolutionBackward0, torch's unsqueeze and squeeze around an
# unbatched input) and the sliding windows unfold (im2col) and fold (col2im).
CONV = [
    Op(
        "conv2d",
        lambda lib, x, w, b: _F(lib).conv2d(x, w, b),
        (R(1, 2, 5, 5), R(3, 2, 3, 3), R(3)),
        "ConvolutionBackward0",
        _CONV_SAVED,
    ),
    Op(
        "conv2d_stride_padding_groups",
        lambda lib, x, w: _F(lib).conv2d(x, w, None, 2, 1, 1, 2),
        (R(2, 2, 5, 5), R(4, 1, 3, 3)),
        "ConvolutionBackward0",
        _CONV_SAVED,
    ),
    Op(
        "conv2d_dilation_same",
        lambda lib, x, w, b: _F(lib).conv2d(x, w, b, padding="same", dilation=(2, 1)),
        (R(1, 2, 5, 4), R(2, 2, 3, 3), R(2)),
        "ConvolutionBackward0",
        _CONV_SAVED,
    ),
    Op(
        "conv2d_unbatched",
        lambda lib, x, w: lib.conv2d(x, w, padding=(1, 0)),
        (R(2, 4, 4), R(2, 2, 2, 3)),
        "SqueezeBackward1",
        ("_saved_dim",),
    ),
    Op(
        "conv1d",
        lambda lib, x, w, b: _F(lib).conv1d(x, w, b, stride=2, padding=1),
        (R(2, 2, 6), R(3, 2, 3), R(3)),
        "ConvolutionBackward0",
        _CONV_SAVED,
    ),
    Op(
        "conv1d_unbatched_valid",
        lambda lib, x, w: lib.conv1d(x, w, padding="valid", dilation=2),
        (R(2, 7), R(3, 2, 3)),
        "SqueezeBackward1",
        ("_saved_dim",),
    ),
    Op(
        "conv_transpose2d",
        lambda lib, x, w, b: _F(lib).conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
        (R(1, 2, 3, 3), R(2, 3, 3, 3), R(3)),
        "ConvolutionBackward0",
        _CONV_SAVED,
    ),
    Op(
        "conv_transpose2d_groups_dilation",
        lambda lib, x, w: lib.conv_transpose2d(x, w, groups=2, dilation=2),
        (R(1, 4, 3, 2), R(4, 1, 2, 2)),
        "ConvolutionBackward0",
        _CONV_SAVED,
    ),
    Op(
        "conv_transpose1d",
        lambda lib, x, w, b: _F(lib).conv_transpose1d(x, w, b, stride=3, output_padding=2),
        (R(2, 2, 3), R(2, 3, 2), R(3)),
        "ConvolutionBackward0",
        _CONV_SAVED,
    ),
    Op(
        "convolution",
        lambda lib, x, w: lib.convolution(x, w, None, [1, 2], [0, 1], [1, 1], False, [0, 0], 1),
        (R(1, 2, 4, 4), R(3, 2, 2, 2)),
        "ConvolutionBackward0",
        _CONV_SAVED,
    ),
    Op(
        "unfold",
        lambda lib, x: _F(lib).unfold(x, 2, padding=1, stride=(1, 2)),
        (R(1, 2, 4, 3),),
        "Im2ColBackward0",
        (*_WINDOW_SAVED, "_saved_self_sym_argsize_minus_1", "_saved_self_sym_argsize_minus_2"),
    ),
    Op(
        "unfold_unbatched",
        lambda lib, x: _F(lib).unfold(x, (2, 3), dilation=(1, 2)),
        (R(2, 4, 6),),
        "Im2ColBackward0",
        _WINDOW_SAVED,
    ),
    Op(
        "fold",
        lambda lib, x: _F(lib).fold(x, (4, 5), 2, stride=(1, 2)),
        (R(2, 8, 6),),
        "Col2ImBackward0",
        _WINDOW_SAVED,
    ),
    Op(
        "fold_unbatched_padding",
        lambda lib, x: _F(lib).fold(x, 3, (2, 1), padding=1),
        (R(4, 20),),
        "Col2ImBackward0",
        _WINDOW_SAVED,
    ),
]

_LAYER_NORM_SAVED = (
    "_saved_input",
    "_saved_normalized_shape",
    "_saved_result1",
    "_saved_result2",
    "_saved_weight",
    "_saved_bias",
)
_GROUP_NORM_SAVED = (
    "_saved_N",
    "_saved_C",
    "_saved_HxW",
    "_saved_group",
    "_saved_eps",
    "_saved_input",
    "_saved_result1",
    "_saved_result2",
    "_saved_weight",
)
_BATCH_NORM_SAVED = (
    "_saved_eps",
    "_saved_input",
    "_saved_result1",
    "_saved_result2",
    "_saved_running_mean",
    "_saved_running_var",
    "_saved_training",
    "_saved_weight",
)
_SDPA_SAVED = (
    "_saved_query",
    "_saved_key",
    "_saved_value",
    "_saved_output",
    "_saved_logsumexp",
    "_saved_attn_mask",
    "_saved_dropout_p",
    "_saved_is_causal",
    "_saved_scale",
)
_SDPA = "ScaledDotProductFlashAttentionForCpuBackward0"


def _key_mask(lib: Any) -> Any:
    return lib.tensor([[True, False, True, True, False], [False, True, True, False, True], [True] * 5])


_EMBEDDING_SAVED = (
    "_saved_indices",
    "_saved_padding_idx",
    "_saved_scale_grad_by_freq",
    "_saved_sparse",
    "_saved_weight_sym_argsize_0",
)


def _running_stats(lib: Any, x: Any) -> tuple[Any, Any]:
    return lib.tensor([0.1, -0.2], dtype=x.dtype), lib.tensor([0.5, 2.0], dtype=x.dtype)


def _tokens(lib: Any) -> Any:
    return lib.tensor([[1, 0, 3], [3, 1, 1]])


NORMALIZATION = [
    Op(
        "F_layer_norm",
        lambda lib, x, w, b: _F(lib).layer_norm(x, (4,), w, b),
        (R(2, 3, 4), R(4), R(4)),
        "NativeLayerNormBackward0",
        _LAYER_NORM_SAVED,
    ),
    Op(
        "F_layer_norm_two_dims",
        lambda lib, x: _F(lib).layer_norm(x, [3, 4], eps=0.1),
        (R(2, 3, 4),),
        "NativeLayerNormBackward0",
        _LAYER_NORM_SAVED,
    ),
    Op(
        "F_group_norm",
        lambda lib, x, w, b: _F(lib).group_norm(x, 2, w, b),
        (R(2, 4, 3), R(4), R(4)),
        "NativeGroupNormBackward0",
        _GROUP_NORM_SAVED,
    ),
    Op(
        "F_group_norm_4d",
        lambda lib, x: _F(lib).group_norm(x, 1, eps=0.01),
        (R(2, 2, 2, 2),),
        "NativeGroupNormBackward0",
        _GROUP_NORM_SAVED,
    ),
    Op(
        "F_batch_norm_training",
        lambda lib, x, w, b: _F(lib).batch_norm(x, *_running_stats(lib, x), w, b, training=True),
        # a positive bias keeps the outputs away from 0, where float16 rounds apart from torch
        (R(3, 2, 2), R(2), P(2)),
        "NativeBatchNormBackward0",
        _BATCH_NORM_SAVED,
    ),
    Op(
        "F_batch_norm_no_stats",
        lambda lib, x: _F(lib).batch_norm(x, None, None, training=True),
        (R(4, 2),),
        "NativeBatchNormBackward0",
        _BATCH_NORM_SAVED,
    ),
    Op(
        "F_batch_norm_eval",
        lambda lib, x, w, b: _F(lib).batch_norm(x, *_running_stats(lib, x), w, b),
        (R(3, 2, 2), R(2), R(2)),
        "NativeBatchNormBackward0",
        _BATCH_NORM_SAVED,
    ),
    Op(
        "F_instance_norm",
        lambda lib, x, w: _F(lib).instance_norm(x, *_running_stats(lib, x), w),
        (R(2, 2, 3), R(2)),
        "ViewBackward0",
        ("_saved_self_sym_sizes",),
    ),
    Op(
        "F_rms_norm",
        # * 2: one root node whatever the dtype (a float16 rms_norm computes in
        # float32 and ends with a ToCopyBackward0); the graph below is compared.
        lambda lib, x, w: _F(lib).rms_norm(x, (3,), w) * 2,
        (R(2, 3), R(3)),
        "MulBackward0",
    ),
    Op(
        "F_embedding",
        lambda lib, w: _F(lib).embedding(_tokens(lib), w, padding_idx=-2),
        (R(4, 3),),
        "EmbeddingBackward0",
        _EMBEDDING_SAVED,
    ),
    Op(
        "F_scaled_dot_product_attention",
        lambda lib, q, k, v: _F(lib).scaled_dot_product_attention(q, k, v),
        (R(2, 2, 3, 4), R(2, 2, 5, 4), P(2, 2, 5, 4)),
        _SDPA,
        _SDPA_SAVED,
        double_backward=False,
    ),
    Op(
        "F_scaled_dot_product_attention_bool_mask_causal_scale",
        lambda lib, q, k, v: _F(lib).scaled_dot_product_attention(q, k, v, _key_mask(lib), is_causal=True, scale=0.7),
        (R(1, 2, 3, 4), R(1, 2, 5, 4), R(1, 2, 5, 4)),
        _SDPA,
        _SDPA_SAVED,
        double_backward=False,
    ),
    Op(
        "F_scaled_dot_product_attention_float_mask_gqa",
        lambda lib, q, k, v: _F(lib).scaled_dot_product_attention(
            q, k, v, lib.tensor([[0.5, -1.0, 0.0], [0.0, 0.2, -0.3], [1.0, 0.0, 0.0]], dtype=q.dtype), enable_gqa=True
        ),
        (R(1, 4, 3, 2), R(1, 2, 3, 2), P(1, 2, 3, 2)),
        _SDPA,
        _SDPA_SAVED,
        double_backward=False,
    ),
    Op(
        "F_cosine_similarity",
        lambda lib, a, b: _F(lib).cosine_similarity(a, b, -1),
        (R(2, 3), R(3)),
        "SumBackward1",
        ("_saved_dim", "_saved_keepdim", "_saved_self_sym_sizes"),
    ),
]


def _mha(lib: Any, q: Any, w: Any, b: Any, out_w: Any, kv: Any = None, **kw: Any) -> Any:
    """F.multi_head_attention_forward with 2 heads: self-attention of q, or q over kv."""
    k = q if kv is None else kv
    return _F(lib).multi_head_attention_forward(q, k, k, 4, 2, w, b, None, None, False, 0.0, out_w, None, **kw)


# Multi-head attention (torch's composite) with explicit weights (need_weights):
# the output and the weights averaged over the heads.
TRANSFORMER = [
    Op(
        "F_multi_head_attention_forward",
        lambda lib, q, w, b, out_w: _mha(lib, q, w, b, out_w)[0],
        (R(3, 2, 4), R(12, 4), R(12), R(4, 4)),
        "ViewBackward0",
        ("_saved_self_sym_sizes",),
    ),
    Op(
        "F_multi_head_attention_forward_weights_kv",
        lambda lib, q, w, b, kv: _mha(lib, q, w, b, lib.eye(4, dtype=q.dtype), kv)[1],
        (R(3, 2, 4), R(12, 4), R(12), R(5, 2, 4)),
        "MeanBackward1",
        ("_saved_dim", "_saved_keepdim", "_saved_self_sym_sizes"),
    ),
]


# The in-place comparisons (zero gradients), pow_/square_/sgn_ and broadcast_tensors.
POINTWISE_MORE = [
    Op("lt_inplace_tensor", lambda lib, a, b: a.clone().lt_(b), (R(2, 3), R(3)), "LtBackward1", double_backward=False),
    Op("eq_inplace_number", lambda lib, a: a.clone().eq_(0.5), (R(2, 3),), "EqBackward0", double_backward=False),
    Op("ge_inplace_tensor", lambda lib, a, b: (a * 1).ge_(b), (R(2, 3), R(2, 1)), "GeBackward1", double_backward=False),
    Op(
        "square_inplace",
        lambda lib, a: a.clone().square_(),
        (R(2, 3),),
        "PowBackward0",
        ("_saved_exponent", "_saved_self"),
    ),
    Op(
        "pow_inplace_number",
        lambda lib, a: a.clone().pow_(2.5),
        (P(2, 3),),
        "PowBackward0",
        ("_saved_exponent", "_saved_self"),
    ),
    Op(
        "pow_inplace_tensor",
        lambda lib, a, b: a.clone().pow_(b),
        (P(2, 3), P(3)),
        "PowBackward1",
        ("_saved_exponent", "_saved_self", "_saved_result"),
    ),
    Op(
        "sgn_inplace",
        lambda lib, a: a.clone().sgn_(),
        (R(2, 3),),
        "SgnBackward0",
        ("_saved_self", "_saved_result"),
        double_backward=False,
    ),
    Op(
        "broadcast_tensors",
        lambda lib, a, b: lib.mul(*lib.broadcast_tensors(a, b)),
        (R(2, 1), R(3)),
        "MulBackward0",
        ("_saved_self", "_saved_other"),
    ),
]


# clamp with tensor bounds (broadcast; min > max in places, where max wins),
# clamp_min and clamp_max (number and tensor overloads), and in-place forms.
_CLAMP_SAVED = ("_saved_self", "_saved_min", "_saved_max")
CLAMP = [
    Op(
        "clamp_tensors",
        lambda lib, a, lo, hi: lib.clamp(a, lo, hi),
        (R(2, 3), R(3), R(2, 1)),
        "ClampBackward0",
        _CLAMP_SAVED,
    ),
    Op("clamp_tensor_min_method", lambda lib, a, lo: a.clamp(lo), (R(2, 3), R(2, 3)), "ClampBackward0", _CLAMP_SAVED),
    Op("clip_tensor_max", lambda lib, a, hi: lib.clip(a, max=hi), (R(2, 3), R(1)), "ClampBackward0", _CLAMP_SAVED),
    Op(
        "clamp_tensors_inplace",
        lambda lib, a, lo, hi: (a * 1).clamp_(lo, hi),
        (R(2, 3), R(3), R(2, 3)),
        "ClampBackward0",
    ),
    Op(
        "clamp_min_number",
        lambda lib, a: lib.clamp_min(a, 0.3),
        (R(2, 3),),
        "ClampMinBackward0",
        ("_saved_self", "_saved_min"),
    ),
    Op(
        "clamp_max_number_method",
        lambda lib, a: a.clamp_max(-0.3),
        (R(2, 3),),
        "ClampMaxBackward0",
        ("_saved_self", "_saved_max"),
    ),
    Op(
        "clamp_min_tensor",
        lambda lib, a, b: lib.clamp_min(a, b),
        (R(2, 3), R(3)),
        "ClampMinBackward1",
        ("_saved_self", "_saved_min"),
    ),
    Op(
        "clamp_max_tensor_method",
        lambda lib, a, b: a.clamp_max(b),
        (
            R(
                3,
            ),
            R(2, 3),
        ),
        "ClampMaxBackward1",
        ("_saved_self", "_saved_max"),
    ),
    Op("clamp_min_tensor_inplace", lambda lib, a, b: (a * 1).clamp_min_(b), (R(2, 3), R(3)), "ClampMinBackward1"),
    Op("clamp_max_number_inplace", lambda lib, a: (a * 1).clamp_max_(0.3), (R(2, 3),), "ClampMaxBackward0"),
]

# normalize and the embedding losses (torch's composites): their last node.
NN_EXTRA = [
    Op("F_normalize", lambda lib, a: _F(lib).normalize(a), (R(2, 3),), "DivBackward0"),
    Op("F_normalize_p1_dim0", lambda lib, a: _F(lib).normalize(a, 1.0, 0), (R(2, 3),), "DivBackward0"),
    Op(
        "F_margin_ranking_loss",
        lambda lib, a, b, t: _F(lib).margin_ranking_loss(a, b, t, margin=0.3),
        (R(5), R(5), R(5)),
        "MeanBackward0",
    ),
    Op(
        "F_pairwise_distance",
        lambda lib, a, b: _F(lib).pairwise_distance(a, b),
        (R(2, 3), R(3)),
        "NormBackward1",
        ("_saved_p", "_saved_dim", "_saved_keepdim", "_saved_self", "_saved_result"),
    ),
    Op(
        "F_pairwise_distance_p1_keepdim",
        lambda lib, a, b: _F(lib).pairwise_distance(a, b, 1, keepdim=True),
        (R(2, 3), R(2, 3)),
        "NormBackward1",
        ("_saved_p", "_saved_dim", "_saved_keepdim"),
    ),
    Op(
        "F_triplet_margin_loss_swap",
        lambda lib, a, p, n: _F(lib).triplet_margin_loss(a, p, n, margin=2.0, swap=True),
        (R(2, 3), R(2, 3), R(2, 3)),
        "MeanBackward0",
    ),
    Op(
        "F_hinge_embedding_loss_none",
        lambda lib, a: _F(lib).hinge_embedding_loss(
            a, lib.tensor([[1.0, -1.0, 0.0], [-1.0, -1.0, 1.0]], dtype=a.dtype), reduction="none"
        ),
        (R(2, 3),),
        "AddBackward0",
    ),
    Op(
        "F_cosine_embedding_loss",
        lambda lib, a, b: _F(lib).cosine_embedding_loss(a, b, lib.tensor([1.0, -1.0, -1.0], dtype=a.dtype), 0.1),
        (R(3, 4), R(3, 4)),
        "MeanBackward0",
    ),
    Op(
        "F_cosine_embedding_loss_1d_sum",
        lambda lib, a, b: _F(lib).cosine_embedding_loss(a, b, lib.tensor(-1.0, dtype=a.dtype), -0.9, reduction="sum"),
        (R(4), R(4)),
        "SumBackward0",
    ),
]

# bilinear (torch's composite over _trilinear) and cdist (CdistBackward0, or the
# matrix-product path of p = 2 under a view). CdistBackward0's formula is not
# differentiable in torch.
_TRILINEAR_SAVED = ("_saved_expand1", "_saved_expand2", "_saved_expand3", "_saved_sumdim", "_saved_i1", "_saved_i2")
_CDIST_SAVED = ("_saved_p", "_saved_x1", "_saved_x2", "_saved_result")
DISTANCE = [
    Op(
        "F_bilinear",
        lambda lib, a, b, w, c: _F(lib).bilinear(a, b, w, c),
        (R(2, 3), R(2, 4), R(5, 3, 4), R(5)),
        "AddBackward0",
    ),
    Op(
        "F_bilinear_batched_no_bias",
        lambda lib, a, b, w: _F(lib).bilinear(a, b, w),
        (R(2, 2, 3), R(2, 2, 4), R(2, 3, 4)),
        "ViewBackward0",
        ("_saved_self_sym_sizes",),
    ),
    Op(
        "_trilinear",
        lambda lib, a, w, b: lib._trilinear(a, w, b, [1, 3], [0], [1, 2], [2, 3]),
        (R(2, 3), R(5, 3, 4), R(2, 4)),
        "TrilinearBackward0",
        _TRILINEAR_SAVED,
    ),
    Op(
        "cdist_p3",
        lambda lib, a, b: lib.cdist(a, b, 3.0),
        (R(3, 2), R(4, 2)),
        "CdistBackward0",
        _CDIST_SAVED,
        double_backward=False,
        reduced_floats=False,
    ),
    Op(
        "cdist_p1_batched",
        lambda lib, a, b: lib.cdist(a, b, 1.0),
        (R(2, 3, 2), R(1, 4, 2)),
        "CdistBackward0",
        _CDIST_SAVED,
        double_backward=False,
        reduced_floats=False,
    ),
    Op(
        "cdist_inf",
        lambda lib, a, b: lib.cdist(a, b, float("inf")),
        (R(3, 2), R(4, 2)),
        "CdistBackward0",
        double_backward=False,
        reduced_floats=False,
    ),
    Op(
        "cdist_p0_5",
        lambda lib, a, b: lib.cdist(a, b, 0.5),
        (R(3, 2), R(4, 2)),
        "CdistBackward0",
        double_backward=False,
        reduced_floats=False,
    ),
    Op(
        "cdist_p2_mm",
        lambda lib, a, b: lib.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
        (R(2, 3, 2), R(1, 4, 2)),
        "ViewBackward0",
        ("_saved_self_sym_sizes",),
    ),
]

# ---- Upsampling (F.interpolate) and embedding_bag ----

_UPSAMPLE_1D_SAVED = ("_saved_output_size", "_saved_scales", "_saved_self_sym_sizes")
_UPSAMPLE_2D_SAVED = ("_saved_output_size", "_saved_scales_h", "_saved_scales_w", "_saved_self_sym_sizes")


def _interp(**kwargs: Any) -> Callable[..., Any]:
    return lambda lib, a: _F(lib).interpolate(a, **kwargs)


UPSAMPLE = [
    Op(
        "F_interpolate_nearest1d",
        _interp(scale_factor=2.5),
        (R(2, 2, 5),),
        "UpsampleNearest1DBackward0",
        _UPSAMPLE_1D_SAVED,
    ),
    Op(
        "F_interpolate_nearest2d",
        _interp(size=(3, 7)),
        (R(1, 2, 4, 5),),
        "UpsampleNearest2DBackward0",
        _UPSAMPLE_2D_SAVED,
    ),
    Op(
        "F_interpolate_nearest_exact1d",
        _interp(size=7, mode="nearest-exact"),
        (R(1, 3, 5),),
        "UpsampleNearestExact1DBackward0",
        _UPSAMPLE_1D_SAVED,
    ),
    Op(
        "F_interpolate_nearest_exact2d",
        _interp(scale_factor=(1.5, 0.6), mode="nearest-exact"),
        (R(1, 2, 4, 5),),
        "UpsampleNearestExact2DBackward0",
        _UPSAMPLE_2D_SAVED,
    ),
    Op(
        "F_interpolate_linear",
        _interp(scale_factor=1.7, mode="linear"),
        (R(2, 2, 5),),
        "UpsampleLinear1DBackward0",
        ("_saved_align_corners", *_UPSAMPLE_1D_SAVED),
    ),
    Op(
        "F_interpolate_linear_align_corners",
        _interp(size=8, mode="linear", align_corners=True),
        (R(1, 2, 5),),
        "UpsampleLinear1DBackward0",
        ("_saved_align_corners", *_UPSAMPLE_1D_SAVED),
    ),
    Op(
        "F_interpolate_bilinear",
        _interp(scale_factor=(2, 1.5), mode="bilinear"),
        (R(1, 2, 3, 4),),
        "UpsampleBilinear2DBackward0",
        ("_saved_align_corners", *_UPSAMPLE_2D_SAVED),
    ),
    Op(
        "F_interpolate_bilinear_align_corners_recompute",
        _interp(scale_factor=1.7, mode="bilinear", align_corners=True, recompute_scale_factor=True),
        (R(2, 1, 3, 4),),
        "UpsampleBilinear2DBackward0",
        ("_saved_align_corners", *_UPSAMPLE_2D_SAVED),
    ),
]

_EMBEDDING_BAG_SAVED = (
    "_saved_indices",
    "_saved_mode",
    "_saved_offsets",
    "_saved_padding_idx",
    "_saved_per_sample_weights",
    "_saved_result1",
    "_saved_result2",
    "_saved_result3",
    "_saved_scale_grad_by_freq",
    "_saved_sparse",
    "_saved_weight",
    "_saved_weight_sym_argsize_0",
)


def _bag_indices(lib: Any) -> Any:
    return lib.tensor([1, 2, 0, 3, 3, 1])


def _bag_offsets(lib: Any) -> Any:
    return lib.tensor([0, 2, 2, 5])


# torch has no derivative of embedding_bag's backward (double_backward=False).
EMBEDDING_BAG = [
    Op(
        "F_embedding_bag_sum",
        lambda lib, w: _F(lib).embedding_bag(_bag_indices(lib), w, _bag_offsets(lib), mode="sum"),
        (R(4, 3),),
        "EmbeddingBagBackward0",
        _EMBEDDING_BAG_SAVED,
        double_backward=False,
    ),
    Op(
        "F_embedding_bag_mean_2d_padding_idx",
        lambda lib, w: _F(lib).embedding_bag(_tokens(lib), w, padding_idx=1),
        (R(4, 3),),
        "EmbeddingBagBackward0",
        _EMBEDDING_BAG_SAVED,
        double_backward=False,
    ),
    Op(
        "F_embedding_bag_max_include_last_offset",
        lambda lib, w: _F(lib).embedding_bag(
            _bag_indices(lib), w, lib.tensor([0, 2, 2, 6]), mode="max", include_last_offset=True
        ),
        (R(4, 3),),
        "EmbeddingBagBackward0",
        _EMBEDDING_BAG_SAVED,
        double_backward=False,
    ),
    Op(
        "F_embedding_bag_per_sample_weights",
        lambda lib, w, psw: _F(lib).embedding_bag(
            _bag_indices(lib), w, _bag_offsets(lib), mode="sum", per_sample_weights=psw, padding_idx=0
        ),
        (R(4, 3), R(6)),
        "EmbeddingBagBackward0",
        _EMBEDDING_BAG_SAVED,
        double_backward=False,
    ),
]


ALL = (
    ARITHMETIC
    + POINTWISE
    + REDUCTIONS
    + VIEWS
    + COPIES
    + MASKING
    + DIM_REDUCTIONS
    + LINALG
    + INDEXING
    + SHAPE
    + SORTING
    + ACTIVATIONS
    + MODULO
    + TERNARY
    + LOSSES
    + POOLING
    + CONV
    + NORMALIZATION
    + TRANSFORMER
    + POINTWISE_MORE
    + CLAMP
    + NN_EXTRA
    + UPSAMPLE
    + EMBEDDING_BAG
    + DISTANCE
)
# fmt: on
