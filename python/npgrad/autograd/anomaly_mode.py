"""Anomaly detection: ``detect_anomaly`` and ``set_detect_anomaly``.

While enabled, every backward node records the stack of the forward call that
created it (``node.metadata["traceback_"]``); an error during backward is
preceded by a warning showing that stack; with ``check_nan``, a node returning
NaN raises. The flags are process-wide, as in torch.

>>> import npgrad as torch
>>> with torch.autograd.set_detect_anomaly(True):
...     x = torch.tensor([1.0], requires_grad=True)
...     y = x.exp()
>>> "traceback_" in y.grad_fn.metadata
True
"""

from __future__ import annotations

import warnings
from typing import Any

from .. import _C

__all__ = ["detect_anomaly", "set_detect_anomaly"]


class detect_anomaly:
    """Context manager that enables anomaly detection in its scope."""

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = _C.is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = _C.is_anomaly_check_nan_enabled()
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime "
            "and should only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self) -> None:
        _C.set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args: Any) -> None:
        _C.set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Sets anomaly detection on or off now; as a context manager, restores
    the previous setting on exit."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = _C.is_anomaly_enabled()
        self.prev_check_nan = _C.is_anomaly_check_nan_enabled()
        _C.set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args: Any) -> None:
        _C.set_anomaly_enabled(self.prev, self.prev_check_nan)
