"""``npgrad.cuda``: what device-agnostic code asks of ``torch.cuda``, answered
as torch built without CUDA answers it. npgrad has only the CPU: no device is
available; seeding and emptying the cache do nothing; what needs a device
raises torch's ``AssertionError``.
"""

from __future__ import annotations

__all__ = [
    "current_device",
    "device_count",
    "empty_cache",
    "is_available",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "synchronize",
]

_NOT_COMPILED = "Torch not compiled with CUDA enabled"


def is_available() -> bool:
    """Whether a CUDA device can be used: never in npgrad.

    >>> import npgrad as torch
    >>> torch.cuda.is_available()
    False
    """
    return False


def is_initialized() -> bool:
    """Whether CUDA's state is initialized: never in npgrad.

    >>> import npgrad as torch
    >>> torch.cuda.is_initialized()
    False
    """
    return False


def device_count() -> int:
    """The number of CUDA devices: 0.

    >>> import npgrad as torch
    >>> torch.cuda.device_count()
    0
    """
    return 0


def current_device() -> int:
    """Raises ``AssertionError``: there is no CUDA device.

    >>> import npgrad as torch
    >>> torch.cuda.current_device()
    Traceback (most recent call last):
    AssertionError: Torch not compiled with CUDA enabled
    """
    raise AssertionError(_NOT_COMPILED)


def synchronize(device: object = None) -> None:
    """Raises ``AssertionError``: there is no CUDA device to wait for.

    >>> import npgrad as torch
    >>> torch.cuda.synchronize()
    Traceback (most recent call last):
    AssertionError: Torch not compiled with CUDA enabled
    """
    raise AssertionError(_NOT_COMPILED)


def manual_seed(seed: int) -> None:
    """Seeds the current CUDA device's generator: nothing to do (silent, as
    torch without CUDA).

    >>> import npgrad as torch
    >>> torch.cuda.manual_seed(0)
    """
    int(seed)  # torch's error for a seed that is not a number


def manual_seed_all(seed: int) -> None:
    """Seeds every CUDA device's generator: nothing to do.

    >>> import npgrad as torch
    >>> torch.cuda.manual_seed_all(0)
    """
    int(seed)


def seed() -> None:
    """Seeds the current CUDA device non-deterministically: nothing to do.

    >>> import npgrad as torch
    >>> torch.cuda.seed()
    """


def seed_all() -> None:
    """Seeds every CUDA device non-deterministically: nothing to do.

    >>> import npgrad as torch
    >>> torch.cuda.seed_all()
    """


def empty_cache() -> None:
    """Releases the CUDA caching allocator's memory: nothing to do.

    >>> import npgrad as torch
    >>> torch.cuda.empty_cache()
    """
