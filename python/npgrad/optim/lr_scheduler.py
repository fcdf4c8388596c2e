"""Learning-rate schedulers (torch's ``torch/optim/lr_scheduler.py``).

A scheduler rewrites ``group["lr"]`` of its optimizer's param groups at each
``step()``. As in torch, most compute the new rate from the current one
(the "chainable" recursive form, so schedulers can be combined); the closed
form of ``base_lrs`` is used when ``step(epoch)`` is given an epoch.

>>> import npgrad as torch
>>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
>>> sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.5)
>>> lrs = []
>>> for _ in range(4):
...     opt.step()
...     sched.step()
...     lrs.append(sched.get_last_lr()[0])
>>> lrs
[0.5, 0.5, 0.25, 0.25]
"""

from __future__ import annotations

import math
import types
import warnings
import weakref
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import partial, wraps
from typing import Any

from .._C import Tensor
from .optimizer import Optimizer

__all__ = [
    "LambdaLR",
    "MultiplicativeLR",
    "StepLR",
    "MultiStepLR",
    "ConstantLR",
    "LinearLR",
    "ExponentialLR",
    "SequentialLR",
    "CosineAnnealingLR",
    "ChainedScheduler",
    "ReduceLROnPlateau",
    "CyclicLR",
    "CosineAnnealingWarmRestarts",
    "OneCycleLR",
    "PolynomialLR",
    "LRScheduler",
]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)


