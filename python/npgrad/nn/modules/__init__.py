"""``npgrad.nn.modules``: ``Module`` and the layers built on it, as torch's
``torch.nn.modules``.

>>> import npgrad as torch
>>> torch.nn.modules.Linear is torch.nn.Linear
True
"""

from __future__ import annotations

from . import (
    activation,
    batchnorm,
    container,
    conv,
    dropout,
    flatten,
    instancenorm,
    linear,
    loss,
    normalization,
    padding,
    pooling,
    sparse,
    transformer,
    upsampling,
)
from .activation import *  # noqa: F403
from .batchnorm import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .dropout import *  # noqa: F403
from .flatten import *  # noqa: F403
from .instancenorm import *  # noqa: F403
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .module import Module
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F403
from .pooling import *  # noqa: F403
from .sparse import *  # noqa: F403
from .transformer import *  # noqa: F403
from .upsampling import *  # noqa: F403

# `__all__ +=` (not a starred list) is the form type checkers follow.
__all__ = ["Module"]
__all__ += activation.__all__
__all__ += container.__all__
__all__ += dropout.__all__
__all__ += flatten.__all__
__all__ += linear.__all__
__all__ += conv.__all__
__all__ += pooling.__all__
__all__ += batchnorm.__all__
__all__ += instancenorm.__all__
__all__ += sparse.__all__
__all__ += loss.__all__
__all__ += padding.__all__
__all__ += normalization.__all__
__all__ += transformer.__all__
__all__ += upsampling.__all__
