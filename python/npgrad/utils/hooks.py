"""``RemovableHandle``: what every ``register_*hook`` returns.

>>> import npgrad as torch
>>> x = torch.ones(2, requires_grad=True)
>>> with x.register_hook(lambda g: g * 2):
...     (x * 3).sum().backward()
>>> x.grad
tensor([6., 6.])
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Any

__all__ = ["RemovableHandle"]


class RemovableHandle:
    """Removes the hook stored under ``id`` in the dict(s) it was made for.

    The dicts are held weakly; ``remove()`` is idempotent and fine after the
    dict is gone. Usable as a context manager, and picklable.
    """

    id: int
    next_id: int = 0

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self.extra_dict_ref: tuple[Any, ...] = ()
        if isinstance(extra_dict, dict):
            self.extra_dict_ref = (weakref.ref(extra_dict),)
        elif isinstance(extra_dict, list):
            self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self) -> None:
        """Unregisters the hook; a no-op the second time, or once the
        dict it was stored in is gone.

        >>> import npgrad as torch
        >>> x = torch.ones(1, requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 0)
        >>> h.remove()
        >>> (x * 2).sum().backward()
        >>> x.grad
        tensor([2.])
        """
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __getstate__(self) -> tuple[Any, ...]:
        if not self.extra_dict_ref:
            return (self.hooks_dict_ref(), self.id)
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        if state[0] is None:
            self.hooks_dict_ref = weakref.ref(OrderedDict())  # dead: its dict is gone
        else:
            self.hooks_dict_ref = weakref.ref(state[0])
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        if len(state) < 3 or state[2] is None:
            self.extra_dict_ref = ()
        else:
            self.extra_dict_ref = tuple(weakref.ref(d) for d in state[2])

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()
