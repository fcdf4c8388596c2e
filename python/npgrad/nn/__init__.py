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

# The layers, star-imported from each file of .modules rather than from the
# package: mypy resolves a package's `__all__ +=` only after this import
# cycle (the layers import nn.functional), so `from .modules import *`
# would give type checkers `Module` alone.
from .modules import Module
from .modules.activation import *  # noqa: F403
from .modules.batchnorm import *  # noqa: F403
from .modules.container import *  # noqa: F403
from .modules.conv import *  # noqa: F403
from .modules.dropout import *  # noqa: F403
from .modules.flatten import *  # noqa: F403
from .modules.instancenorm import *  # noqa: F403
from .modules.linear import *  # noqa: F403
from .modules.loss import *  # noqa: F403
from .modules.normalization import *  # noqa: F403
from .modules.padding import *  # noqa: F403
from .modules.pooling import *  # noqa: F403
from .modules.sparse import *  # noqa: F403
from .modules.transformer import *  # noqa: F403
from .modules.upsampling import *  # noqa: F403
from .parameter import Buffer, Parameter

__all__ = ["Buffer", "Module", "Parameter", "functional", "init", "modules", "utils"]
__all__ += modules.activation.__all__
__all__ += modules.batchnorm.__all__
__all__ += modules.container.__all__
__all__ += modules.conv.__all__
__all__ += modules.dropout.__all__
__all__ += modules.flatten.__all__
__all__ += modules.instancenorm.__all__
__all__ += modules.linear.__all__
__all__ += modules.loss.__all__
__all__ += modules.normalization.__all__
__all__ += modules.padding.__all__
__all__ += modules.pooling.__all__
__all__ += modules.sparse.__all__
__all__ += modules.transformer.__all__
__all__ += modules.upsampling.__all__
