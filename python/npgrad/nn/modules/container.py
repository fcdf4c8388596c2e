"""Containers (torch's ``torch/nn/modules/container.py``): ``Sequential``,
``ModuleList``, ``ModuleDict``, ``ParameterList`` and ``ParameterDict``.

>>> import npgrad as torch
>>> net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
>>> len(net), type(net[-1]).__name__
(2, 'ReLU')
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections import abc as container_abcs
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain, islice
from typing import Any, TypeVar

from ..._C import Tensor
from ..parameter import Parameter
from .module import Module, _typename

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]

_V = TypeVar("_V")


def _abs_index(idx: Any, size: int) -> int:
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range")
    return idx % size


def _renumber(module: Module) -> None:
    # After a deletion, the remaining children are "0", "1", ... again.
    module._modules = OrderedDict((str(i), m) for i, m in enumerate(module._modules.values()))


def _tensor_lines(items: Iterable[tuple[Any, Any]], type_name: Any) -> str:
    # The extra_repr of ParameterList / ParameterDict.
    lines = []
    for k, p in items:
        if isinstance(p, Tensor):
            size_str = "x".join(str(size) for size in p.size())
            kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
            lines.append(f"  ({k}): {kind} containing: [{type_name(p)} of size {size_str}]")
        else:
            lines.append(f"  ({k}): Object of type: {type(p).__name__}")
    return "\n".join(lines)


def _check_multiplier(container: Module, other: Any) -> None:
    if not isinstance(other, int):
        raise TypeError(f"unsupported operand type(s) for *: {type(container)} and {type(other)}")
    if other <= 0:
        raise ValueError(f"Non-positive multiplication factor {other} for {type(container)}")


class Sequential(Module):
    """Calls its modules in order, each on the previous one's output; built
    from modules, or from an ``OrderedDict`` of named modules.

    >>> import npgrad as torch
    >>> from collections import OrderedDict
    >>> net = torch.nn.Sequential(OrderedDict(fc=torch.nn.Linear(2, 1), act=torch.nn.Sigmoid()))
    >>> net
    Sequential(
      (fc): Linear(in_features=2, out_features=1, bias=True)
      (act): Sigmoid()
    )
    >>> net[1:]
    Sequential(
      (act): Sigmoid()
    )
    """

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _get_item_by_idx(self, iterator: Iterable[_V], idx: int) -> _V:
        return next(islice(iterator, _abs_index(idx, len(self)), None))

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._get_item_by_idx(self._modules.values(), idx)

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._get_item_by_idx(self._modules.keys(), idx), module)

    def __delitem__(self, idx: Any) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._get_item_by_idx(self._modules.keys(), idx))
        _renumber(self)

    def __len__(self) -> int:
        return len(self._modules)

    def __add__(self, other: Any) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(
                f"add operator supports only objects of Sequential class, but {str(type(other))} is given."
            )
        ret = Sequential()
        for layer in chain(self, other):
            ret.append(layer)
        return ret

    def __iadd__(self, other: Any) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(
                f"add operator supports only objects of Sequential class, but {str(type(other))} is given."
            )
        offset = len(self)
        for i, module in enumerate(other):
            self.add_module(str(i + offset), module)
        return self

    def __mul__(self, other: Any) -> Sequential:
        _check_multiplier(self, other)
        combined = Sequential()
        for offset, module in enumerate(chain.from_iterable([list(self)] * other)):
            combined.add_module(str(offset), module)
        return combined

    def __rmul__(self, other: Any) -> Sequential:
        return self.__mul__(other)

    def __imul__(self, other: Any) -> Sequential:
        _check_multiplier(self, other)
        n = len(self)
        for i in range(n, n * other):
            self.add_module(str(i), self._modules[str(i % n)])
        return self

    def pop(self, key: Any) -> Any:
        """Removes and returns the module at ``key``.

        >>> import npgrad as torch
        >>> net = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Tanh())
        >>> net.pop(0), len(net)
        (ReLU(), 1)
        """
        v = self[key]
        del self[key]
        return v

    def __dir__(self) -> list[str]:
        return [key for key in super().__dir__() if not key.isdigit()]

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())  # type: ignore[arg-type]

    def forward(self, input: Any) -> Any:
        """Each module applied to the previous one's output.

        >>> import npgrad as torch
        >>> torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Softsign())(torch.tensor([-1.0, 1.0]))
        tensor([0.0000, 0.5000])
        """
        for module in self:
            input = module(input)
        return input

    def append(self, module: Module) -> Sequential:
        """Adds ``module`` at the end.

        >>> import npgrad as torch
        >>> len(torch.nn.Sequential().append(torch.nn.ReLU()))
        1
        """
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Inserts ``module`` before position ``index``.

        >>> import npgrad as torch
        >>> torch.nn.Sequential(torch.nn.ReLU()).insert(0, torch.nn.Tanh())[0]
        Tanh()
        """
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        """Appends each module of ``sequential``.

        >>> import npgrad as torch
        >>> len(torch.nn.Sequential().extend([torch.nn.ReLU(), torch.nn.Tanh()]))
        2
        """
        for layer in sequential:
            self.append(layer)
        return self


