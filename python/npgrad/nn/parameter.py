"""``npgrad.nn.Parameter`` and ``npgrad.nn.Buffer``, as torch's
``torch/nn/parameter.py``.

A ``Parameter`` is a Python subclass of ``Tensor`` made by
``Tensor._make_subclass`` (Note [Tensor subclass instances] in
csrc/bindings/tensor_subclass.cpp): a detached alias of the data whose Python
object is the ``Parameter`` itself, so the graph hands it back (saved inputs,
hooks). Ops on it return plain tensors. A ``Buffer`` is a plain tensor
flagged ``_is_buffer``, which ``isinstance(t, Buffer)`` recognises.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from .. import _creation
from .._C import Tensor
from .._tensor_str import PLAIN_REPR_TYPES

__all__ = ["Buffer", "Parameter"]


class _FlaggedTensorMeta(type(Tensor)):  # type: ignore[misc]
    # isinstance(t, C) also holds for any tensor carrying C's own flag
    # (Parameter: _is_param, Buffer: _is_buffer); not for C's subclasses.
    def __instancecheck__(cls, instance: Any) -> bool:
        flag = cls.__dict__.get("_instance_flag")
        if flag is not None and isinstance(instance, Tensor) and getattr(instance, flag, False):
            return True
        return super().__instancecheck__(instance)


class Parameter(Tensor, metaclass=_FlaggedTensorMeta):
    """A tensor that is a module parameter: assigned as an attribute of a
    ``Module``, it is registered and listed by ``Module.parameters()``.

    ``Parameter(data=None, requires_grad=True)``: a detached alias of
    ``data`` (an empty tensor when None) that requires grad by default, even
    under ``no_grad``.

    >>> import npgrad as torch
    >>> p = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    >>> p
    Parameter containing:
    tensor([1., 2.], requires_grad=True)
    >>> isinstance(p, torch.Tensor), type(p * 2).__name__
    (True, 'Tensor')
    """

    _instance_flag = "_is_param"

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = _creation.empty(0)
        if type(data) is Tensor or type(data) is Parameter:
            return Tensor._make_subclass(cls, data, requires_grad)  # type: ignore[no-any-return]
        # Another Tensor subclass stays of its type, flagged as a parameter.
        t = data.detach().requires_grad_(requires_grad)
        if type(t) is not type(data):
            raise RuntimeError(
                f"Creating a Parameter from an instance of type {type(data).__name__} "
                "requires that detach() returns an instance of the same type, but return "
                f"type {type(t).__name__} was found instead. To use the type as a "
                "Parameter, please correct the detach() semantics defined by "
                "its __torch_dispatch__() implementation."
            )
        t._is_param = True  # type: ignore[attr-defined]
        return t  # type: ignore[return-value]

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        """``copy.deepcopy(p)``: a parameter over a copy of the data (without
        ``.grad``), as torch's.

        >>> import copy, npgrad as torch
        >>> p = torch.nn.Parameter(torch.ones(2))
        >>> q = copy.deepcopy(p)
        >>> type(q).__name__, q.data_ptr() != p.data_ptr()
        ('Parameter', True)
        """
        if id(self) in memo:
            return memo[id(self)]  # type: ignore[no-any-return]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __copy__(self) -> Parameter:
        """``copy.copy(p)``: a parameter over the same data, with the same
        attributes (torch's goes through pickling's reduction).

        >>> import copy, npgrad as torch
        >>> p = torch.nn.Parameter(torch.ones(2))
        >>> q = copy.copy(p)
        >>> type(q).__name__, q is p, q.data_ptr() == p.data_ptr()
        ('Parameter', False, True)
        """
        return _rebuild_parameter_with_state(self.data, self.requires_grad, OrderedDict(), dict(self.__dict__))

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto: Any) -> tuple[Any, ...]:
        """Pickles the data, ``requires_grad`` and the attributes set on the
        parameter; not its hooks (as torch's).

        >>> import pickle, npgrad as torch
        >>> pickle.loads(pickle.dumps(torch.nn.Parameter(torch.ones(1))))
        Parameter containing:
        tensor([1.], requires_grad=True)
        """
        state = dict(self.__dict__)
        hooks: OrderedDict[int, Any] = OrderedDict()
        if not state:
            return (_rebuild_parameter, (self.data, self.requires_grad, hooks))
        return (_rebuild_parameter_with_state, (self.data, self.requires_grad, hooks, state))


PLAIN_REPR_TYPES.add(Parameter)


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: OrderedDict[int, Any]) -> Parameter:
    param = Parameter(data, requires_grad)
    # Hooks are not pickled (an empty dict), as in torch.
    param._backward_hooks = backward_hooks or None
    return param


def _rebuild_parameter_with_state(
    data: Tensor, requires_grad: bool, backward_hooks: OrderedDict[int, Any], state: dict[str, Any]
) -> Parameter:
    param = _rebuild_parameter(data, requires_grad, backward_hooks)
    param.__dict__.update(state)
    return param


class Buffer(Tensor, metaclass=_FlaggedTensorMeta):
    """A tensor that is module state but not a parameter: assigned as an
    attribute of a ``Module``, it is registered as a buffer (in the
    ``state_dict`` unless ``persistent=False``).

    ``Buffer(data=None, *, persistent=True)`` returns a detached plain tensor
    flagged as a buffer.

    >>> import npgrad as torch
    >>> b = torch.nn.Buffer(torch.zeros(2))
    >>> type(b).__name__, isinstance(b, torch.nn.Buffer), b.persistent
    ('Tensor', True, True)
    """

    _instance_flag = "_is_buffer"

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Tensor:  # type: ignore[misc]
        if data is None:
            data = _creation.empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent  # type: ignore[attr-defined]
        t._is_buffer = True  # type: ignore[attr-defined]
        return t
