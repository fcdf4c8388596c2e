"""``npgrad.autograd.graph``: the backward graph's public types.

``Node`` is the abstract base every backward node is an instance of
(``isinstance(y.grad_fn, Node)``); ``GradientEdge`` names one input slot of a
node.
"""

from __future__ import annotations

import abc
from typing import Any, NamedTuple

from .. import _C

__all__ = ["Node", "GradientEdge", "get_gradient_edge"]


class Node(abc.ABC):
    """Abstract base of backward nodes; the native node types are its subclasses.

    >>> import npgrad as torch
    >>> y = torch.ones(2, requires_grad=True).exp()
    >>> isinstance(y.grad_fn, torch.autograd.graph.Node)
    True
    """

    @abc.abstractmethod
    def name(self) -> str: ...

    @property
    @abc.abstractmethod
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]: ...

    @property
    @abc.abstractmethod
    def metadata(self) -> dict[Any, Any]: ...

    @classmethod
    def __subclasshook__(cls, C: type) -> bool:
        if cls is Node and issubclass(C, _C._functions._NodeBase):
            return True
        return NotImplemented  # type: ignore[return-value]


class GradientEdge(NamedTuple):
    """An input slot of a node: ``(node, output_nr)``."""

    node: Node
    output_nr: int


def get_gradient_edge(tensor: _C.Tensor) -> GradientEdge:
    """The edge through which gradients flow to ``tensor``."""
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require gradients")
    grad_fn = tensor.grad_fn
    if grad_fn is None:
        import npgrad

        with npgrad.enable_grad():
            grad_fn = tensor.view_as(tensor).grad_fn.next_functions[0][0]
    return GradientEdge(grad_fn, tensor.output_nr)
