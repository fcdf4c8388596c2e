"""Every backward node type releases its saved state after ``backward()`` as torch does.

For each node class npgrad binds there is a program below that records one; the test
reads each ``_saved_*`` attribute of that node before and after ``backward()``: saved
tensors and tensor lists must raise torch's "Trying to access saved tensors after they
have already been freed", saved scalars and shapes keep their values. A node class
without a program fails ``test_every_node_type_has_a_program``, so a new node cannot
skip this check.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import npgrad
from oracle import AGAINST_TORCH, from_np, is_tensor, run_both, same_value

FREED = r"directly access saved tensors after they have already been freed"


def _inputs(lib: Any) -> tuple[Any, Any, Any]:
    rng = np.random.default_rng(0)
    a = from_np(lib, rng.uniform(0.5, 2.0, (2, 3)), requires_grad=True)
    b = from_np(lib, rng.uniform(0.5, 2.0, (2, 3)), requires_grad=True)
    v = from_np(lib, rng.uniform(0.5, 2.0, (3,)), requires_grad=True)
    return a, b, v


def _grad(lib: Any, out: Any, x: Any) -> Any:
    """The gradient of ``(out * out).sum()`` w.r.t. ``x`` as a recorded graph: the
    gradient reaching ``out``'s node requires grad, so its formula records nodes."""
    return lib.autograd.grad((out * out).sum(), x, create_graph=True)[0]


def _index(lib: Any) -> Any:
    return lib.tensor([1, 0])


def _inplace_on_clone(lib: Any, a: Any, write: Callable[[Any], Any]) -> Any:
    c = a.clone()
    write(c)
    return c


def _view_after_base_write(lib: Any, a: Any) -> Any:
    c = a.clone()
    view = c[0]
    c.mul_(2)
    return view  # its grad_fn is regenerated as AsStridedBackward0


def _copy_slices(lib: Any, a: Any) -> Any:
    c = lib.zeros(3, 3, dtype=lib.float64)
    c[0:2] = a
    return c


def _once_differentiable(lib: Any, a: Any) -> Any:
    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx: Any, grad: Any) -> Any:
            return grad * 2

    return _grad(lib, Twice.apply(a), a)  # recorded under an Error node


