"""``Generator``: the state of npgrad's random numbers, and ``default_generator``.

As torch's CPU generator, a ``Generator`` is seeded with a 64-bit seed
(``67280421310721`` until ``manual_seed`` or ``seed`` is called, so a fresh
process draws the same numbers every time). The numbers come from NumPy's
``PCG64`` bit generator (torch uses a Mersenne Twister): the same seed gives the
same numbers within npgrad, not the numbers torch gives.

The state (``get_state``) differs from torch's in form: torch returns a
``uint8`` tensor of 5056 bytes; npgrad has no ``uint8`` dtype and returns an
``int64`` tensor of 7 elements (the seed, PCG64's 128-bit state and increment
as two 64-bit halves each, and its buffered 32-bit value), each a 64-bit
pattern read as signed. It round-trips through ``set_state``; anything else
raises as torch does (``TypeError`` for a non-tensor or another dtype,
``RuntimeError`` for another size).
"""

from __future__ import annotations

import secrets
from typing import Any

import numpy as np

from ._C import Tensor, int64
from ._device import _cpu, _parse_device_type, device

# torch's default_rng_seed_val: the seed of a generator nobody seeded.
_DEFAULT_SEED = 67280421310721
_MASK64 = (1 << 64) - 1
_STATE_SIZE = 7


def _halves(value: int) -> list[int]:
    return [value >> 64, value & _MASK64]


class Generator:
    """A random number generator: pass it as ``generator=`` to the random
    functions to draw from it instead of ``npgrad.default_generator``.

    >>> import npgrad as torch
    >>> g = torch.Generator().manual_seed(42)
    >>> a = torch.rand(3, generator=g)
    >>> _ = g.manual_seed(42)
    >>> a.tolist() == torch.rand(3, generator=g).tolist()
    True
    """

    def __init__(self, device: Any = "cpu") -> None:  # noqa: A002
        kind = _parse_device_type(device)
        if kind != "cpu":
            raise RuntimeError(f"npgrad has no {kind} generator: its only device is the CPU")
        self._seed = _DEFAULT_SEED
        self._np = np.random.Generator(np.random.PCG64(_DEFAULT_SEED))

    @property
    def device(self) -> device:
        """The generator's device: always the CPU.

        >>> import npgrad as torch
        >>> torch.Generator().device
        device(type='cpu')
        """
        return _cpu

    def manual_seed(self, seed: int) -> Generator:
        """Seeds the generator with ``seed`` (an int; a negative one is taken
        modulo 2**64, as torch does) and returns it.

        >>> import npgrad as torch
        >>> g = torch.Generator()
        >>> g.manual_seed(7) is g, g.initial_seed()
        (True, 7)
        """
        if not isinstance(seed, int):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        if not -(1 << 63) <= seed <= _MASK64:
            raise ValueError("Overflow when unpacking long long")
        self._seed = seed & _MASK64
        self._np = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self) -> int:
        """Seeds the generator with a non-deterministic 64-bit number and
        returns that number.

        >>> import npgrad as torch
        >>> g = torch.Generator()
        >>> g.seed() == g.initial_seed()
        True
        """
        value = secrets.randbits(64)
        self.manual_seed(value)
        return value

    def initial_seed(self) -> int:
        """The seed the generator was last seeded with.

        >>> import npgrad as torch
        >>> torch.Generator().manual_seed(3).initial_seed()
        3
        """
        return self._seed

    def get_state(self) -> Tensor:
        """The generator's state, for ``set_state``: an ``int64`` tensor of 7
        elements (torch's is a ``uint8`` tensor; see the module's docstring).

        >>> import npgrad as torch
        >>> g = torch.Generator()
        >>> state = g.get_state()
        >>> a = torch.rand(2, generator=g)
        >>> a.tolist() == torch.rand(2, generator=g.set_state(state)).tolist()
        True
        """
        st = self._np.bit_generator.state
        words = [self._seed, *_halves(st["state"]["state"]), *_halves(st["state"]["inc"])]
        words += [st["has_uint32"], st["uinteger"]]
        return Tensor._from_numpy(np.array(words, dtype=np.uint64).view(np.int64))

    def set_state(self, new_state: Tensor) -> Generator:
        """Restores a state returned by ``get_state``; returns the generator.

        >>> import npgrad as torch
        >>> g = torch.Generator()
        >>> g.set_state(torch.Generator().manual_seed(5).get_state()).initial_seed()
        5
        """
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.LongTensor (npgrad's RNG state), but got {type(new_state).__name__}")
        if new_state.dtype != int64:
            raise TypeError("RNG state must be a torch.LongTensor (npgrad's RNG state is int64)")
        if new_state.numel() != _STATE_SIZE:
            raise RuntimeError(
                f"Expected an npgrad RNG state of size {_STATE_SIZE} but found the input RNG state size to be "
                f"{new_state.numel()}"
            )
        w = [int(v) for v in np.ascontiguousarray(new_state._array).reshape(-1).view(np.uint64)]
        bit_generator = np.random.PCG64()
        bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": (w[1] << 64) | w[2], "inc": (w[3] << 64) | w[4]},
            "has_uint32": w[5] & 1,
            "uinteger": w[6] & 0xFFFFFFFF,
        }
        self._seed = w[0]
        self._np = np.random.Generator(bit_generator)
        return self


Generator.__module__ = "npgrad"

default_generator = Generator()


def _numpy_generator(fname: str, generator: Any) -> np.random.Generator:
    """The NumPy generator a random function draws from."""
    if generator is None:
        return default_generator._np
    if not isinstance(generator, Generator):
        raise TypeError(f"{fname}(): argument 'generator' must be torch.Generator, not {type(generator).__name__}")
    return generator._np