class ModuleList(Module):
    """A list of submodules, registered (so their parameters are the
    container's), indexable like a list.

    >>> import npgrad as torch
    >>> layers = torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(3)])
    >>> layers
    ModuleList(
      (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)
    )
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self += modules

    def _get_abs_string_index(self, idx: Any) -> str:
        return str(_abs_index(idx, len(self)))

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])  # type: ignore[arg-type]
        return self._modules[self._get_abs_string_index(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._get_abs_string_index(idx), module)

    def __delitem__(self, idx: Any) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, self._get_abs_string_index(idx))
        _renumber(self)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())  # type: ignore[arg-type]

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        combined = ModuleList()
        for i, module in enumerate(chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __repr__(self) -> str:
        # Runs of equal reprs print once, as "(i-j): n x repr".
        reprs = [repr(item) for item in self]
        if not reprs:
            return self._get_name() + "()"
        blocks: list[list[Any]] = []  # [start, end, repr]
        for i, r in enumerate(reprs):
            if blocks and blocks[-1][2] == r:
                blocks[-1][1] = i
            else:
                blocks.append([i, i, r])
        lines = []
        for start, end, r in blocks:
            local = f"({start}): {r}" if start == end else f"({start}-{end}): {end - start + 1} x {r}"
            head, *rest = local.split("\n")
            lines.append("\n".join([head, *("  " + line for line in rest)]))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self) -> list[str]:
        return [key for key in super().__dir__() if not key.isdigit()]

    def insert(self, index: int, module: Module) -> None:
        """Inserts ``module`` before position ``index``.

        >>> import npgrad as torch
        >>> ml = torch.nn.ModuleList([torch.nn.ReLU()])
        >>> ml.insert(0, torch.nn.Tanh())
        >>> ml[0]
        Tanh()
        """
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module: Module) -> ModuleList:
        """Adds ``module`` at the end.

        >>> import npgrad as torch
        >>> len(torch.nn.ModuleList().append(torch.nn.ReLU()))
        1
        """
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key: Any) -> Any:
        """Removes and returns the module at ``key``.

        >>> import npgrad as torch
        >>> torch.nn.ModuleList([torch.nn.ReLU()]).pop(0)
        ReLU()
        """
        v = self[key]
        del self[key]
        return v

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Appends each module of an iterable.

        >>> import npgrad as torch
        >>> len(torch.nn.ModuleList().extend([torch.nn.ReLU(), torch.nn.Tanh()]))
        2
        """
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got " + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