# node name -> program(lib, a, b, v) whose result's graph contains that node
PROGRAMS: dict[str, Callable[..., Any]] = {
    "AddBackward0": lambda lib, a, b, v: lib.add(a, b, alpha=2),
    "SubBackward0": lambda lib, a, b, v: lib.sub(a, b, alpha=2),
    "RsubBackward1": lambda lib, a, b, v: 1 - a,
    "MulBackward0": lambda lib, a, b, v: a * b,
    "DivBackward0": lambda lib, a, b, v: a / b,
    "NegBackward0": lambda lib, a, b, v: -a,
    "PowBackward0": lambda lib, a, b, v: a**2.5,
    "PowBackward1": lambda lib, a, b, v: a**b,
    "PowBackward2": lambda lib, a, b, v: 2.0**a,
    "ReciprocalBackward0": lambda lib, a, b, v: a.reciprocal(),
    "ExpBackward0": lambda lib, a, b, v: a.exp(),
    "LogBackward0": lambda lib, a, b, v: a.log(),
    "SinBackward0": lambda lib, a, b, v: a.sin(),
    "CosBackward0": lambda lib, a, b, v: a.cos(),
    "TanhBackward0": lambda lib, a, b, v: a.tanh(),
    "SigmoidBackward0": lambda lib, a, b, v: a.sigmoid(),
    "ReluBackward0": lambda lib, a, b, v: a.relu(),
    "AbsBackward0": lambda lib, a, b, v: a.abs(),
    "SqrtBackward0": lambda lib, a, b, v: a.sqrt(),
    "SgnBackward0": lambda lib, a, b, v: _grad(lib, a.abs(), a),
    "ThresholdBackwardBackward0": lambda lib, a, b, v: _grad(lib, a.relu(), a),
    "GeluBackwardBackward0": lambda lib, a, b, v: _grad(lib, lib.nn.functional.gelu(a), a),
    "EluBackwardBackward0": lambda lib, a, b, v: _grad(lib, lib.nn.functional.elu(a - 1), a),
    "LeakyReluBackwardBackward0": lambda lib, a, b, v: _grad(lib, lib.nn.functional.leaky_relu(a), a),
    "HardtanhBackwardBackward0": lambda lib, a, b, v: _grad(lib, lib.nn.functional.hardtanh(a), a),
    "HardswishBackwardBackward0": lambda lib, a, b, v: _grad(lib, lib.nn.functional.hardswish(a), a),
    "SoftplusBackwardBackward0": lambda lib, a, b, v: _grad(lib, lib.nn.functional.softplus(a), a),
    "LogSigmoidBackwardBackward0": lambda lib, a, b, v: _grad(lib, lib.nn.functional.logsigmoid(a), a),
    "SoftshrinkBackwardBackward0": lambda lib, a, b, v: _grad(lib, lib.nn.functional.softshrink(a), a),
    "HardshrinkBackwardBackward0": lambda lib, a, b, v: _grad(lib, lib.nn.functional.hardshrink(a), a),
    "ClampBackward1": lambda lib, a, b, v: a.clamp(min=1.0),
    "ClampBackward0": lambda lib, a, b, v: a.clamp(b, v),
    "ClampMinBackward0": lambda lib, a, b, v: a.clamp_min(1.0),
    "ClampMinBackward1": lambda lib, a, b, v: a.clamp_min(b),
    "ClampMaxBackward0": lambda lib, a, b, v: a.clamp_max(1.0),
    "ClampMaxBackward1": lambda lib, a, b, v: a.clamp_max(b),
    "NormBackward1": lambda lib, a, b, v: lib.nn.functional.pairwise_distance(a, b),
    "WhereBackward0": lambda lib, a, b, v: lib.where(a > 1, a, b),
    "MaskedFillBackward0": lambda lib, a, b, v: a.masked_fill(a > 1, 0.5),
    "MaskedFillBackward1": lambda lib, a, b, v: a.masked_fill(a > 1, v[0]),
    "NanToNumBackward0": lambda lib, a, b, v: a.nan_to_num(),
    "ToCopyBackward0": lambda lib, a, b, v: a.float(),
    "SumBackward0": lambda lib, a, b, v: a.sum(),
    "SumBackward1": lambda lib, a, b, v: a.sum(0),
    "MeanBackward0": lambda lib, a, b, v: a.mean(),
    "MeanBackward1": lambda lib, a, b, v: a.mean(0),
    "MaxBackward1": lambda lib, a, b, v: a.max(),
    "MinBackward1": lambda lib, a, b, v: a.min(),
    "MaxBackward0": lambda lib, a, b, v: a.max(0).values,
    "MinBackward0": lambda lib, a, b, v: a.min(0).values,
    "SoftmaxBackward0": lambda lib, a, b, v: a.softmax(0),
    "LogSoftmaxBackward0": lambda lib, a, b, v: a.log_softmax(0),
    "SoftmaxBackwardDataBackward0": lambda lib, a, b, v: _grad(lib, a.softmax(-1), a),
    "LogSoftmaxBackwardDataBackward0": lambda lib, a, b, v: _grad(lib, a.log_softmax(1), a),
    "AmaxBackward0": lambda lib, a, b, v: a.amax(0),
    "AminBackward0": lambda lib, a, b, v: a.amin((0, 1)),
    "VarBackward0": lambda lib, a, b, v: a.var(1),
    "StdBackward0": lambda lib, a, b, v: a.std(),
    "VarMeanBackward0": lambda lib, a, b, v: lib.var_mean(a, 0)[0],
    "StdMeanBackward0": lambda lib, a, b, v: lib.std_mean(a, correction=0)[1],
    "LogsumexpBackward0": lambda lib, a, b, v: a.logsumexp(1),
    "ProdBackward0": lambda lib, a, b, v: a.prod(),
    "ProdBackward1": lambda lib, a, b, v: a.prod(-1),
    "CumsumBackward0": lambda lib, a, b, v: a.cumsum(-1),
    "CumprodBackward0": lambda lib, a, b, v: a.cumprod(0),
    "SortBackward0": lambda lib, a, b, v: a.sort().values,
    "SortBackward1": lambda lib, a, b, v: a.sort(stable=True).values,
    "TopkBackward0": lambda lib, a, b, v: a.topk(1, 0).values,
    "MedianBackward0": lambda lib, a, b, v: a.median(),
    "MedianBackward1": lambda lib, a, b, v: a.median(-1).values,
    "KthvalueBackward0": lambda lib, a, b, v: a.kthvalue(1, 0).values,
    "LinalgVectorNormBackward0": lambda lib, a, b, v: a.norm(3.0),
    "ViewBackward0": lambda lib, a, b, v: a.view(6),
    "UnsafeViewBackward0": lambda lib, a, b, v: a.t().reshape(6),
    "ReshapeAliasBackward0": lambda lib, a, b, v: a.t().reshape(1, 3, 2),
    "ExpandBackward0": lambda lib, a, b, v: v.expand(2, 3),
    "SqueezeBackward0": lambda lib, a, b, v: v.unsqueeze(0).squeeze(),
    "SqueezeBackward1": lambda lib, a, b, v: v.unsqueeze(0).squeeze(0),
    "SqueezeBackward2": lambda lib, a, b, v: v.unsqueeze(0).squeeze((0,)),
    "SqueezeBackward3": lambda lib, a, b, v: (v * 1).unsqueeze(0).squeeze_(),
    "SqueezeBackward4": lambda lib, a, b, v: v @ a.t(),
    "SqueezeBackward5": lambda lib, a, b, v: (v * 1).unsqueeze(0).squeeze_((0,)),
    "UnsqueezeBackward0": lambda lib, a, b, v: v.unsqueeze(0),
    "UnsqueezeBackward1": lambda lib, a, b, v: (v * 1).unsqueeze_(0),
    "TBackward0": lambda lib, a, b, v: a.t(),
    "TBackward1": lambda lib, a, b, v: (a * 1).t_(),
    "TransposeBackward0": lambda lib, a, b, v: a.transpose(0, 1),
    "TransposeBackward1": lambda lib, a, b, v: (a * 1).transpose_(0, 1),
    "PermuteBackward0": lambda lib, a, b, v: a.permute(1, 0),
    "SelectBackward0": lambda lib, a, b, v: a[1],
    "SliceBackward0": lambda lib, a, b, v: a[0:1],
    "AliasBackward0": lambda lib, a, b, v: a[...],
    "SplitBackward0": lambda lib, a, b, v: a.split(1)[1],
    "SplitWithSizesBackward0": lambda lib, a, b, v: a.split([1, 1])[0],
    "UnbindBackward0": lambda lib, a, b, v: a.unbind(1)[0],
    "SelectBackwardBackward0": lambda lib, a, b, v: _grad(lib, a[1], a),
    "SliceBackwardBackward0": lambda lib, a, b, v: _grad(lib, a[0:1], a),
    "FlipBackward0": lambda lib, a, b, v: a.flip(0),
    "RollBackward0": lambda lib, a, b, v: a.roll(1, -1),
    "RepeatBackward0": lambda lib, a, b, v: a.repeat(1, 2),
    "TriuBackward0": lambda lib, a, b, v: a.triu(1),
    "TrilBackward0": lambda lib, a, b, v: a.tril(-1),
    "DiagEmbedBackward0": lambda lib, a, b, v: v.diag_embed(),
    "DiagonalBackward0": lambda lib, a, b, v: a.diagonal(),
    "DiagonalBackward0_copy": lambda lib, a, b, v: a.diag(),
    "DiagonalBackwardBackward0": lambda lib, a, b, v: _grad(lib, a.diagonal(), a),
    "UnfoldBackward0": lambda lib, a, b, v: a.unfold(1, 2, 1),
    "UnfoldBackwardBackward0": lambda lib, a, b, v: _grad(lib, a.unfold(1, 2, 1), a),
    "CloneBackward0": lambda lib, a, b, v: a.clone(),
    "CatBackward0": lambda lib, a, b, v: lib.cat([a, b], 1),
    "StackBackward0": lambda lib, a, b, v: lib.stack([a, b], 1),
    "IndexBackward0": lambda lib, a, b, v: a[_index(lib)],
    "IndexPutImplBackward0": lambda lib, a, b, v: _grad(lib, a[_index(lib)], a),
    "IndexPutBackward0": lambda lib, a, b, v: _inplace_on_clone(lib, a, lambda c: c.__setitem__(_index(lib), b)),
    "CopyBackwards": lambda lib, a, b, v: _inplace_on_clone(lib, a, lambda c: c.copy_(b)),
    "CopySlices": lambda lib, a, b, v: _copy_slices(lib, a),
    "FillBackward3": lambda lib, a, b, v: _inplace_on_clone(lib, a, lambda c: c.fill_(v[0])),
    "FillBackward2": lambda lib, a, b, v: _inplace_on_clone(lib, a, lambda c: c.fill_(2.0)),
    "ZeroBackward0": lambda lib, a, b, v: _inplace_on_clone(lib, a, lambda c: c.zero_()),
    "NormalBackward0": lambda lib, a, b, v: _inplace_on_clone(lib, a, lambda c: c.normal_()),
    "NormalBackward1": lambda lib, a, b, v: lib.normal(a, 2.0),
    "NormalBackward2": lambda lib, a, b, v: lib.normal(1.0, v),
    "NormalBackward3": lambda lib, a, b, v: lib.normal(a, v),
    "UniformBackward0": lambda lib, a, b, v: _inplace_on_clone(lib, a, lambda c: c.uniform_()),
    "BernoulliBackward0": lambda lib, a, b, v: lib.bernoulli(v / 3),
    "NotImplemented": lambda lib, a, b, v: lib.bernoulli(a, 0.5),
    "BernoulliBackward1": lambda lib, a, b, v: _inplace_on_clone(lib, a, lambda c: c.bernoulli_(v / 3)),
    "BernoulliBackward2": lambda lib, a, b, v: _inplace_on_clone(lib, a, lambda c: c.bernoulli_(0.5)),
    "ExponentialBackward0": lambda lib, a, b, v: _inplace_on_clone(lib, a, lambda c: c.exponential_()),
    "RandomBackward0": lambda lib, a, b, v: _inplace_on_clone(lib, a, lambda c: c.random_(1, 4)),
    "RandomBackward1": lambda lib, a, b, v: _inplace_on_clone(lib, a, lambda c: c.random_(4)),
    "RandomBackward2": lambda lib, a, b, v: _inplace_on_clone(lib, a, lambda c: c.random_()),
    "AsStridedBackward0": lambda lib, a, b, v: _view_after_base_write(lib, a),
    "AsStridedScatterBackward0": lambda lib, a, b, v: _grad(lib, _view_after_base_write(lib, a), a),
    "MmBackward0": lambda lib, a, b, v: a.mm(b.t()),
    "DotBackward0": lambda lib, a, b, v: v @ v,
    "MvBackward0": lambda lib, a, b, v: a @ v,
    "Error": lambda lib, a, b, v: _once_differentiable(lib, a),
    "BmmBackward0": lambda lib, a, b, v: a.unsqueeze(0).expand(2, 2, 3) @ b.t().unsqueeze(0).expand(2, 3, 2),
    "AddmmBackward0": lambda lib, a, b, v: lib.addmm(v[:2], a, b.t(), beta=2),
    "BaddbmmBackward0": lambda lib, a, b, v: lib.baddbmm(v[:2], a.unsqueeze(0), b.t().unsqueeze(0), alpha=2),
    "AddmvBackward0": lambda lib, a, b, v: lib.addmv(v[:2], a, v),
    "GatherBackward0": lambda lib, a, b, v: a.gather(1, lib.tensor([[2], [0]])),
    "ScatterBackward0": lambda lib, a, b, v: a.scatter(1, lib.tensor([[2], [0]]), b[:, :1]),
    "ScatterBackward1": lambda lib, a, b, v: a.scatter(1, lib.tensor([[2], [0]]), 2.0),
    "ScatterAddBackward0": lambda lib, a, b, v: a.scatter_add(1, lib.tensor([[2], [0]]), b[:, :1]),
    "ScatterReduceBackward0": lambda lib, a, b, v: a.scatter_reduce(1, lib.tensor([[2], [0]]), b[:, :1], "amax"),
    "IndexSelectBackward0": lambda lib, a, b, v: a.index_select(1, _index(lib)),
    "IndexAddBackward0": lambda lib, a, b, v: a.index_add(0, _index(lib), b, alpha=2),
    "IndexCopyBackward0": lambda lib, a, b, v: a.index_copy(0, _index(lib), b),
    "MaskedSelectBackward0": lambda lib, a, b, v: a.masked_select(b > 1),
    "MaskedScatterBackward0": lambda lib, a, b, v: a.masked_scatter(b > 1, lib.cat([v, v])),
    "TanhBackwardBackward0": lambda lib, a, b, v: _grad(lib, a.tanh(), a),
    "SigmoidBackwardBackward0": lambda lib, a, b, v: _grad(lib, a.sigmoid(), a),
    "LerpBackward0": lambda lib, a, b, v: a.lerp(b, 0.3),
    "LerpBackward1": lambda lib, a, b, v: a.lerp(b, v / 2),
    "AddcmulBackward0": lambda lib, a, b, v: a.addcmul(b, v, value=2),
    "AddcdivBackward0": lambda lib, a, b, v: a.addcdiv(b, v, value=2),
    "GluBackward0": lambda lib, a, b, v: lib.nn.functional.glu(lib.cat([a, b]), 0),
    "MseLossBackward0": lambda lib, a, b, v: lib.nn.functional.mse_loss(a, b),
    "SmoothL1LossBackward0": lambda lib, a, b, v: lib.nn.functional.smooth_l1_loss(a, b, beta=0.5),
    "HuberLossBackward0": lambda lib, a, b, v: lib.nn.functional.huber_loss(a, b, delta=0.5),
    "MseLossBackwardBackward0": lambda lib, a, b, v: _grad(lib, lib.nn.functional.mse_loss(a, b), a),
    "SmoothL1LossBackwardBackward0": lambda lib, a, b, v: _grad(
        lib, lib.nn.functional.smooth_l1_loss(a, b, beta=0.5), a
    ),
    "HuberLossBackwardBackward0": lambda lib, a, b, v: _grad(lib, lib.nn.functional.huber_loss(a, b, delta=0.5), a),
    "SoftMarginLossBackward0": lambda lib, a, b, v: lib.nn.functional.soft_margin_loss(a, b.detach()),
    "BinaryCrossEntropyBackward0": lambda lib, a, b, v: lib.nn.functional.binary_cross_entropy(
        a / 2, b / 2, v.detach().expand(2, 3)
    ),
    "BinaryCrossEntropyBackwardBackward0": lambda lib, a, b, v: _grad(
        lib, lib.nn.functional.binary_cross_entropy(a / 2, b / 2, v.detach().expand(2, 3)), a
    ),
    "BinaryCrossEntropyWithLogitsBackward0": lambda lib, a, b, v: lib.nn.functional.binary_cross_entropy_with_logits(
        a, b / 2, pos_weight=v.detach()
    ),
    "NllLossBackward0": lambda lib, a, b, v: lib.nn.functional.nll_loss(a, lib.tensor([2, 0]), v.detach()),
    "NllLoss2DBackward0": lambda lib, a, b, v: lib.nn.functional.nll_loss(
        a.view(1, 2, 3, 1), lib.tensor([[[1], [0], [1]]])
    ),
    "NllLossBackwardBackward0": lambda lib, a, b, v: _grad(
        lib, lib.nn.functional.nll_loss(a, lib.tensor([2, 0]), v.detach()), a
    ),
    "NllLoss2DBackwardBackward0": lambda lib, a, b, v: _grad(
        lib, lib.nn.functional.nll_loss(a.view(1, 2, 3, 1), lib.tensor([[[1], [0], [1]]])), a
    ),
    # pooling: a (2, 3) input is one (C, H, W) plane of 1 x 2 x 3
    "MaxPool2DWithIndicesBackward0": lambda lib, a, b, v: lib.nn.functional.max_pool2d(a[None], 2, 1),
    "MaxPool2DWithIndicesBackwardBackward0": lambda lib, a, b, v: _grad(
        lib, lib.nn.functional.max_pool2d(a[None], 2, 1), a
    ),
    "AvgPool2DBackward0": lambda lib, a, b, v: lib.nn.functional.avg_pool2d(a[None], 2, 1, divisor_override=3),
    "AvgPool2DBackwardBackward0": lambda lib, a, b, v: _grad(lib, lib.nn.functional.avg_pool2d(a[None], 2, 1), a),
    "AdaptiveAvgPool2DBackward0": lambda lib, a, b, v: lib.nn.functional.adaptive_avg_pool2d(a[None], 2),
    "AdaptiveAvgPool2DBackwardBackward0": lambda lib, a, b, v: _grad(
        lib, lib.nn.functional.adaptive_avg_pool2d(a[None], 2), a
    ),
    "AdaptiveMaxPool2DBackward0": lambda lib, a, b, v: lib.nn.functional.adaptive_max_pool2d(a[None], 2),
    "AdaptiveMaxPool2DBackwardBackward0": lambda lib, a, b, v: _grad(
        lib, lib.nn.functional.adaptive_max_pool2d(a[None], 2), a
    ),
    "ConstantPadNdBackward0": lambda lib, a, b, v: lib.nn.functional.pad(a, (1, 2, 0, 1)),
    "ConvolutionBackward0": lambda lib, a, b, v: lib.nn.functional.conv1d(a.unsqueeze(0), b.t().unsqueeze(2), v),
    "ConvolutionBackwardBackward0": lambda lib, a, b, v: _grad(
        lib, lib.nn.functional.conv_transpose1d(a.unsqueeze(0), b.unsqueeze(2), v, stride=2, output_padding=1), a
    ),
    "Im2ColBackward0": lambda lib, a, b, v: lib.nn.functional.unfold(a.unsqueeze(0), 2),
    "Col2ImBackward0": lambda lib, a, b, v: lib.nn.functional.fold(a, (1, 3), 1),
    "NativeLayerNormBackward0": lambda lib, a, b, v: lib.nn.functional.layer_norm(a, (3,), v, v),
    "NativeLayerNormBackwardBackward0": lambda lib, a, b, v: _grad(lib, lib.nn.functional.layer_norm(a, (3,), v, v), a),
    "NativeGroupNormBackward0": lambda lib, a, b, v: lib.nn.functional.group_norm(a.view(1, 2, 3), 2, b[0, :2]),
    "NativeBatchNormBackward0": lambda lib, a, b, v: lib.nn.functional.batch_norm(
        a, lib.zeros(3, dtype=a.dtype), lib.ones(3, dtype=a.dtype), v, v, training=True
    ),
    "NativeBatchNormBackwardBackward0": lambda lib, a, b, v: _grad(
        lib,
        lib.nn.functional.batch_norm(a, lib.zeros(3, dtype=a.dtype), lib.ones(3, dtype=a.dtype), v, v, training=True),
        a,
    ),
    "ScaledDotProductFlashAttentionForCpuBackward0": lambda lib, a, b, v: (
        lib.nn.functional.scaled_dot_product_attention(a.view(1, 1, 2, 3), b.view(1, 1, 2, 3), a.view(1, 1, 2, 3))
    ),
    "AddBackward1": lambda lib, a, b, v: lib.nn.functional.rms_norm(a, (3,)),
    "EmbeddingBackward0": lambda lib, a, b, v: lib.nn.functional.embedding(lib.tensor([1, 0, 1]), a, padding_idx=0),
    "EmbeddingDenseBackwardBackward0": lambda lib, a, b, v: _grad(
        lib, lib.nn.functional.embedding(lib.tensor([1, 0, 1]), a, padding_idx=0), a
    ),
    "EmbeddingBagBackward0": lambda lib, a, b, v: lib.nn.functional.embedding_bag(
        lib.tensor([1, 0, 1]), a, lib.tensor([0, 1]), mode="sum", per_sample_weights=v
    ),
    "EmbeddingBagBackwardBackward0": lambda lib, a, b, v: _grad(
        lib, lib.nn.functional.embedding_bag(lib.tensor([[1, 0]]), a, mode="max"), a
    ),
    "SubBackward1": lambda lib, a, b, v: lib.nn.functional.cosine_embedding_loss(
        a, b, lib.tensor([1.0, -1.0], dtype=a.dtype), margin=0.1
    ),
    "TrilinearBackward0": lambda lib, a, b, v: lib.nn.functional.bilinear(a, b, v.view(1, 3, 1) * v.view(1, 1, 3)),
    "CdistBackward0": lambda lib, a, b, v: lib.cdist(a, b * v, 3.0),
    "CdistBackwardBackward0": lambda lib, a, b, v: _grad(lib, lib.cdist(a, b * v, 3.0), a),
    "EuclideanDistBackward0": lambda lib, a, b, v: lib.cdist(a, b * v, compute_mode="use_mm_for_euclid_dist"),
}

