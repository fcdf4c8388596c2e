"""torch-style ``repr`` of tensors: ``tensor([1., 2.], requires_grad=True)``.

Follows the rules of torch's printer (4 decimals, integer mode ``1.``,
scientific notation for wide ranges, summarisation past 1000 elements) so that
printed output reads the same in both libraries.
"""

from __future__ import annotations

import math

import numpy as np

from ._creation import _is_floating

_LINEWIDTH = 80
_THRESHOLD = 1000
_EDGEITEMS = 3
_PRECISION = 4


class _Formatter:
    def __init__(self, values: np.ndarray) -> None:
        self.floating = _is_floating(values.dtype)
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if values.dtype.kind == "b":
            self.max_width = max((len(str(bool(v))) for v in values.flat), default=1)
            return
        if not self.floating:
            self.max_width = max((len(str(int(v))) for v in values.flat), default=1)
            return
        # As torch's _Formatter: the mode and the width come from the nonzero
        # finite values only; a zero, nan or inf wider than them is not padded
        # for (tensor([1., -inf])), and with none of them every value prints
        # as it is (tensor([0., -inf])).
        finite = values[np.isfinite(values)].astype(np.float64)
        nonzero = np.abs(finite[finite != 0])
        if nonzero.size == 0:
            return
        self.int_mode = bool(np.all(np.ceil(nonzero) == nonzero))
        hi, lo = nonzero.max(), nonzero.min()
        if hi / lo > 1000.0 or hi > 1e8 or (not self.int_mode and lo < 1e-4):
            self.sci_mode = True
        self.max_width = max(len(self._format_plain(v)) for v in finite[finite != 0])

    @staticmethod
    def _special(v: float) -> str:
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")

    def _format_plain(self, v: object) -> str:
        if not self.floating:
            return str(bool(v)) if isinstance(v, (bool, np.bool_)) else str(int(v))  # type: ignore[call-overload]
        f = float(v)  # type: ignore[arg-type]
        if not math.isfinite(f):
            return self._special(f)
        if self.sci_mode:
            return f"{f:.{_PRECISION}e}"
        if self.int_mode:
            return f"{f:.0f}."
        return f"{f:.{_PRECISION}f}"

    def format(self, v: object) -> str:
        return self._format_plain(v).rjust(self.max_width)


def _vector_str(values: np.ndarray, indent: int, fmt: _Formatter, summarize: bool) -> str:
    element_length = fmt.max_width + 2
    per_line = max(1, int(math.floor((_LINEWIDTH - indent) / element_length)))
    if summarize and values.shape[0] > 2 * _EDGEITEMS:
        data = [fmt.format(v) for v in values[:_EDGEITEMS]] + [" ..."] + [fmt.format(v) for v in values[-_EDGEITEMS:]]
    else:
        data = [fmt.format(v) for v in values]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str(values: np.ndarray, indent: int, fmt: _Formatter, summarize: bool) -> str:
    dim = values.ndim
    if dim == 0:
        return fmt.format(values.item())
    if dim == 1:
        return _vector_str(values, indent, fmt, summarize)
    if summarize and values.shape[0] > 2 * _EDGEITEMS:
        slices = [_tensor_str(values[i], indent + 1, fmt, summarize) for i in range(_EDGEITEMS)]
        slices.append("...")
        slices += [
            _tensor_str(values[i], indent + 1, fmt, summarize)
            for i in range(values.shape[0] - _EDGEITEMS, values.shape[0])
        ]
    else:
        slices = [_tensor_str(values[i], indent + 1, fmt, summarize) for i in range(values.shape[0])]
    sep = "," + "\n" * (dim - 1) + " " * (indent + 1)
    return "[" + sep.join(slices) + "]"


def _summarized_values(values: np.ndarray) -> np.ndarray:
    """The elements that are printed (edges only) for the formatter's width."""
    if values.ndim == 0:
        return values.reshape(1)
    if values.shape[0] > 2 * _EDGEITEMS:
        values = np.concatenate([values[:_EDGEITEMS], values[-_EDGEITEMS:]])
    return np.concatenate([_summarized_values(v).reshape(-1) for v in values]) if values.ndim > 1 else values


# The types that print as ``tensor(...)``; an instance of another Tensor
# subclass prints its class name instead, as torch's.
PLAIN_REPR_TYPES: set[type] = set()


def tensor_repr(t: object, prefix: str | None = None) -> str:
    if prefix is None:
        prefix = "tensor(" if type(t) in PLAIN_REPR_TYPES else type(t).__name__ + "("
    values = t._array  # type: ignore[attr-defined]
    summarize = values.size > _THRESHOLD
    suffixes = []
    indent = len(prefix)
    if values.size == 0:
        body = "[]"
        if values.ndim != 1:
            suffixes.append("size=" + str(tuple(values.shape)))
    else:
        fmt = _Formatter(_summarized_values(values) if summarize else values)
        body = _tensor_str(values, indent, fmt, summarize)
    dtype = t.dtype  # type: ignore[attr-defined]
    if repr(dtype) not in ("torch.float32", "torch.int64", "torch.bool"):  # the defaults
        suffixes.append(f"dtype={dtype!r}")
    grad_fn = t.grad_fn  # type: ignore[attr-defined]
    if grad_fn is not None:
        name = type(grad_fn).__name__
        suffixes.append(f"grad_fn=<{name}>")
    elif t.requires_grad:  # type: ignore[attr-defined]
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """``text`` and its suffixes, as torch joins them: a suffix that would take
    the last line past the line width starts a new line at ``indent``."""
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1  # torch's count (rfind may be -1)
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > _LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    return "".join(parts) + ")"