def _format_param(name: str, optimizer: Optimizer, param: Any) -> list[Any]:
    """``param`` per param group: a list of the groups' length, or one value repeated."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. "
                f"{name} has {len(param)} values, param_groups has {len(optimizer.param_groups)}."
            )
    else:
        param = [param] * len(optimizer.param_groups)
    return [p.clone() if isinstance(p, Tensor) else p for p in param]


def _group_values(optimizer: Optimizer, key: str) -> list[Any]:
    """``group[key]`` of every param group (tensors copied)."""
    return [g[key].clone() if isinstance(g[key], Tensor) else g[key] for g in optimizer.param_groups]


def _set_group_value(group: dict[str, Any], key: str, value: Any) -> None:
    # A tensor learning rate is updated in place, as torch does.
    if isinstance(group[key], Tensor):
        group[key].fill_(value.item() if isinstance(value, Tensor) else value)
    else:
        group[key] = value


def _check_optimizer(optimizer: Any) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


class LRScheduler:
    """Base class of the schedulers: ``LRScheduler(optimizer, last_epoch=-1)``.

    With ``last_epoch=-1`` each param group gets ``initial_lr`` (its current
    ``lr``); ``base_lrs`` are the groups' ``initial_lr``. The constructor takes
    a first step (epoch 0). Subclasses implement ``get_lr()``.

    >>> import npgrad as torch
    >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1)
    >>> sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> sched.last_epoch, sched.base_lrs, opt.param_groups[0]["initial_lr"]
    (0, [0.1], 0.1)
    """

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                initial_lr = group["lr"]
                group.setdefault("initial_lr", initial_lr.clone() if isinstance(initial_lr, Tensor) else initial_lr)
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming scheduler "
                        "with last_epoch >= 0.\n"
                        "This typically happens when:\n"
                        "1. You're trying to resume training from a checkpoint but haven't properly loaded "
                        "the optimizer state\n"
                        "2. You're using last_epoch >= 0 for a fresh training run (not recommended)"
                    )
        self.base_lrs: list[Any] = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._track_optimizer_step()
        self._initial_step()

    def _track_optimizer_step(self) -> None:
        # Wraps optimizer.step (once) so the first scheduler step can warn
        # when it comes before any optimizer step.
        opt = self.optimizer
        if hasattr(opt.step, "_wrapped_by_lr_sched"):
            return
        opt_ref = weakref.ref(opt)
        func = opt.step.__func__  # type: ignore[attr-defined]

        @wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            o = opt_ref()
            o._opt_called = True  # type: ignore[union-attr]
            return func.__get__(o, o.__class__)(*args, **kwargs)

        wrapper._wrapped_by_lr_sched = True  # type: ignore[attr-defined]
        opt.step = wrapper  # type: ignore[method-assign]

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's attributes except the optimizer.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1)
        >>> sd = torch.optim.lr_scheduler.StepLR(opt, step_size=2).state_dict()
        >>> sd["step_size"], sd["last_epoch"], sd["base_lrs"]
        (2, 0, [0.1])
        """
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restores the attributes ``state_dict`` returned.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1)
        >>> sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2)
        >>> sched.load_state_dict({**sched.state_dict(), "last_epoch": 7})
        >>> sched.last_epoch
        7
        """
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list[Any]:
        """The learning rates the last step set, one per param group.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1)
        >>> torch.optim.lr_scheduler.ConstantLR(opt, factor=0.5).get_last_lr()
        [0.05]
        """
        return self._last_lr

    def get_lr(self) -> list[Any]:
        """The learning rates of the step being taken (called by ``step``;
        elsewhere, use ``get_last_lr``). Subclasses implement it.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1)
        >>> torch.optim.lr_scheduler.LRScheduler(opt)
        Traceback (most recent call last):
            ...
        NotImplementedError
        """
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        """Moves to the next epoch and sets the param groups' ``lr``. An
        explicit ``epoch`` (deprecated, warns) uses the closed form where
        the scheduler has one.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
        >>> sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> opt.step()
        >>> sched.step()
        >>> opt.param_groups[0]["lr"]
        0.5
        """
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(
                    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
                    "initialization. Please, make sure to call `optimizer.step()` before "
                    "`lr_scheduler.step()`. See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning,
                    stacklevel=2,
                )
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(
                    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
                    "In PyTorch 1.1.0 and later, you should call them in the opposite order: "
                    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this "
                    "will result in PyTorch skipping the first value of the learning rate schedule. "
                    "See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning,
                    stacklevel=2,
                )
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr: list[Any] = _group_values(self.optimizer, "lr")

    def _warn_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                UserWarning,
                stacklevel=3,
            )

    def _lrs(self) -> list[Any]:
        # The current rates, unchanged.
        return _group_values(self.optimizer, "lr")

    def _scaled(self, factor: float) -> list[Any]:
        # The current rates times ``factor``.
        return [group["lr"] * factor for group in self.optimizer.param_groups]


class _LambdaState(LRScheduler):
    # LambdaLR and MultiplicativeLR: per-group lambdas, saved in the state
    # dict only as the __dict__ of callable objects (plain functions as None).
    lr_lambdas: list[Callable[[int], float]]

    def _set_lambdas(self, optimizer: Optimizer, lr_lambda: Any) -> None:
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)

    def state_dict(self) -> dict[str, Any]:
        """The attributes except the optimizer; of ``lr_lambdas``, the
        ``__dict__`` of each callable object (``None`` for a function).

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1)
        >>> torch.optim.lr_scheduler.LambdaLR(opt, lambda e: 1.0).state_dict()["lr_lambdas"]
        [None]
        """
        state_dict = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state_dict["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else fn.__dict__.copy() for fn in self.lr_lambdas
        ]
        return state_dict

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restores the attributes and the callable objects' ``__dict__``.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1)
        >>> sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda e: 1.0)
        >>> sched.load_state_dict({**sched.state_dict(), "last_epoch": 3})
        >>> sched.last_epoch
        3
        """
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lr_lambdas
        for fn, saved in zip(self.lr_lambdas, lr_lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class LambdaLR(_LambdaState):
    """``LambdaLR(optimizer, lr_lambda, last_epoch=-1)``: ``lr = base_lr *
    lr_lambda(epoch)``, one function or one per param group.

    >>> import npgrad as torch
    >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
    >>> sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 0.5**epoch)
    >>> opt.step(); sched.step(); opt.step(); sched.step()
    >>> sched.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Any, last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        self._set_lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """``base_lr * lr_lambda(last_epoch)`` per group.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
        >>> sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 2.0)
        >>> sched.get_last_lr()
        [2.0]
        """
        self._warn_outside_step()
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaState):
    """``MultiplicativeLR(optimizer, lr_lambda, last_epoch=-1)``: each step
    multiplies the current ``lr`` by ``lr_lambda(epoch)``.

    >>> import npgrad as torch
    >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
    >>> sched = torch.optim.lr_scheduler.MultiplicativeLR(opt, lambda epoch: 0.5)
    >>> opt.step(); sched.step(); opt.step(); sched.step()
    >>> sched.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Any, last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        self._set_lambdas(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The current ``lr`` times ``lr_lambda(last_epoch)`` (unchanged at the initial step).

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
        >>> torch.optim.lr_scheduler.MultiplicativeLR(opt, lambda epoch: 0.5).get_last_lr()
        [1.0]
        """
        self._warn_outside_step()
        if self._is_initial:
            return self._lrs()
        return [g["lr"] * fn(self.last_epoch) for fn, g in zip(self.lr_lambdas, self.optimizer.param_groups)]


class StepLR(LRScheduler):
    """``StepLR(optimizer, step_size, gamma=0.1, last_epoch=-1)``: ``lr`` times
    ``gamma`` every ``step_size`` epochs.

    >>> import npgrad as torch
    >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
    >>> sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)
    >>> lrs = []
    >>> for _ in range(4):
    ...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [1.0, 0.1, 0.1, 0.010000000000000002]
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The current ``lr``, times ``gamma`` at each multiple of ``step_size``.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
        >>> torch.optim.lr_scheduler.StepLR(opt, 1).get_last_lr()
        [1.0]
        """
        self._warn_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._lrs()
        return self._scaled(self.gamma)

    def _get_closed_form_lr(self) -> list[Any]:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """``MultiStepLR(optimizer, milestones, gamma=0.1, last_epoch=-1)``: ``lr``
    times ``gamma`` at each milestone epoch (repeated milestones compound).

    >>> import npgrad as torch
    >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
    >>> sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 1], gamma=0.5)
    >>> opt.step(); sched.step()
    >>> sched.get_last_lr()
    [0.25]
    """

    def __init__(
        self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The current ``lr``, times ``gamma`` per milestone at this epoch.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
        >>> torch.optim.lr_scheduler.MultiStepLR(opt, [0]).get_last_lr()
        [0.1]
        """
        self._warn_outside_step()
        if self.last_epoch not in self.milestones:
            return self._lrs()
        return self._scaled(self.gamma ** self.milestones[self.last_epoch])

    def _get_closed_form_lr(self) -> list[Any]:
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch) for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """``ConstantLR(optimizer, factor=1/3, total_iters=5, last_epoch=-1)``:
    ``lr`` times ``factor`` until epoch ``total_iters``, then back.

    >>> import npgrad as torch
    >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
    >>> sched = torch.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=1)
    >>> before = sched.get_last_lr()
    >>> opt.step(); sched.step()
    >>> before, sched.get_last_lr()
    ([0.5], [1.0])
    """

    def __init__(
        self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5, last_epoch: int = -1
    ) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """``lr * factor`` at epoch 0, ``lr / factor`` at ``total_iters``, else unchanged.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
        >>> torch.optim.lr_scheduler.ConstantLR(opt, factor=0.25).get_last_lr()
        [0.25]
        """
        self._warn_outside_step()
        if self.last_epoch == 0:
            return self._scaled(self.factor)
        if self.last_epoch != self.total_iters:
            return self._lrs()
        return self._scaled(1.0 / self.factor)

    def _get_closed_form_lr(self) -> list[Any]:
        return [
            base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
            for base_lr in self.base_lrs
        ]


