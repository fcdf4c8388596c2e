"""Loss modules (torch's ``torch/nn/modules/loss.py``): each calls the
``nn.functional`` loss of the same name with the module's settings. The legacy
``size_average`` and ``reduce`` arguments set ``reduction`` (with torch's
deprecation warning); class weights and ``pos_weight`` are buffers.

>>> import npgrad as torch
>>> loss = torch.nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0]))
>>> loss, list(loss.state_dict())
(CrossEntropyLoss(), ['weight'])
"""

from __future__ import annotations

from ..._C import Tensor
from .. import functional as F
from .module import Module

__all__ = [
    "BCELoss",
    "BCEWithLogitsLoss",
    "CosineEmbeddingLoss",
    "CrossEntropyLoss",
    "GaussianNLLLoss",
    "HuberLoss",
    "KLDivLoss",
    "L1Loss",
    "MSELoss",
    "NLLLoss",
    "PoissonNLLLoss",
    "SmoothL1Loss",
    "SoftMarginLoss",
]


class _Loss(Module):
    reduction: str

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = F._legacy_reduction(size_average, reduce, stacklevel=2)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.weight: Tensor | None


class L1Loss(_Loss):
    """The mean (or sum, or none) absolute error (``F.l1_loss``).

    >>> import npgrad as torch
    >>> torch.nn.L1Loss()(torch.tensor([1.0, 3.0]), torch.tensor([2.0, 1.0]))
    tensor(1.5000)
    """

    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    """The negative log likelihood of class indices given log-probabilities
    (``F.nll_loss``), with class ``weight`` and ``ignore_index``.

    >>> import npgrad as torch
    >>> torch.nn.NLLLoss(reduction="sum")(torch.tensor([[-1.0, -2.0]]), torch.tensor([1]))
    tensor(2.)
    """

    __constants__ = ["ignore_index", "reduction"]
    ignore_index: int

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        ignore_index: int = -100,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """The Poisson negative log likelihood (``F.poisson_nll_loss``): of a
    log-rate with ``log_input`` (the default), else of a rate.

    >>> import npgrad as torch
    >>> torch.nn.PoissonNLLLoss()(torch.tensor([0.0]), torch.tensor([2.0]))
    tensor(1.)
    """

    __constants__ = ["log_input", "full", "eps", "reduction"]
    log_input: bool
    full: bool
    eps: float

    def __init__(
        self,
        log_input: bool = True,
        full: bool = False,
        size_average: bool | None = None,
        eps: float = 1e-8,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return F.poisson_nll_loss(
            log_input, target, log_input=self.log_input, full=self.full, eps=self.eps, reduction=self.reduction
        )


class GaussianNLLLoss(_Loss):
    """The Gaussian negative log likelihood of ``target`` under means ``input``
    and variances ``var`` (``F.gaussian_nll_loss``).

    >>> import npgrad as torch
    >>> torch.nn.GaussianNLLLoss()(torch.tensor([1.0]), torch.tensor([3.0]), torch.tensor([2.0]))
    tensor(1.3466)
    """

    __constants__ = ["full", "eps", "reduction"]
    full: bool
    eps: float

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class KLDivLoss(_Loss):
    """The Kullback-Leibler divergence of ``target`` from log-probabilities
    ``input`` (``F.kl_div``); ``log_target`` when the target is a log too.

    >>> import npgrad as torch
    >>> torch.nn.KLDivLoss(reduction="batchmean")(torch.tensor([[0.0]]), torch.tensor([[1.0]]))
    tensor(0.)
    """

    __constants__ = ["reduction"]

    def __init__(
        self,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
        log_target: bool = False,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class MSELoss(_Loss):
    """The mean (or sum, or none) squared error (``F.mse_loss``).

    >>> import npgrad as torch
    >>> torch.nn.MSELoss()(torch.tensor([1.0, 3.0]), torch.tensor([2.0, 1.0]))
    tensor(2.5000)
    """

    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class BCELoss(_WeightedLoss):
    """The binary cross entropy of probabilities ``input`` (``F.binary_cross_entropy``),
    with an optional per-element ``weight``.

    >>> import npgrad as torch
    >>> torch.nn.BCELoss()(torch.tensor([0.5]), torch.tensor([1.0]))
    tensor(0.6931)
    """

    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """The binary cross entropy of logits (``F.binary_cross_entropy_with_logits``),
    with ``weight`` and ``pos_weight`` (the weight of the positive class) as buffers.

    >>> import npgrad as torch
    >>> loss = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0]))
    >>> loss(torch.tensor([0.0]), torch.tensor([1.0])), list(loss.state_dict())
    (tensor(1.3863), ['pos_weight'])
    """

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
        pos_weight: Tensor | None = None,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)
        self.weight: Tensor | None
        self.pos_weight: Tensor | None

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, pos_weight=self.pos_weight, reduction=self.reduction
        )


class SmoothL1Loss(_Loss):
    """The absolute error, squared below ``beta`` (``F.smooth_l1_loss``).

    >>> import npgrad as torch
    >>> torch.nn.SmoothL1Loss(beta=2.0)(torch.tensor([1.0, 4.0]), torch.tensor([0.0, 0.0]))
    tensor(1.6250)
    """

    __constants__ = ["reduction"]

    def __init__(
        self,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
        beta: float = 1.0,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """The squared error below ``delta``, linear above (``F.huber_loss``).

    >>> import npgrad as torch
    >>> torch.nn.HuberLoss(delta=2.0)(torch.tensor([1.0, 4.0]), torch.tensor([0.0, 0.0]))
    tensor(3.2500)
    """

    __constants__ = ["reduction", "delta"]

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        if not isinstance(delta, (float, int)):
            raise TypeError(f"delta must be a float or int, got: {type(delta)}")
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class SoftMarginLoss(_Loss):
    """The two-class logistic loss ``log(1 + exp(-target * input))``
    (``F.soft_margin_loss``).

    >>> import npgrad as torch
    >>> torch.nn.SoftMarginLoss()(torch.tensor([0.0]), torch.tensor([1.0]))
    tensor(0.6931)
    """

    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """The cross entropy of logits and class indices or class probabilities
    (``F.cross_entropy``), with class ``weight``, ``ignore_index`` and
    ``label_smoothing``.

    >>> import npgrad as torch
    >>> torch.nn.CrossEntropyLoss()(torch.tensor([[0.0, 0.0]]), torch.tensor([1]))
    tensor(0.6931)
    """

    __constants__ = ["ignore_index", "reduction", "label_smoothing"]
    ignore_index: int
    label_smoothing: float

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        ignore_index: int = -100,
        reduce: bool | None = None,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


class CosineEmbeddingLoss(_Loss):
    """``1 - cos(x1, x2)`` for a target of 1, ``max(0, cos(x1, x2) - margin)`` for
    -1 (``F.cosine_embedding_loss``).

    >>> import npgrad as torch
    >>> torch.nn.CosineEmbeddingLoss()(torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 1.0]]), torch.tensor([1.0]))
    tensor(1.)
    """

    __constants__ = ["margin", "reduction"]
    margin: float

    def __init__(
        self, margin: float = 0.0, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean"
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)