# Upsampling: (1, 2, 3) and (1, 1, 2, 3) inputs; each op's double backward node
# from the gradient of its forward.
_UPSAMPLE_PROGRAMS = {
    "Nearest1D": lambda lib, x: lib.nn.functional.interpolate(x[None], scale_factor=1.5),
    "Nearest2D": lambda lib, x: lib.nn.functional.interpolate(x[None, None], size=(3, 4)),
    "NearestExact1D": lambda lib, x: lib.nn.functional.interpolate(x[None], size=5, mode="nearest-exact"),
    "NearestExact2D": lambda lib, x: lib.nn.functional.interpolate(x[None, None], scale_factor=2, mode="nearest-exact"),
    "Linear1D": lambda lib, x: lib.nn.functional.interpolate(x[None], size=5, mode="linear"),
    "Bilinear2D": lambda lib, x: lib.nn.functional.interpolate(
        x[None, None], scale_factor=1.5, mode="bilinear", align_corners=True
    ),
}
for _kind, _program in _UPSAMPLE_PROGRAMS.items():
    PROGRAMS[f"Upsample{_kind}Backward0"] = lambda lib, a, b, v, f=_program: f(lib, a)
    PROGRAMS[f"Upsample{_kind}BackwardBackward0"] = lambda lib, a, b, v, f=_program: _grad(lib, f(lib, a), a)