class LinearLR(LRScheduler):
    """``LinearLR(optimizer, start_factor=1/3, end_factor=1.0, total_iters=5,
    last_epoch=-1)``: the factor of ``lr`` goes linearly from
    ``start_factor`` to ``end_factor`` over ``total_iters`` epochs.

    >>> import npgrad as torch
    >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
    >>> sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> lrs = sched.get_last_lr()
    >>> for _ in range(3):
    ...     opt.step(); sched.step(); lrs += sched.get_last_lr()
    >>> lrs
    [0.5, 0.75, 1.0, 1.0]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The current ``lr`` times the ratio of this epoch's factor to the last one's.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
        >>> torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.25).get_last_lr()
        [0.25]
        """
        self._warn_outside_step()
        if self.last_epoch == 0:
            return self._scaled(self.start_factor)
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._lrs()
        delta = self.end_factor - self.start_factor
        return self._scaled(1.0 + delta / (self.total_iters * self.start_factor + (self.last_epoch - 1) * delta))

    def _get_closed_form_lr(self) -> list[Any]:
        return [
            base_lr
            * (
                self.start_factor
                + (self.end_factor - self.start_factor) * min(self.total_iters, self.last_epoch) / self.total_iters
            )
            for base_lr in self.base_lrs
        ]


