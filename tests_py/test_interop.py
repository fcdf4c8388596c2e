"""NumPy and DLPack interop: ``np.asarray(t)`` without a copy, ``__dlpack__`` /
``__dlpack_device__`` / ``from_dlpack`` sharing memory with torch both ways.

Tests written against ``ng`` state torch's behaviour (they also pass with
NPGRAD_TESTS_AGAINST_TORCH=1); the few npgrad-only ones say why."""

from __future__ import annotations

import gc
import re
import warnings

import numpy as np
import pytest

import oracle
from oracle import assert_same_error, dtype_name

npgrad_only = pytest.mark.skipif(oracle.AGAINST_TORCH, reason="npgrad's documented deviation from torch")

# torch 2.13's __array__ lacks NumPy 2's `copy` keyword (pytorch#136264), so NumPy
# warns whenever it asks for a copy; npgrad takes the keyword (tested below).
torch_copy_kw_warning = pytest.mark.filterwarnings(
    "ignore:__array__ implementation doesn't accept a copy keyword:DeprecationWarning"
)

GRAD_EXPORT_MSG = "Can't export tensors that require gradient, use tensor.detach()"
NUMPY_GRAD_MSG = "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."


def _capsule_name(capsule: object) -> str:
    match = re.match(r'<capsule object "([^"]+)"', repr(capsule))
    assert match, repr(capsule)
    return match.group(1)


# ----------------------------------------------------------------------------------
# np.asarray / __array__


def test_asarray_shares_memory(ng):
    t = ng.arange(6.0).view(2, 3)
    arr = np.asarray(t)
    assert arr.dtype == np.float32 and arr.shape == (2, 3)
    assert np.shares_memory(arr, t.numpy())
    arr[1, 2] = 50.0  # a write through NumPy is seen by the tensor ...
    assert t.tolist()[1][2] == 50.0
    t.mul_(2)  # ... and an in-place op is seen by the array
    assert arr[1, 2] == 100.0


def test_asarray_of_views_and_0d_shares_memory(ng):
    base = ng.arange(12.0).view(3, 4)
    tr = base.t()
    arr = np.asarray(tr)
    assert arr.shape == (4, 3) and arr.strides == (4, 16)  # the transposed strides, no copy
    assert np.shares_memory(arr, base.numpy())
    arr[3, 0] = -1.0
    assert base.tolist()[0][3] == -1.0

    z = ng.tensor(2.5)
    a0 = np.asarray(z)
    assert a0.shape == () and a0 == 2.5 and np.shares_memory(a0, z.numpy())


def test_asarray_of_tensor_requiring_grad_is_torchs_error(ng):
    x = ng.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=re.escape(NUMPY_GRAD_MSG)):
        np.asarray(x)
    with pytest.raises(RuntimeError, match=re.escape(NUMPY_GRAD_MSG)):
        np.asarray(x, dtype=np.float64)
    assert_same_error(lambda lib: np.asarray(lib.ones(2, requires_grad=True)))
    assert np.asarray(x.detach()).tolist() == [1.0, 1.0]  # the advertised way out


def test_asarray_with_dtype(ng):
    t = ng.tensor([1.5, 2.5])
    same = np.asarray(t, dtype=np.float32)
    assert np.shares_memory(same, t.numpy())  # no cast needed: still a view
    cast = np.asarray(t, dtype=np.float64)
    assert cast.dtype == np.float64 and cast.tolist() == [1.5, 2.5]
    assert not np.shares_memory(cast, t.numpy())
    ints = np.asarray(t, dtype=np.int64)
    assert ints.tolist() == [1, 2]


@torch_copy_kw_warning
def test_np_array_copies(ng):
    t = ng.tensor([1.0, 2.0])
    arr = np.array(t)
    assert not np.shares_memory(arr, t.numpy())
    arr[0] = 9.0
    assert t.tolist() == [1.0, 2.0]