class ModuleDict(Module):
    """An ordered dict of submodules, registered.

    >>> import npgrad as torch
    >>> d = torch.nn.ModuleDict({"act": torch.nn.ReLU()})
    >>> d["act"], "act" in d, list(d.keys())
    (ReLU(), True, ['act'])
    """

    def __init__(self, modules: Mapping[str, Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]  # type: ignore[return-value]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Removes every module.

        >>> import npgrad as torch
        >>> d = torch.nn.ModuleDict({"a": torch.nn.ReLU()})
        >>> d.clear()
        >>> len(d)
        0
        """
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Removes and returns the module under ``key``.

        >>> import npgrad as torch
        >>> torch.nn.ModuleDict({"a": torch.nn.ReLU()}).pop("a")
        ReLU()
        """
        v = self[key]
        del self[key]
        return v

    def keys(self) -> Any:
        """The names.

        >>> import npgrad as torch
        >>> list(torch.nn.ModuleDict({"a": torch.nn.ReLU()}).keys())
        ['a']
        """
        return self._modules.keys()

    def items(self) -> Any:
        """The ``(name, module)`` pairs.

        >>> import npgrad as torch
        >>> list(torch.nn.ModuleDict({"a": torch.nn.ReLU()}).items())
        [('a', ReLU())]
        """
        return self._modules.items()

    def values(self) -> Any:
        """The modules.

        >>> import npgrad as torch
        >>> list(torch.nn.ModuleDict({"a": torch.nn.ReLU()}).values())
        [ReLU()]
        """
        return self._modules.values()

    def update(self, modules: Any) -> None:
        """Adds the modules of a mapping, or of an iterable of ``(name,
        module)`` pairs.

        >>> import npgrad as torch
        >>> d = torch.nn.ModuleDict()
        >>> d.update([("a", torch.nn.ReLU())])
        >>> list(d)
        ['a']
        """
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError(
                "ModuleDict.update should be called with an iterable of key/value pairs, but got "
                + type(modules).__name__
            )
        if isinstance(modules, (OrderedDict, ModuleDict, container_abcs.Mapping)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, m in enumerate(modules):
            if not isinstance(m, container_abcs.Iterable):
                raise TypeError(
                    "ModuleDict update sequence element #" + str(j) + " should be Iterable; is" + type(m).__name__
                )
            if not len(m) == 2:  # type: ignore[arg-type]
                raise ValueError(
                    "ModuleDict update sequence element #" + str(j) + " has length " + str(len(m)) + "; 2 is required"  # type: ignore[arg-type]
                )
            self[m[0]] = m[1]  # type: ignore[index]


class ParameterList(Module):
    """A list of parameters, registered; a plain tensor added to it becomes
    a ``Parameter``.

    >>> import npgrad as torch
    >>> pl = torch.nn.ParameterList([torch.ones(2), torch.zeros(3, 2)])
    >>> pl
    ParameterList(
        (0): Parameter containing: [torch.float32 of size 2]
        (1): Parameter containing: [torch.float32 of size 3x2]
    )
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _get_abs_string_index(self, idx: Any) -> str:
        return str(_abs_index(idx, len(self)))

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, self._get_abs_string_index(idx))

    def __setitem__(self, idx: int, param: Any) -> None:
        key = self._get_abs_string_index(idx)
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, key, param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable[Any]) -> ParameterList:
        return self.extend(parameters)

    def __dir__(self) -> list[str]:
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value: Any) -> ParameterList:
        """Adds ``value`` (a tensor becomes a ``Parameter``) at the end.

        >>> import npgrad as torch
        >>> type(torch.nn.ParameterList().append(torch.ones(1))[0]).__name__
        'Parameter'
        """
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Appends each value of an iterable (not a tensor).

        >>> import npgrad as torch
        >>> len(torch.nn.ParameterList().extend([torch.ones(1), torch.ones(2)]))
        2
        """
        if not isinstance(values, container_abcs.Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got " + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        """One line per entry: its kind, dtype and size.

        >>> import npgrad as torch
        >>> torch.nn.ParameterList([torch.ones(2)]).extra_repr()
        '  (0): Parameter containing: [torch.float32 of size 2]'
        """
        return _tensor_lines(enumerate(self), lambda p: p.dtype)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters, registered; a plain tensor stored in
    it becomes a ``Parameter``.

    >>> import npgrad as torch
    >>> pd = torch.nn.ParameterDict({"w": torch.ones(2, 2)})
    >>> pd
    ParameterDict(  (w): Parameter containing: [torch.FloatTensor of size 2x2])
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key: Any) -> str:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is "
                f"not a string (type is '{type(key).__name__}'). Open an issue on "
                "github if you need non-string keys."
            )
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value: Any) -> None:
        self._keys[key] = None
        attr = self._key_to_attr(key)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._keys)

    def copy(self) -> ParameterDict:
        """A new ``ParameterDict`` with the same parameters.

        >>> import npgrad as torch
        >>> pd = torch.nn.ParameterDict({"w": torch.ones(1)})
        >>> pd.copy()["w"] is pd["w"]
        True
        """
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def setdefault(self, key: str, default: Any | None = None) -> Any:
        """``self[key]``, stored as ``default`` first when missing.

        >>> import npgrad as torch
        >>> torch.nn.ParameterDict().setdefault("w", 1.5)
        1.5
        """
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Removes every entry.

        >>> import npgrad as torch
        >>> pd = torch.nn.ParameterDict({"w": torch.ones(1)})
        >>> pd.clear()
        >>> len(pd)
        0
        """
        for k in self._keys.copy():
            del self[k]

    def pop(self, key: str) -> Any:
        """Removes and returns the entry under ``key``.

        >>> import npgrad as torch
        >>> torch.nn.ParameterDict({"w": torch.ones(1)}).pop("w").shape
        torch.Size([1])
        """
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple[str, Any]:
        """Removes and returns the last ``(key, value)`` pair.

        >>> import npgrad as torch
        >>> torch.nn.ParameterDict({"a": 1, "b": 2}).popitem()
        ('b', 2)
        """
        k, _ = self._keys.popitem()
        self._keys[k] = None
        val = self[k]
        del self[k]
        return k, val

    def get(self, key: str, default: Any | None = None) -> Any:
        """``self[key]`` if present, else ``default``.

        >>> import npgrad as torch
        >>> torch.nn.ParameterDict().get("w", 0)
        0
        """
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default: Any | None = None) -> ParameterDict:
        """A new ``ParameterDict`` with ``keys``, each set to ``default``.

        >>> import npgrad as torch
        >>> list(torch.nn.ParameterDict().fromkeys(["a", "b"], 0))
        ['a', 'b']
        """
        return ParameterDict((k, default) for k in keys)

    def keys(self) -> Any:
        """The keys.

        >>> import npgrad as torch
        >>> list(torch.nn.ParameterDict({"w": 1}).keys())
        ['w']
        """
        return self._keys.keys()

    def items(self) -> Iterable[tuple[str, Any]]:
        """The ``(key, value)`` pairs.

        >>> import npgrad as torch
        >>> list(torch.nn.ParameterDict({"w": 1}).items())
        [('w', 1)]
        """
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Iterable[Any]:
        """The values.

        >>> import npgrad as torch
        >>> list(torch.nn.ParameterDict({"w": 1}).values())
        [1]
        """
        return (self[k] for k in self._keys)

    def update(self, parameters: Any) -> None:
        """Adds the entries of a mapping (a plain dict's in sorted key order,
        as torch's) or of an iterable of ``(key, value)`` pairs.

        >>> import npgrad as torch
        >>> pd = torch.nn.ParameterDict()
        >>> pd.update({"b": 1, "a": 2})
        >>> list(pd)
        ['a', 'b']
        """
        if not isinstance(parameters, container_abcs.Iterable):
            raise TypeError(
                "ParametersDict.update should be called with an iterable of key/value pairs, but got "
                + type(parameters).__name__
            )
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, container_abcs.Mapping):
            for key, parameter in sorted(parameters.items()):
                self[key] = parameter
        else:
            for j, p in enumerate(parameters):
                if not isinstance(p, container_abcs.Iterable):
                    raise TypeError(
                        "ParameterDict update sequence element #"
                        + str(j)
                        + " should be Iterable; is"
                        + type(p).__name__
                    )
                if not len(p) == 2:  # type: ignore[arg-type]
                    raise ValueError(
                        "ParameterDict update sequence element #"
                        + str(j)
                        + " has length "
                        + str(len(p))  # type: ignore[arg-type]
                        + "; 2 is required"
                    )
                self[p[0]] = p[1]  # type: ignore[index]

    def extra_repr(self) -> str:
        """One line per entry: its kind, legacy type name and size.

        >>> import npgrad as torch
        >>> torch.nn.ParameterDict({"w": torch.ones(2)}).extra_repr()
        '  (w): Parameter containing: [torch.FloatTensor of size 2]'
        """
        return _tensor_lines(self.items(), _typename)

    def __call__(self, input: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: ParameterDict) -> ParameterDict:
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self