class ExponentialLR(LRScheduler):
    """``ExponentialLR(optimizer, gamma, last_epoch=-1)``: ``lr`` times ``gamma`` every epoch.

    >>> import npgrad as torch
    >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
    >>> sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> opt.step(); sched.step(); opt.step(); sched.step()
    >>> sched.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The current ``lr`` times ``gamma`` (unchanged at the initial step).

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
        >>> torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5).get_last_lr()
        [1.0]
        """
        self._warn_outside_step()
        if self._is_initial:
            return self._lrs()
        return self._scaled(self.gamma)

    def _get_closed_form_lr(self) -> list[Any]:
        return [base_lr * self.gamma**self.last_epoch for base_lr in self.base_lrs]


def _check_schedulers(owner: LRScheduler, optimizer: Any, schedulers: Sequence[LRScheduler], what: str) -> None:
    """SequentialLR's and ChainedScheduler's checks of their schedulers."""
    name = type(owner).__name__
    if len(schedulers) < 1:
        raise ValueError(f"{name} expects at least one scheduler{what}, but got no scheduler.")
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{name} does not support `ReduceLROnPlateau` scheduler as it "
                "requires additional kwargs to be specified when calling `step`, "
                f"but got one at index {i} in the given schedulers sequence."
            )
        if optimizer != scheduler.optimizer:
            raise ValueError(
                f"{name} expects all schedulers to belong to the same optimizer, but "
                f"got scheduler {scheduler.__class__.__name__} at index {i} has {scheduler.optimizer}, "
                f"which is different from {optimizer.__class__.__name__}."
            )