@npgrad_only
def test_array_protocol_honours_numpy2_copy_keyword():
    import npgrad

    t = npgrad.tensor([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch warns here (pytorch#136264); npgrad must not
        assert np.shares_memory(np.asarray(t, copy=False), t.numpy())
        assert not np.shares_memory(np.array(t), t.numpy())
        assert not np.shares_memory(np.asarray(t, copy=True), t.numpy())
        with pytest.raises(ValueError, match="Unable to avoid copy"):
            np.asarray(t, dtype=np.float64, copy=False)
    # called directly, as NumPy does
    assert t.__array__().base is not None
    assert t.__array__(np.float64, copy=None).dtype == np.float64
    assert not np.shares_memory(t.__array__(copy=True), t.numpy())


# ----------------------------------------------------------------------------------
# DLPack: npgrad -> torch / NumPy


def test_dlpack_device_is_cpu(ng):
    t = ng.ones(2)
    assert t.__dlpack_device__() == (1, 0)
    device_type, index = t.__dlpack_device__()
    assert int(device_type) == 1 and index == 0


def test_torch_from_dlpack_of_ng_tensor_shares_memory(ng, torch_ref):
    t = ng.arange(6.0).view(2, 3)
    theirs = torch_ref.from_dlpack(t)
    assert theirs.shape == (2, 3) and theirs.dtype == torch_ref.float32
    theirs[0, 1] = 42.0  # a write through torch is seen by ng ...
    assert t.tolist()[0][1] == 42.0
    t.add_(1)  # ... and ng's in-place op is seen by torch
    assert theirs.tolist() == [[1.0, 43.0, 3.0], [4.0, 5.0, 6.0]]


def test_numpy_from_dlpack_of_ng_tensor_shares_memory(ng):
    t = ng.tensor([1, 2, 3])
    arr = np.from_dlpack(t)
    assert arr.dtype == np.int64 and np.shares_memory(arr, t.numpy())
    arr[2] = 30
    assert t.tolist() == [1, 2, 30]


@pytest.mark.parametrize("view", ["transpose", "step_slice", "expand", "zero_dim", "offset"])
def test_export_of_strided_views(ng, torch_ref, view):
    base = ng.arange(12.0).view(3, 4)
    t = {
        "transpose": lambda: base.t(),
        "step_slice": lambda: base[:, ::2],
        "expand": lambda: base[1].expand(2, 4),
        "zero_dim": lambda: base[2, 3],
        "offset": lambda: base[1:, 2:],
    }[view]()
    theirs = torch_ref.from_dlpack(t)
    assert tuple(theirs.shape) == tuple(t.shape)
    assert tuple(theirs.stride()) == tuple(t.stride())  # strides travel, no copy
    assert theirs.tolist() == t.tolist()
    before = t.tolist()
    base.add_(100)  # a write to the base is seen through torch's alias of the view
    assert theirs.tolist() == t.tolist() != before
    if view != "expand":  # (an expanded tensor cannot be written, in either library)
        theirs.mul_(-1)
        assert t.tolist() == (np.array(before) + 100).__neg__().tolist()


def test_export_of_tensor_requiring_grad_is_buffer_error(ng, torch_ref):
    x = ng.ones(2, requires_grad=True)
    with pytest.raises(BufferError, match=re.escape(GRAD_EXPORT_MSG)):
        x.__dlpack__()
    with pytest.raises(BufferError, match=re.escape(GRAD_EXPORT_MSG)):
        torch_ref.from_dlpack(x)
    with pytest.raises(BufferError, match=re.escape(GRAD_EXPORT_MSG)):
        np.from_dlpack(x * 2)  # a non-leaf that requires grad, too
    assert torch_ref.from_dlpack(x.detach()).tolist() == [1.0, 1.0]
    assert_same_error(lambda lib: lib.ones(2, requires_grad=True).__dlpack__())


def test_dlpack_capsule_versions(ng):
    t = ng.arange(3.0)
    assert _capsule_name(t.__dlpack__()) == "dltensor"
    assert _capsule_name(t.__dlpack__(max_version=(0, 8))) == "dltensor"
    assert _capsule_name(t.__dlpack__(max_version=(1, 0))) == "dltensor_versioned"
    assert _capsule_name(t.__dlpack__(dl_device=(1, 0))) == "dltensor"


def test_dlpack_stream_checks(ng):
    t = ng.arange(3.0)
    assert _capsule_name(t.__dlpack__(stream=None)) == "dltensor"
    assert _capsule_name(t.__dlpack__(stream=-1)) == "dltensor"
    with pytest.raises(TypeError, match=re.escape("stream must be ``int`` or ``none``")):
        t.__dlpack__(stream="default")
    with pytest.raises(AssertionError, match=re.escape("stream should be None on cpu.")):
        t.__dlpack__(stream=1)
    with pytest.raises(TypeError):  # keyword-only, as torch's
        t.__dlpack__(None)


def test_dlpack_export_copy(ng, torch_ref):
    t = ng.arange(3.0)
    copied = torch_ref.from_dlpack(t, copy=True)
    copied[0] = 7.0
    assert t.tolist() == [0.0, 1.0, 2.0]
    shared = torch_ref.from_dlpack(t, copy=False)
    shared[0] = 7.0
    assert t.tolist() == [7.0, 1.0, 2.0]


def test_exported_memory_outlives_the_tensor(ng, torch_ref):
    t = ng.arange(4.0) * 3
    theirs = torch_ref.from_dlpack(t)
    del t
    gc.collect()
    assert theirs.tolist() == [0.0, 3.0, 6.0, 9.0]


# ----------------------------------------------------------------------------------
# DLPack: torch / NumPy -> npgrad


def test_from_dlpack_of_torch_tensor_shares_memory(ng, torch_ref):
    src = torch_ref.arange(6.0).view(2, 3)
    t = ng.from_dlpack(src)
    assert isinstance(t, ng.Tensor)
    assert tuple(t.shape) == (2, 3) and dtype_name(t.dtype) == "float32"
    assert t.is_leaf and not t.requires_grad and t.grad_fn is None
    src[1, 1] = -4.0
    assert t.tolist()[1][1] == -4.0
    t.sub_(1)
    assert src.tolist() == [[-1.0, 0.0, 1.0], [2.0, -5.0, 4.0]]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_from_dlpack_keeps_dtype(ng, torch_ref, dtype):
    src = torch_ref.ones(3, dtype=getattr(torch_ref, dtype))
    t = ng.from_dlpack(src)
    assert dtype_name(t.dtype) == dtype
    assert np.shares_memory(np.asarray(t), src.numpy())


def test_from_dlpack_of_strided_and_0d_torch_tensors(ng, torch_ref):
    base = torch_ref.arange(12.0).view(3, 4)
    for src in (base.t(), base[:, 1::2], base[1:, 2:], base[1].expand(3, 4)):
        t = ng.from_dlpack(src)
        assert tuple(t.shape) == tuple(src.shape)
        assert tuple(t.stride()) == tuple(src.stride())
        assert t.tolist() == src.tolist()
    view = ng.from_dlpack(base.t())
    view[2, 0] = 99.0  # __setitem__ through the imported view reaches torch's memory
    assert base[0, 2].item() == 99.0

    z = ng.from_dlpack(torch_ref.tensor(1.25))
    assert tuple(z.shape) == () and z.item() == 1.25


def test_from_dlpack_of_torch_tensor_requiring_grad_is_buffer_error(ng, torch_ref):
    src = torch_ref.ones(2, requires_grad=True)
    with pytest.raises(BufferError, match=re.escape(GRAD_EXPORT_MSG)):
        ng.from_dlpack(src)


def test_from_dlpack_of_numpy_array(ng):
    arr = np.arange(4.0).reshape(2, 2)
    t = ng.from_dlpack(arr)
    assert dtype_name(t.dtype) == "float64"
    arr[0, 0] = 5.0
    assert t.tolist()[0][0] == 5.0


def test_from_dlpack_copy_and_device(ng, torch_ref):
    src = torch_ref.arange(3.0)
    copied = ng.from_dlpack(src, copy=True)
    src[0] = 8.0
    assert copied.tolist() == [0.0, 1.0, 2.0]
    on_cpu = ng.from_dlpack(src, device="cpu")
    src[1] = 9.0
    assert on_cpu.tolist() == [8.0, 9.0, 2.0]
    with pytest.raises(TypeError):  # device and copy are keyword-only
        ng.from_dlpack(src, "cpu")


def test_from_dlpack_result_can_start_a_graph(ng, torch_ref):
    src = torch_ref.tensor([1.0, 2.0])
    w = ng.from_dlpack(src).requires_grad_()
    (w * w).sum().backward()
    assert w.grad.tolist() == [2.0, 4.0]
    with pytest.raises(BufferError, match=re.escape(GRAD_EXPORT_MSG)):
        torch_ref.from_dlpack(w)  # now it requires grad, so it cannot go back


def test_capsules_round_trip(ng, torch_ref):
    t = ng.arange(3.0)
    back = ng.from_dlpack(ng.utils.dlpack.to_dlpack(t))
    back[0] = 6.0
    assert t.tolist() == [6.0, 1.0, 2.0]

    src = torch_ref.arange(3.0)
    imported = ng.from_dlpack(torch_ref.utils.dlpack.to_dlpack(src))
    imported[2] = -2.0
    assert src.tolist() == [0.0, 1.0, -2.0]

    exported = torch_ref.from_dlpack(ng.utils.dlpack.to_dlpack(t))
    exported[1] = 5.0
    assert t.tolist() == [6.0, 5.0, 2.0]

    capsule = ng.utils.dlpack.to_dlpack(t)
    with pytest.raises(AssertionError, match="device and copy kwargs not supported"):
        ng.from_dlpack(capsule, copy=True)
    # to_dlpack, unlike __dlpack__, does not check requires_grad (as torch's)
    grad_capsule = ng.utils.dlpack.to_dlpack(ng.ones(2, requires_grad=True))
    assert _capsule_name(grad_capsule) == "dltensor"


def test_from_dlpack_is_the_utils_function(ng):
    assert ng.from_dlpack is ng.utils.dlpack.from_dlpack
    assert ng.utils.dlpack.DLDeviceType.kDLCPU == 1


def test_version_counters_are_not_shared(ng, torch_ref):
    """Data is shared, autograd's version counters are not (as between torch tensors)."""
    t = ng.arange(3.0)
    theirs = torch_ref.from_dlpack(t)
    v_ours, v_theirs = t._version, theirs._version
    theirs.add_(1)
    assert t.tolist() == [1.0, 2.0, 3.0]
    assert t._version == v_ours  # torch's write is invisible to our counter
    t.add_(1)
    assert t._version == v_ours + 1
    assert theirs._version == v_theirs + 1  # only its own add_
    assert theirs.tolist() == [2.0, 3.0, 4.0]


# ----------------------------------------------------------------------------------
# npgrad-only: dtypes npgrad does not have


@npgrad_only
def test_from_dlpack_of_unsupported_dtype_is_type_error(torch_ref):
    import npgrad

    with pytest.raises(TypeError, match="npgrad tensors are bool, uint8, .*float64; got uint16"):
        npgrad.from_dlpack(torch_ref.zeros(3, dtype=torch_ref.uint16))
    with pytest.raises(TypeError, match="got complex64"):
        npgrad.from_dlpack(np.zeros(2, np.complex64))


def test_from_dlpack_shares_float16(ng, torch_ref):
    src = np.zeros(3, np.float16)
    t = ng.from_dlpack(src)
    assert t.dtype == ng.float16
    t[1] = 2.5
    assert src[1] == 2.5
    theirs = torch_ref.from_dlpack(t)
    assert theirs.dtype == torch_ref.float16
    theirs[2] = -1.0
    assert src.tolist() == [0.0, 2.5, -1.0]


@npgrad_only
def test_from_dlpack_rejects_other_devices():
    import npgrad

    with pytest.raises(RuntimeError, match="npgrad tensors live on the CPU"):
        npgrad.from_dlpack(np.zeros(2), device="cuda")


def test_from_numpy_refuses_a_byte_swapped_array_as_torch() -> None:
    """The loops that read a tensor's memory take it in native byte order."""
    swapped = np.arange(6, dtype=np.dtype(np.float32).newbyteorder())
    assert_same_error(lambda lib: lib.from_numpy(swapped))
