"""``npgrad.nn``: as ``torch.nn``: ``Parameter``, ``Module`` and its layers
and containers, ``functional``, ``init`` and ``utils``.

>>> import npgrad as torch
>>> torch.nn.functional.relu(torch.tensor([-1.0, 2.0]))
tensor([0., 2.])
>>> torch.nn.Sequential(torch.nn.Linear(2, 1), torch.nn.Sigmoid())
Sequential(
  (0): Linear(in_features=2, out_features=1, bias=True)
  (1): Sigmoid()
)
"""

from __future__ import annotations

# In dependency order: the layers use functional, parameter and init.
from . import functional, init, modules, utils
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter

__all__ = ["Buffer", "Parameter", "functional", "init", "modules", "utils", *_modules_all]