class _Composite(LRScheduler):
    # SequentialLR and ChainedScheduler: the state dict holds each wrapped
    # scheduler's own state dict.
    _schedulers: Sequence[LRScheduler]

    def state_dict(self) -> dict[str, Any]:
        """The attributes except the optimizer, with each wrapped scheduler's state dict.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
        >>> s1 = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> chained = torch.optim.lr_scheduler.ChainedScheduler([s1])
        >>> chained.state_dict()["_schedulers"][0]["gamma"]
        0.5
        """
        state_dict = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state_dict["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state_dict

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restores the attributes and each wrapped scheduler's state.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
        >>> s1 = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> chained = torch.optim.lr_scheduler.ChainedScheduler([s1])
        >>> saved = chained.state_dict()
        >>> saved["_schedulers"][0]["gamma"] = 0.25
        >>> chained.load_state_dict(saved)
        >>> s1.gamma
        0.25
        """
        schedulers = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        state_dict["_schedulers"] = schedulers
        for scheduler, saved in zip(self._schedulers, schedulers):
            scheduler.load_state_dict(saved)


class SequentialLR(_Composite):
    """``SequentialLR(optimizer, schedulers, milestones, last_epoch=-1)``: runs
    ``schedulers[i]`` between ``milestones[i-1]`` and ``milestones[i]``; at a
    milestone the next scheduler starts from its closed form at epoch 0.

    >>> import npgrad as torch
    >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
    >>> warmup = torch.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
    >>> decay = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> sched = torch.optim.lr_scheduler.SequentialLR(opt, [warmup, decay], milestones=[2])
    >>> lrs = sched.get_last_lr()
    >>> for _ in range(4):
    ...     opt.step(); sched.step(); lrs += sched.get_last_lr()
    >>> lrs
    [0.5, 0.5, 1.0, 0.5, 0.25]
    """

    def __init__(
        self, optimizer: Optimizer, schedulers: list[LRScheduler], milestones: list[int], last_epoch: int = -1
    ) -> None:
        _check_schedulers(self, optimizer, schedulers, "")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                f"than the number of milestone points, but got number of schedulers {len(schedulers)} and the "
                f"number of milestones to be equal to {len(milestones)}"
            )
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # Undo what the schedulers' constructors did, then start the first one.
        for group in self.optimizer.param_groups:
            _set_group_value(group, "lr", group["initial_lr"])
        self.recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def recursive_undo(self, sched: Any = None) -> None:
        """Steps every wrapped scheduler (recursively) back one epoch.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
        >>> s1 = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> seq = torch.optim.lr_scheduler.SequentialLR(opt, [s1], milestones=[])
        >>> seq.recursive_undo()
        >>> s1.last_epoch
        -1
        """
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self) -> None:  # type: ignore[override]
        """Steps the scheduler of the current epoch.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
        >>> s1 = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> seq = torch.optim.lr_scheduler.SequentialLR(opt, [s1], milestones=[])
        >>> opt.step(); seq.step()
        >>> seq.get_last_lr()
        [0.5]
        """
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class PolynomialLR(LRScheduler):
    """``PolynomialLR(optimizer, total_iters=5, power=1.0, last_epoch=-1)``:
    ``lr = base_lr * (1 - epoch / total_iters) ** power`` up to ``total_iters``.

    >>> import npgrad as torch
    >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
    >>> sched = torch.optim.lr_scheduler.PolynomialLR(opt, total_iters=2)
    >>> opt.step(); sched.step()
    >>> sched.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The current ``lr`` times the ratio of this epoch's decay to the last one's.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
        >>> torch.optim.lr_scheduler.PolynomialLR(opt).get_last_lr()
        [1.0]
        """
        self._warn_outside_step()
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._lrs()
        decay_factor = (
            (1.0 - self.last_epoch / self.total_iters) / (1.0 - (self.last_epoch - 1) / self.total_iters)
        ) ** self.power
        return self._scaled(decay_factor)

    def _get_closed_form_lr(self) -> list[Any]:
        return [
            base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
            for base_lr in self.base_lrs
        ]


class CosineAnnealingLR(LRScheduler):
    """``CosineAnnealingLR(optimizer, T_max, eta_min=0.0, last_epoch=-1)``:
    ``lr`` follows half a cosine from ``base_lr`` to ``eta_min`` over ``T_max``
    epochs (torch's recursive form, so it can be chained).

    >>> import npgrad as torch
    >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
    >>> sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2)
    >>> lrs = []
    >>> for _ in range(2):
    ...     opt.step(); sched.step(); lrs.append(round(sched.get_last_lr()[0], 6))
    >>> lrs
    [0.5, 0.0]
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """This epoch's rate from the current one (torch's recursive cosine step).

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
        >>> torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4).get_last_lr()
        [1.0]
        """
        self._warn_outside_step()
        groups = self.optimizer.param_groups
        if self._is_initial:
            return self._lrs()
        if self._step_count == 1 and self.last_epoch > 0:
            return [
                self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(self.last_epoch * math.pi / self.T_max)) / 2
                for base_lr in self.base_lrs
            ]
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return [
                g["lr"] + (base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                for base_lr, g in zip(self.base_lrs, groups)
            ]
        return [
            (1 + math.cos(math.pi * self.last_epoch / self.T_max))
            / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
            * (g["lr"] - self.eta_min)
            + self.eta_min
            for g in groups
        ]

    def _get_closed_form_lr(self) -> list[Any]:
        return [
            self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
            for base_lr in self.base_lrs
        ]


class ChainedScheduler(_Composite):
    """``ChainedScheduler(schedulers, optimizer=None)``: each ``step()`` steps
    every scheduler in turn, so their (recursive) effects multiply.

    >>> import npgrad as torch
    >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
    >>> s1 = torch.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
    >>> s2 = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> sched = torch.optim.lr_scheduler.ChainedScheduler([s1, s2])
    >>> lrs = sched.get_last_lr()
    >>> for _ in range(3):
    ...     opt.step(); sched.step(); lrs += sched.get_last_lr()
    >>> lrs
    [0.5, 0.25, 0.25, 0.125]
    """

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None) -> None:
        if len(schedulers) < 1:
            raise ValueError(
                f"{type(self).__name__} expects at least one scheduler to be chained, but got no scheduler."
            )
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(self, optimizer, schedulers, " to be chained")
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")

    def step(self) -> None:  # type: ignore[override]
        """Steps every chained scheduler.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
        >>> s1 = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> chained = torch.optim.lr_scheduler.ChainedScheduler([s1])
        >>> opt.step(); chained.step()
        >>> chained.get_last_lr()
        [0.5]
        """
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")