# The op tables' ops get a program from their entry (inputs in (0.5, 2), inside every
# table op's domain).
for _op in npgrad._C._op_table:
    if not _op["node"]:  # a bool-valued op records no node
        continue
    if _op["family"] == "unary":
        PROGRAMS.setdefault(_op["node"], lambda lib, a, b, v, name=_op["name"]: getattr(a, name)())
    elif _op["family"] == "reduction":
        PROGRAMS.setdefault(_op["node"], lambda lib, a, b, v, name=_op["name"]: getattr(a, name)(1))
        if _op["full_node"]:
            PROGRAMS.setdefault(_op["full_node"], lambda lib, a, b, v, name=_op["name"]: getattr(a, name)())
    elif _op["family"] == "linalg":
        assert _op["node"] in PROGRAMS  # the factors' shapes differ per op: programs above
    elif _op["public"]:
        PROGRAMS.setdefault(_op["node"], lambda lib, a, b, v, name=_op["name"]: getattr(a, name)(b))
        if _op["number_node"]:
            PROGRAMS.setdefault(_op["number_node"], lambda lib, a, b, v, name=_op["name"]: getattr(a, name)(2))
# The in-place comparisons' zero-gradient nodes (eq_: EqBackward1 for a tensor, EqBackward0
# for a number).
for _op in npgrad._C._op_table:
    if _op.get("inplace_nodes"):
        _tensor_node, _number_node = _op["inplace_nodes"]
        PROGRAMS.setdefault(
            _tensor_node,
            lambda lib, a, b, v, name=_op["inplace"]: _inplace_on_clone(lib, a, lambda c: getattr(c, name)(b)),
        )
        PROGRAMS.setdefault(
            _number_node,
            lambda lib, a, b, v, name=_op["inplace"]: _inplace_on_clone(lib, a, lambda c: getattr(c, name)(1.0)),
        )

