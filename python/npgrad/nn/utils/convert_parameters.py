"""Parameters to one vector and back (torch's
``torch/nn/utils/convert_parameters.py``).

>>> import npgrad as torch
>>> fc = torch.nn.Linear(2, 1)
>>> torch.nn.utils.parameters_to_vector(fc.parameters()).shape
torch.Size([3])
"""

from __future__ import annotations

from collections.abc import Iterable

from ..._C import Tensor, cat
from ..modules.module import _typename

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters flattened and concatenated into one tensor (a
    differentiable ``cat`` of views).

    >>> import npgrad as torch
    >>> torch.nn.utils.parameters_to_vector([torch.ones(2, 1), torch.zeros(1)])
    tensor([1., 1., 0.])
    """

    return cat([param.view(-1) for param in parameters])  # type: ignore[no-any-return]


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Sets the ``.data`` of each parameter to its slice of ``vec`` (in the
    order ``parameters_to_vector`` uses).

    >>> import npgrad as torch
    >>> w = torch.nn.Parameter(torch.zeros(2))
    >>> torch.nn.utils.vector_to_parameters(torch.tensor([1.0, 2.0]), [w])
    >>> w
    Parameter containing:
    tensor([1., 2.], requires_grad=True)
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    pointer = 0
    for param in parameters:
        num_param = param.numel()
        param.data = vec[pointer : pointer + num_param].view_as(param).data  # type: ignore[index]
        pointer += num_param