class ReduceLROnPlateau(LRScheduler):
    """``ReduceLROnPlateau(optimizer, mode="min", factor=0.1, patience=10,
    threshold=1e-4, threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8)``:
    ``step(metric)`` multiplies ``lr`` by ``factor`` (not below ``min_lr``)
    after more than ``patience`` epochs without improvement, then waits
    ``cooldown`` epochs.

    >>> import npgrad as torch
    >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
    >>> sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, factor=0.5)
    >>> for loss in [1.0, 1.0, 1.0, 0.5, 0.5, 0.5]:
    ...     sched.step(loss)
    >>> sched.get_last_lr()
    [0.25]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr: list[float] | float = 0,
        eps: float = 1e-8,
    ) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
            self.default_min_lr: float | None = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _group_values(self.optimizer, "lr")
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics: Any, epoch: int | None = None) -> None:  # type: ignore[override]
        """Records ``metrics`` for this epoch and reduces ``lr`` on a plateau.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
        >>> sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0)
        >>> sched.step(1.0); sched.step(2.0)
        >>> sched.get_last_lr(), sched.best
        ([0.1], 1.0)
        """
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _group_values(self.optimizer, "lr")

    def _reduce_lr(self, epoch: int) -> None:
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(self.optimizer.param_groups)}) differs "
                    f"from when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due to a new "
                    "param group being added to the optimizer. Please modify the `min_lrs` field to match the "
                    "length of the `optimizer` param groups."
                )
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for i, group in enumerate(self.optimizer.param_groups):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                _set_group_value(group, "lr", new_lr)

    @property
    def in_cooldown(self) -> bool:
        """Whether the cooldown after a reduction is still running.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
        >>> torch.optim.lr_scheduler.ReduceLROnPlateau(opt).in_cooldown
        False
        """
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min" and self.threshold_mode == "abs":
            return a < best - self.threshold
        if self.mode == "max" and self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restores the attributes (and re-derives the comparison from ``mode``).

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
        >>> sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt)
        >>> sched.load_state_dict({**sched.state_dict(), "mode": "max"})
        >>> sched.mode_worse
        -inf
        """
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold, threshold_mode=self.threshold_mode)


def _triangular_scale(x: float) -> float:
    return 1.0


def _triangular2_scale(x: float) -> float:
    return 1 / 2.0 ** (x - 1)  # type: ignore[no-any-return]


def _exp_range_scale(gamma: float, x: float) -> float:
    return float(gamma**x)