# The activation table's nodes: the function (torch._C._nn's or torch's), and the
# in-place form for an in-place node of its own.
for _op in npgrad._C._activation_table:
    _args = tuple(0.1 for p in _op["params"] if p["required"])

    def _call(lib: Any, a: Any, name: str, nn: bool = _op["binding"] == "nn", args: tuple = _args) -> Any:
        return getattr(lib._C._nn if nn else lib, name)(a, *args)

    PROGRAMS.setdefault(_op["node"], lambda lib, a, b, v, name=_op["name"], call=_call: call(lib, a, name))
    if _op["inplace_node"]:
        PROGRAMS.setdefault(
            _op["inplace_node"], lambda lib, a, b, v, name=_op["inplace"], call=_call: call(lib, a * 1, name)
        )

# Where torch's graph has another node for the same program. torch's as_strided
# backward writes the gradient through a view (CopySlices) where npgrad records a
# node of its own.
TORCH_RECORDS_INSTEAD = {"AsStridedScatterBackward0": "CopySlices"}

# Node classes that save nothing and are not recorded by an op: the engine's own
# (GraphRoot, Identity), AccumulateGrad (its `variable` is the leaf, not saved
# state), and the common base class.
NOT_RECORDED_BY_AN_OP = {"_NodeBase", "GraphRoot", "Identity", "AccumulateGrad"}


