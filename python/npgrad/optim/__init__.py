"""``npgrad.optim``: as ``torch.optim``: the ``Optimizer`` base class, the
optimizers (each torch's single-tensor algorithm, with its state keys and
argument checks) and ``lr_scheduler``.

>>> import npgrad as torch
>>> model = torch.nn.Linear(2, 1)
>>> opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
>>> sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
>>> model(torch.ones(3, 2)).sum().backward()
>>> opt.step()
>>> sched.step()
>>> sched.get_last_lr()
[0.005]
"""

from __future__ import annotations

from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .sgd import SGD

# torch's __all__, less the optimizers npgrad does not have (Adafactor, ASGD,
# LBFGS, Muon, Rprop, SparseAdam, swa_utils, swap_in_optimizer_params_and_state).
__all__ = [
    "Adadelta",
    "Adagrad",
    "Adam",
    "Adamax",
    "AdamW",
    "lr_scheduler",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "SGD",
]
