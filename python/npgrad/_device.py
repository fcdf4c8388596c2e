"""``device``: npgrad's only device is the CPU; torch's parsing and errors for
the others; and ``is_autocast_enabled``/``get_autocast_dtype`` (npgrad has no
autocast)."""

from __future__ import annotations

from typing import Any

from ._C import Tensor, bfloat16, dtype, float16

# torch's device types, in the order of its "Expected one of ..." message.
_DEVICE_TYPES = (
    "cpu",
    "cuda",
    "ipu",
    "xpu",
    "mkldnn",
    "opengl",
    "opencl",
    "ideep",
    "hip",
    "ve",
    "fpga",
    "maia",
    "xla",
    "lazy",
    "vulkan",
    "mps",
    "meta",
    "hpu",
    "mtia",
    "privateuseone",
)

# torch's default autocast dtype of each device type that has one (the others
# raise "unsupported scalarType").
_AUTOCAST_DTYPES = {
    "cpu": bfloat16,
    "cuda": float16,
    "ipu": float16,
    "xpu": float16,
    "hip": float16,
    "maia": bfloat16,
    "xla": bfloat16,
    "mps": float16,
    "hpu": bfloat16,
    "mtia": float16,
    "privateuseone": float16,
}


def _parse_device_type(spec: Any) -> str:
    """The device type of a device string (torch's parsing and its errors)."""
    if isinstance(spec, device):
        return spec.type
    text = str(spec)
    if not text:
        raise RuntimeError("Device string must not be empty")
    name, sep, index = text.partition(":")
    if name not in _DEVICE_TYPES:
        if name.strip() != name or not name:
            raise RuntimeError(f"Invalid device string: '{text}'")
        raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: {name}")
    if sep and not index.isdigit():
        raise RuntimeError(f"Invalid device string: '{text}'")
    return name


def _check_to_device(spec: Any) -> None:
    """``Tensor.to(device)``: only the CPU; torch's errors for the others."""
    if isinstance(spec, Tensor):  # to(other): other is on the CPU too
        return
    if isinstance(spec, int) and not isinstance(spec, bool):
        raise RuntimeError("Cannot access accelerator device when none is available.")
    kind = _parse_device_type(spec if isinstance(spec, (str, device)) else getattr(spec, "type", spec))
    if kind == "cuda":
        raise AssertionError("Torch not compiled with CUDA enabled")
    if kind != "cpu":
        raise RuntimeError(f"npgrad tensors live on the CPU; got device '{spec}'")


class device:
    """The only device npgrad has: ``device(type='cpu')``."""

    def __init__(self, type: str = "cpu", index: int | None = None) -> None:  # noqa: A002
        if _parse_device_type(type) != "cpu":
            raise RuntimeError(f"npgrad tensors live on the CPU; got device '{type}'")
        self.type = "cpu"
        self.index = index

    def __repr__(self) -> str:
        return "device(type='cpu')"

    def __str__(self) -> str:
        return "cpu"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (device, str)) and str(other).split(":")[0] == "cpu"

    def __hash__(self) -> int:
        return hash("cpu")


_cpu = device("cpu")


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` (default ``'cuda'``): never
    in npgrad, which has no autocast; torch's errors for a bad device type.

    >>> import npgrad as torch
    >>> torch.is_autocast_enabled(), torch.is_autocast_enabled("cpu")
    (False, False)
    """
    if device_type is not None:
        if not isinstance(device_type, str):
            raise TypeError(
                "is_autocast_enabled(): argument 'device_type' (position 1) must be str, not "
                f"{type(device_type).__name__}"
            )
        _parse_device_type(device_type)
    return False


def get_autocast_dtype(device_type: str) -> dtype:
    """The dtype autocast would compute in on ``device_type``: torch's defaults
    (``bfloat16`` on the CPU, ``float16`` on CUDA), as npgrad never changes them
    (it has no autocast); torch's errors for a bad device type.

    >>> import npgrad as torch
    >>> torch.get_autocast_dtype("cpu"), torch.get_autocast_dtype("cuda")
    (torch.bfloat16, torch.float16)
    """
    if not isinstance(device_type, str):
        raise TypeError(
            f"get_autocast_dtype(): argument 'device_type' (position 1) must be str, not {type(device_type).__name__}"
        )
    name = _parse_device_type(device_type)
    if name not in _AUTOCAST_DTYPES:
        raise RuntimeError("unsupported scalarType")
    return _AUTOCAST_DTYPES[name]