def _find_node(root: Any, name: str) -> Any:
    """The first node named ``name`` in the graph of ``root`` (breadth first)."""
    # `visited` keeps each node's Python object alive: a freed wrapper's id can
    # be reused by the next one, which `seen` would then skip.
    queue, seen, visited = [root.grad_fn], set(), []
    while queue:
        fn = queue.pop(0)
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        visited.append(fn)
        if type(fn).__name__ == name:
            return fn
        queue.extend(next_fn for next_fn, _ in fn.next_functions)
    raise AssertionError(f"the program records no {name}")


def _is_saved_tensor_state(value: Any) -> bool:
    return is_tensor(value) or (isinstance(value, tuple) and any(is_tensor(x) for x in value))


def test_every_node_type_has_a_program(ng):
    if AGAINST_TORCH:
        pytest.skip("torch binds hundreds of node types; this lists npgrad's")
    functions = ng._C._functions
    bound = {
        name
        for name in dir(functions)
        if isinstance(getattr(functions, name), type) and issubclass(getattr(functions, name), functions._NodeBase)
    }
    assert bound - NOT_RECORDED_BY_AN_OP == set(PROGRAMS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_saved_state_is_freed_by_backward(ng, name):
    a, b, v = _inputs(ng)
    out = PROGRAMS[name](ng, a, b, v)
    node = _find_node(out, TORCH_RECORDS_INSTEAD.get(name, name) if AGAINST_TORCH else name)
    names = [n for n in dir(node) if n.startswith("_saved_")]
    before = {n: getattr(node, n) for n in names}
    tensors = [n for n, value in before.items() if _is_saved_tensor_state(value)]
    if not names:
        return  # nothing saved (and an Error node refuses to run at all)

    out.sum().backward()

    for n in tensors:
        with pytest.raises(RuntimeError, match=FREED):
            getattr(node, n)
    for n in tensors:
        if n.startswith("_saved_") and isinstance(before[n], tuple):
            with pytest.raises(RuntimeError, match=FREED):
                getattr(node, "_raw" + n)
    for n, value in before.items():
        if n not in tensors:
            assert getattr(node, n) == value, n


def test_freed_index_list_with_a_full_slice_raises(ng):
    """A saved index list holding None (a full slice) raises as a whole after backward."""
    a, _, _ = _inputs(ng)
    out = a[:, _index(ng)]
    node = out.grad_fn
    assert type(node).__name__ == "IndexBackward0"
    indices = node._saved_indices
    assert indices[0] is None and is_tensor(indices[1])
    out.sum().backward()
    with pytest.raises(RuntimeError, match=FREED):
        _ = node._saved_indices


def test_second_backward_through_freed_index_node_raises(ng):
    a, _, _ = _inputs(ng)
    out = a[_index(ng)].sum()
    out.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        out.backward()


def _saved_attributes(lib: Any, name: str, mask: tuple[bool, bool, bool]) -> Any:
    """Every ``_saved_*`` attribute of the node ``name`` recorded with only the
    inputs of ``mask`` requiring grad, or the exception type when the program
    fails with that mask (it may need an input to require grad)."""
    a, b, v = _inputs(lib)
    for t, requires_grad in zip((a, b, v), mask):
        t.requires_grad_(requires_grad)
    try:
        node = _find_node(PROGRAMS[name](lib, a, b, v), name)
    except Exception as e:  # the same failure is expected of both libraries
        return type(e).__name__
    return {n: getattr(node, n) for n in dir(node) if n.startswith("_saved_")}


MASKS = [m for m in itertools.product((True, False), repeat=3) if any(m)]


@pytest.mark.usefixtures("torch_ref")
@pytest.mark.parametrize(
    "name",
    sorted(set(PROGRAMS) - set(TORCH_RECORDS_INSTEAD)),
)
def test_saved_attributes_match_torch_with_and_without_requires_grad(name):
    """Each node saves (and shows) exactly what torch's does, whichever of its
    inputs require grad: a tensor or metadata needed only for one input's gradient
    is saved only when that gradient is (else ``None`` or ``()``, as torch)."""
    for mask in MASKS:
        got, expected = run_both(lambda lib, mask=mask: _saved_attributes(lib, name, mask))
        if isinstance(expected, dict):
            assert isinstance(got, dict), (mask, got)
            assert sorted(got) == sorted(expected), mask
            for attr in expected:
                assert same_value(got[attr], expected[attr]), (mask, attr, got[attr], expected[attr])
        else:
            assert got == expected, mask