class CyclicLR(LRScheduler):
    """``CyclicLR(optimizer, base_lr, max_lr, step_size_up=2000,
    step_size_down=None, mode="triangular", gamma=1.0, scale_fn=None,
    scale_mode="cycle", cycle_momentum=True, base_momentum=0.8,
    max_momentum=0.9, last_epoch=-1)``: the cyclical learning rate policy,
    stepped once per batch: ``lr`` goes between ``base_lr`` and ``max_lr``
    (the amplitude scaled per cycle, or per iteration, by ``mode`` or
    ``scale_fn``), the momentum the opposite way.

    >>> import npgrad as torch
    >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1, momentum=0.9)
    >>> sched = torch.optim.lr_scheduler.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
    >>> lrs = sched.get_last_lr()
    >>> for _ in range(4):
    ...     opt.step(); sched.step(); lrs += sched.get_last_lr()
    >>> [round(lr, 6) for lr in lrs]
    [0.1, 0.3, 0.5, 0.3, 0.1]
    """

    use_beta1: bool

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr: float | list[float],
        max_lr: float | list[float],
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: str = "triangular",
        gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: str = "cycle",
        cycle_momentum: bool = True,
        base_momentum: float = 0.8,
        max_momentum: float = 0.9,
        last_epoch: int = -1,
    ) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _set_group_value(group, "lr", lr)
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ["triangular", "triangular2", "exp_range"] and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.base_momentums, self.max_momentums = _start_momentum_cycle(
                self, base_momentum, max_momentum, last_epoch
            )
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        # The built-in modes fix the scale mode too.
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref: Callable[[float], float] = _triangular_scale
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = _triangular2_scale
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = partial(_exp_range_scale, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x: float) -> float:
        """The amplitude's scale at cycle (or iteration) ``x``: ``scale_fn``'s, or the mode's.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], momentum=0.9)
        >>> torch.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, mode="triangular2").scale_fn(3)
        0.25
        """
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    def get_lr(self) -> list[Any]:
        """This iteration's rates (and the groups' momentum, set in passing).

        >>> import npgrad as torch
        >>> opt = torch.optim.Adam([torch.nn.Parameter(torch.ones(1))])
        >>> sched = torch.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0)
        >>> sched.get_last_lr(), opt.param_groups[0]["betas"]
        ([0.1], (0.9, 0.999))
        """
        self._warn_outside_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [
            base_lr + (max_lr - base_lr) * scale_factor * scale for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)
        ]
        if self.cycle_momentum:
            for group, base, top in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                _set_momentum(group, self.use_beta1, top - (top - base) * scale_factor * scale)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """The attributes except the optimizer and the scale function (of a
        custom ``scale_fn`` object, its ``__dict__``; a function is ``None``).

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], momentum=0.9)
        >>> sd = torch.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0).state_dict()
        >>> sd["_scale_fn_custom"], "_scale_fn_ref" in sd
        (None, False)
        """
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restores the attributes (a custom ``scale_fn`` object's ``__dict__`` too).

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], momentum=0.9)
        >>> sched = torch.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0)
        >>> sched.load_state_dict({**sched.state_dict(), "last_epoch": 5})
        >>> sched.last_epoch
        5
        """
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


class CosineAnnealingWarmRestarts(LRScheduler):
    """``CosineAnnealingWarmRestarts(optimizer, T_0, T_mult=1, eta_min=0.0,
    last_epoch=-1)``: cosine annealing from ``base_lr`` to ``eta_min`` over
    ``T_i`` epochs, restarting with ``T_i *= T_mult``. ``step(epoch)`` accepts
    fractional epochs.

    >>> import npgrad as torch
    >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
    >>> sched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2)
    >>> lrs = sched.get_last_lr()
    >>> for _ in range(2):
    ...     opt.step(); sched.step(); lrs += sched.get_last_lr()
    >>> [round(lr, 6) for lr in lrs]
    [1.0, 0.5, 1.0]
    """

    def __init__(
        self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0, last_epoch: int = -1
    ) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur: float = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """``eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2``.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
        >>> torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3).get_last_lr()
        [1.0]
        """
        self._warn_outside_step()
        return [
            self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
            for base_lr in self.base_lrs
        ]

    def step(self, epoch: float | None = None) -> None:
        """Moves to ``epoch`` (by default the next one) and sets ``lr``.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0)
        >>> sched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2)
        >>> sched.step(0.5)
        >>> round(sched.get_last_lr()[0], 6), sched.T_cur
        (0.853553, 0.5)
        """
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult**n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")


class OneCycleLR(LRScheduler):
    """``OneCycleLR(optimizer, max_lr, total_steps=None, epochs=None,
    steps_per_epoch=None, pct_start=0.3, anneal_strategy="cos",
    cycle_momentum=True, base_momentum=0.85, max_momentum=0.95,
    div_factor=25.0, final_div_factor=1e4, three_phase=False, last_epoch=-1)``:
    the 1cycle policy, stepped once per batch: ``lr`` rises from
    ``max_lr / div_factor`` to ``max_lr`` and anneals to a tiny minimum,
    while the momentum (``momentum``, or Adam's ``beta1``) moves the other way.

    >>> import npgrad as torch
    >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1, momentum=0.9)
    >>> sched = torch.optim.lr_scheduler.OneCycleLR(
    ...     opt, max_lr=1.0, total_steps=6, pct_start=0.5, anneal_strategy="linear")
    >>> lrs, moms = sched.get_last_lr(), [opt.param_groups[0]["momentum"]]
    >>> for _ in range(5):
    ...     opt.step(); sched.step()
    ...     lrs += sched.get_last_lr(); moms.append(opt.param_groups[0]["momentum"])
    >>> [round(lr, 3) for lr in lrs]
    [0.04, 0.52, 1.0, 0.667, 0.333, 0.0]
    >>> [round(m, 3) for m in moms]
    [0.95, 0.9, 0.85, 0.883, 0.917, 0.95]
    """

    use_beta1: bool

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | list[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.85,
        max_momentum: float | list[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        warm_end = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                _phase(warm_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(
                    float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"
                ),
                _phase(self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._schedule_phases = [
                _phase(warm_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = _format_param("max_lr", self.optimizer, max_lr)
        if last_epoch == -1:
            for idx, group in enumerate(self.optimizer.param_groups):
                group["initial_lr"] = max_lrs[idx] / div_factor
                group["max_lr"] = max_lrs[idx]
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if self.cycle_momentum:
            _start_momentum_cycle(self, base_momentum, max_momentum, last_epoch, max_first=True)
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[Any]:
        """This step's rate per group (and the group's momentum, set in passing).

        >>> import npgrad as torch
        >>> opt = torch.optim.Adam([torch.nn.Parameter(torch.ones(1))])
        >>> sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10)
        >>> round(sched.get_last_lr()[0], 12), opt.param_groups[0]["betas"]
        (0.04, (0.95, 0.999))
        """
        self._warn_outside_step()
        lrs = []
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(
                f"Tried to step {step_num} times. The specified number of total steps is {self.total_steps}"
            )
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step_num - start_step) / (end_step - start_step)
                    computed_lr = self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct)
                    if self.cycle_momentum:
                        computed_momentum = self._anneal_func(
                            group[phase["start_momentum"]], group[phase["end_momentum"]], pct
                        )
                    break
                start_step = phase["end_step"]
            lrs.append(computed_lr)
            if self.cycle_momentum:
                _set_momentum(group, self.use_beta1, computed_momentum)
        return lrs


def _set_momentum(group: dict[str, Any], use_beta1: bool, momentum: float) -> None:
    """Sets a group's momentum: ``momentum``, or Adam's ``betas[0]``."""
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _start_momentum_cycle(
    owner: Any,
    base_momentum: float | list[float],
    max_momentum: float | list[float],
    last_epoch: int,
    max_first: bool = False,
) -> tuple[list[Any], list[Any]]:
    """CyclicLR's and OneCycleLR's momentum set-up: the optimizer must have a
    momentum (or betas); a fresh schedule starts each group at ``max_momentum``
    and records both bounds in the group. Returns (base, max) per group
    (``max_first``: OneCycleLR checks the length of ``max_momentum`` first)."""
    optimizer = owner.optimizer
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
    owner.use_beta1 = "betas" in optimizer.defaults
    if max_first:
        max_momentums = _format_param("max_momentum", optimizer, max_momentum)
    base_momentums = _format_param("base_momentum", optimizer, base_momentum)
    if not max_first:
        max_momentums = _format_param("max_momentum", optimizer, max_momentum)
    if last_epoch == -1:
        for m_momentum, b_momentum, group in zip(max_momentums, base_momentums, optimizer.param_groups):
            _set_momentum(group, owner.use_beta1, m_momentum)
            group["max_momentum"] = m_momentum
            group["base_momentum"] = b_momentum
    return base_momentums, max_momentums


def _phase(end_step: float, start_lr: str, end_lr: str, start_momentum: str, end_momentum: str) -> dict[str, Any]:
    """One phase of OneCycleLR's schedule: where it ends and which group keys it goes between."""
    return {
        "end_step": end_step,
        "start_lr": start_lr,
        "end_lr": end_lr,
        "start_momentum": start_momentum,
        "end_momentum": end_momentum,
    }
