"""``npgrad.nn.utils``: gradient clipping and flattening parameters into one
vector, as torch's.

>>> import npgrad as torch
>>> w = torch.nn.Parameter(torch.ones(2))
>>> torch.nn.utils.parameters_to_vector([w, w])
tensor([1., 1., 1., 1.], grad_fn=<CatBackward0>)
"""

from __future__ import annotations

from .clip_grad import clip_grad_norm_, clip_grad_value_
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters"]
