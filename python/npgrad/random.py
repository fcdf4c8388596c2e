"""``npgrad.random``: seeding and saving the state of the default generator
(``npgrad.default_generator``), as ``torch.random``.

The state is npgrad's ``int64`` form, not torch's ``uint8`` one (see
``npgrad.Generator.get_state``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

from ._C import Tensor
from ._generator import Generator, default_generator

__all__ = ["fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]


def manual_seed(seed: Any) -> Generator:
    """Seeds the default generator with ``int(seed)`` and returns it.

    >>> import npgrad as torch
    >>> torch.manual_seed(0) is torch.default_generator
    True
    """
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    """Seeds the default generator with a non-deterministic number and returns it.

    >>> import npgrad as torch
    >>> torch.seed() == torch.initial_seed()
    True
    """
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with.

    >>> import npgrad as torch
    >>> _ = torch.manual_seed(11)
    >>> torch.initial_seed()
    11
    """
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state (npgrad's ``int64`` form).

    >>> import npgrad as torch
    >>> state = torch.get_rng_state()
    >>> a = torch.rand(2)
    >>> torch.set_rng_state(state)
    >>> a.tolist() == torch.rand(2).tolist()
    True
    """
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restores a state returned by ``get_rng_state``.

    >>> import npgrad as torch
    >>> torch.set_rng_state(torch.Generator().manual_seed(4).get_state())
    >>> torch.initial_seed()
    4
    """
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(
    devices: Iterable[Any] | None = None,
    enabled: bool = True,
    _caller: str = "fork_rng",
    _devices_kw: str = "devices",
    device_type: str | None = None,
) -> Iterator[None]:
    """Restores the default generator's state on exit (npgrad has only the
    CPU: asking for accelerator devices raises as torch without CUDA does).

    >>> import npgrad as torch
    >>> _ = torch.manual_seed(1)
    >>> with torch.random.fork_rng():
    ...     a = torch.rand(2)
    >>> a.tolist() == torch.rand(2).tolist()
    True
    """
    if not enabled:
        yield
        return
    if devices is not None and list(devices):
        raise AssertionError("Torch not compiled with CUDA enabled")
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
