"""save/load and safetensors: round trips (dtype, shape, values, requires_grad,
Parameter, nested structures, shared memory, path and file object), files that
try to run code or are damaged, and weights passing between torch and npgrad
through safetensors and NumPy.

With NPGRAD_TESTS_AGAINST_TORCH=1, ``ng.save``/``ng.load`` are torch's and the
safetensors API is ``safetensors.torch``: the tests state what holds for both.
"""

from __future__ import annotations

import collections
import importlib
import io
import json
import math
import pickle
import sys
import zipfile

import numpy as np
import pytest

from oracle import AGAINST_TORCH, dtype_name, from_np, to_np


class Unstorable:
    """An arbitrary class: neither library's safe format holds it."""


class RunsCode:
    """A pickle of this runs code (writes the file ``path``) when unpickled."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (exec, (f"with open({self.path!r}, 'w') as f: f.write('ran')",))


def round_trip(ng, obj, **load_kwargs):
    buffer = io.BytesIO()
    ng.save(obj, buffer)
    buffer.seek(0)
    return ng.load(buffer, **load_kwargs)


def saved(ng, obj) -> bytes:
    buffer = io.BytesIO()
    ng.save(obj, buffer)
    return buffer.getvalue()


def st(ng):
    """The safetensors API of the library under test."""
    if AGAINST_TORCH:
        return importlib.import_module("safetensors.torch")
    return importlib.import_module("npgrad.utils.safetensors")


needs_safetensors = pytest.mark.skipif(
    importlib.util.find_spec("safetensors") is None, reason="the safetensors package is not installed"
)

DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensors_keep_dtype_shape_and_values(ng, dtype):
    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=(2, 3)) * 10, rng.normal(size=()), np.zeros((0, 3)), rng.normal(size=(1, 2, 2))]
    tensors = [from_np(ng, a.astype(np.dtype(dtype))) for a in arrays]
    loaded = round_trip(ng, tensors)
    for t, back in zip(tensors, loaded):
        assert dtype_name(back.dtype) == dtype and tuple(back.shape) == tuple(t.shape)
        assert np.array_equal(to_np(back), to_np(t)) and not back.requires_grad


def test_requires_grad_parameters_and_non_leaves(ng):
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    p = ng.nn.Parameter(ng.zeros(2))
    frozen = ng.nn.Parameter(ng.ones(1), requires_grad=False)
    back = round_trip(ng, {"x": x, "y": x * 2, "p": p, "frozen": frozen, "plain": ng.ones(1)})
    assert back["x"].requires_grad and back["x"].is_leaf and back["x"].grad_fn is None
    assert back["y"].requires_grad and back["y"].is_leaf and back["y"].tolist() == [2.0, 4.0]
    assert isinstance(back["p"], ng.nn.Parameter) and back["p"].requires_grad
    assert isinstance(back["frozen"], ng.nn.Parameter) and not back["frozen"].requires_grad
    assert not isinstance(back["plain"], ng.nn.Parameter) and not back["plain"].requires_grad
    back["x"].sum().backward()  # a usable leaf
    assert back["x"].grad.tolist() == [1.0, 1.0]


def test_nested_structures_and_plain_values(ng):
    obj = {
        "state": {0: {"step": 3, "exp_avg": ng.ones(2)}, 1: {"step": 3, "exp_avg": ng.zeros(1)}},
        "param_groups": [{"lr": 0.1, "betas": (0.9, 0.999), "params": [0, 1], "amsgrad": False, "foreach": None}],
        "floats": [math.inf, -math.inf, -0.0, 1e-310],
        "other": ("text", b"\x00bytes", 2 + 3j, {1, 2}, ng.float16, ng.Size([2, 3]), -(2**70)),
        (1, "tuple key"): collections.OrderedDict(b=1, a=2),
    }
    back = round_trip(ng, obj)
    assert back["state"][1]["exp_avg"].tolist() == [0.0] and back["state"][0]["step"] == 3
    assert back["param_groups"] == obj["param_groups"] and type(back["param_groups"][0]["betas"]) is tuple
    assert back["floats"] == obj["floats"] and math.copysign(1, back["floats"][2]) == -1
    assert back["other"] == obj["other"] and type(back["other"][5]) is type(obj["other"][5])
    assert type(back[(1, "tuple key")]) is collections.OrderedDict and list(back[(1, "tuple key")]) == ["b", "a"]
    assert math.isnan(round_trip(ng, float("nan")))
    assert round_trip(ng, None) is None and round_trip(ng, [True, 1]) == [True, 1]


def test_path_and_file_object(ng, tmp_path):
    state = ng.nn.Linear(3, 2).state_dict()
    path = tmp_path / "model.pt"
    ng.save(state, path)
    ng.save(state, str(tmp_path / "again.pt"))
    with open(tmp_path / "file.pt", "wb") as f:
        ng.save(state, f)
    for name in ("model.pt", "again.pt", "file.pt"):
        with open(tmp_path / name, "rb") as f:
            from_file = ng.load(f)
        for loaded in (ng.load(tmp_path / name), ng.load(str(tmp_path / name)), from_file):
            assert list(loaded) == ["weight", "bias"]
            assert all(np.array_equal(to_np(loaded[k]), to_np(state[k])) for k in state)
    model = ng.nn.Linear(3, 2)
    model.load_state_dict(ng.load(path))
    assert np.array_equal(to_np(model.weight), to_np(state["weight"]))
    with pytest.raises(FileNotFoundError):
        ng.load(tmp_path / "missing.pt")


def test_views_saved_together_load_sharing_memory(ng):
    base = ng.arange(6.0)
    whole, middle, transposed = round_trip(ng, [base, base[1:4], base.view(2, 3).t()])
    assert transposed.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]] and tuple(transposed.stride()) == (1, 3)
    with ng.no_grad():
        middle[0] = 100.0
    assert whole.tolist() == [0.0, 100.0, 2.0, 3.0, 4.0, 5.0]
    assert transposed[1, 0].item() == 100.0
    separate, other = round_trip(ng, [ng.ones(2), ng.ones(2)])
    with ng.no_grad():
        separate[0] = 5.0
    assert other.tolist() == [1.0, 1.0]


def test_map_location(ng):
    state = {"w": ng.ones(2)}
    for where in (None, "cpu", ng.device("cpu"), {"cpu": "cpu"}, lambda storage, location: storage):
        assert round_trip(ng, state, map_location=where)["w"].tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match=r"^Attempting to deserialize object on a CUDA device but torch\.cuda"):
        round_trip(ng, state, map_location="cuda")


def test_weights_only_and_pickle_module(ng):
    state = {"w": ng.ones(1)}
    assert round_trip(ng, state, weights_only=True)["w"].tolist() == [1.0]
    assert round_trip(ng, state, weights_only=False)["w"].tolist() == [1.0]
    with pytest.raises(RuntimeError, match="^Can not safely load weights when explicit pickle_module is specified$"):
        round_trip(ng, state, weights_only=True, pickle_module=pickle)


@pytest.mark.parametrize(
    "obj,name", [(Unstorable(), "Unstorable"), ([1, Unstorable()], "Unstorable"), (np.ones(2), ""), ({"k": print}, "")]
)
def test_objects_outside_the_format_are_refused_naming_the_type(ng, obj, name):
    with pytest.raises(pickle.UnpicklingError) as info:
        round_trip(ng, obj)  # npgrad refuses at save, torch at load (weights_only)
    assert name in str(info.value)


@pytest.mark.skipif(AGAINST_TORCH, reason="the errors npgrad.save raises (torch saves any picklable object)")
def test_npgrad_save_refuses_with_a_type_error_too(ng):
    with pytest.raises(TypeError, match=r"cannot store an object of type test_serialization\.Unstorable"):
        ng.save({"a": Unstorable()}, io.BytesIO())
    loop = [1]
    loop.append(loop)
    with pytest.raises(TypeError, match="cannot store a list that contains itself"):
        ng.save(loop, io.BytesIO())


def test_a_file_that_would_run_code_is_refused_and_runs_nothing(ng, tmp_path):
    marker = tmp_path / "ran"
    payload = pickle.dumps(RunsCode(str(marker)), protocol=2)
    # A torch.save archive whose pickle is replaced by the payload.
    archive = zipfile.ZipFile(io.BytesIO(saved(ng, {"a": ng.ones(1)}))) if AGAINST_TORCH else None
    members = {n: archive.read(n) for n in archive.namelist()} if archive else {"archive/version": b"3\n"}
    members = {n: (payload if n.endswith("data.pkl") else v) for n, v in members.items()}
    members.setdefault("archive/data.pkl", payload)
    crafted = io.BytesIO()
    with zipfile.ZipFile(crafted, "w") as z:
        for name, value in members.items():
            z.writestr(name, value)
    for data in (payload, crafted.getvalue()):
        for kwargs in ({}, {"weights_only": True}):
            with pytest.raises(pickle.UnpicklingError):
                ng.load(io.BytesIO(data), **kwargs)
    assert not marker.exists()
    if not AGAINST_TORCH:  # npgrad never unpickles, whatever weights_only says
        with pytest.raises(pickle.UnpicklingError, match="a torch.save file"):
            ng.load(io.BytesIO(crafted.getvalue()), weights_only=False)
        assert not marker.exists()
    pickle.loads(payload)  # the payload does run code when unpickled
    assert marker.read_text() == "ran"


def test_damaged_files_raise_cleanly(ng):
    good = saved(ng, {"w": ng.arange(50.0)})
    with pytest.raises(EOFError):
        ng.load(io.BytesIO(b""))
    with pytest.raises(pickle.UnpicklingError):
        ng.load(io.BytesIO(b"not a checkpoint"))
    with pytest.raises(RuntimeError):
        ng.load(io.BytesIO(good[: len(good) // 2]))
    with pytest.raises(RuntimeError):
        ng.load(io.BytesIO(b"PK\x03\x04garbage"))
    assert round_trip(ng, {"w": ng.ones(1)})["w"].tolist() == [1.0]  # still usable


def _npgrad_archive(members: dict[str, bytes]) -> io.BytesIO:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, value in members.items():
            z.writestr(name, value)
    out.seek(0)
    return out


@pytest.mark.skipif(AGAINST_TORCH, reason="npgrad's own file format")
def test_tampered_npgrad_files_raise_unpickling_errors(ng):
    good = zipfile.ZipFile(io.BytesIO(saved(ng, {"w": ng.arange(4.0)})))
    members = {n: good.read(n) for n in good.namelist()}
    tree = json.loads(members["tree.json"])
    spec = tree["dict"][0][1]["tensor"]
    tampered = {
        "bad json": {"tree.json": b"{"},
        "unknown type": {"tree.json": b'{"pickle": "x"}'},
        "bare list": {"tree.json": b"[1, 2]"},
        "outside the storage": {"tree.json": json.dumps({"tensor": dict(spec, shape=[1000])}).encode()},
        "negative offset": {"tree.json": json.dumps({"tensor": dict(spec, offset=-8)}).encode()},
        "unknown dtype": {"tree.json": json.dumps({"tensor": dict(spec, dtype="object")}).encode()},
        "missing storage": {"tree.json": json.dumps({"tensor": dict(spec, storage=7)}).encode()},
        "missing field": {"tree.json": json.dumps({"tensor": {"dtype": "float32"}}).encode()},
        "bad float": {"tree.json": b'{"float": "x"}'},
        "other format": {"npgrad_format": b"npgrad.save 99"},
        "no marker": {"npgrad_format": None},
        "pickled storage": {"storages/0.npy": pickle.dumps(1)},
    }
    for change in tampered.values():
        files = {k: v for k, v in {**members, **change}.items() if v is not None}
        with pytest.raises(pickle.UnpicklingError, match="^npgrad.load: "):
            ng.load(_npgrad_archive(files))
    flipped = bytearray(saved(ng, {"w": ng.arange(40.0)}))
    flipped[len(flipped) // 2] ^= 0xFF  # inside the storage's data: the CRC check fails
    with pytest.raises(RuntimeError, match="damaged"):
        ng.load(io.BytesIO(bytes(flipped)))


# ------------------------------------------------------------------ safetensors


@needs_safetensors
def test_safetensors_round_trips(ng, tmp_path):
    api = st(ng)
    tensors = {
        "w": ng.arange(6.0).reshape(2, 3),
        "i": ng.tensor([1, 2], dtype=ng.int32),
        "h": ng.ones(1).half(),
        "b": ng.tensor([0.1, -3.0], dtype=ng.bfloat16),
    }
    api.save_file(tensors, tmp_path / "t.safetensors", metadata={"step": "3"})
    for loaded in (api.load_file(tmp_path / "t.safetensors"), api.load(api.save(tensors))):
        assert sorted(loaded) == ["b", "h", "i", "w"]
        for k, t in tensors.items():
            assert loaded[k].dtype == t.dtype and np.array_equal(to_np(loaded[k]), to_np(t))
    from safetensors import safe_open

    with safe_open(tmp_path / "t.safetensors", framework="numpy") as f:
        assert f.metadata() == {"step": "3"}
    transposed = ng.arange(6.0).reshape(2, 3).t()
    assert api.load(api.save({"t": transposed.contiguous()}))["t"].tolist() == transposed.tolist()


@needs_safetensors
def test_safetensors_errors(ng):
    api = st(ng)
    base = ng.arange(4.0)
    with pytest.raises(RuntimeError, match="Some tensors share memory"):
        api.save({"a": base, "b": base[1:]})
    with pytest.raises(ValueError, match=r"^You are trying to save a non contiguous tensor: `t` which is not allowed"):
        api.save({"t": ng.ones(2, 3).t()})
    with pytest.raises(ValueError, match=r"^Key `a` is invalid, expected torch.Tensor but received <class 'list'>$"):
        api.save({"a": [1.0]})


def _tied(ng):
    model = ng.nn.Sequential(ng.nn.Linear(2, 2), ng.nn.Linear(2, 2))
    model[1].weight = model[0].weight
    return model


@needs_safetensors
def test_safetensors_save_and_load_model(ng, tmp_path):
    api = st(ng)
    path = tmp_path / "m.safetensors"
    model = _tied(ng)
    api.save_model(model, path)
    assert sorted(api.load_file(path)) == ["0.bias", "0.weight", "1.bias"]
    fresh = _tied(ng)
    assert api.load_model(fresh, path) == (set(), [])
    x = ng.randn(3, 2)
    assert np.array_equal(to_np(fresh(x)), to_np(model(x)))
    api.save_file({"0.weight": ng.ones(2, 2), "extra": ng.ones(1)}, path)
    with pytest.raises(RuntimeError) as info:
        api.load_model(ng.nn.Sequential(ng.nn.Linear(2, 2)), path)
    assert str(info.value) == (
        "Error(s) in loading state_dict for Sequential:\n"
        '    Missing key(s) in state_dict: "0.bias"\n'
        '    Unexpected key(s) in state_dict: "extra"'
    )
    assert api.load_model(ng.nn.Sequential(ng.nn.Linear(2, 2)), path, strict=False) == ({"0.bias"}, ["extra"])


@pytest.mark.skipif(AGAINST_TORCH, reason="npgrad's optional dependency")
def test_safetensors_functions_name_the_missing_package(ng, monkeypatch):
    monkeypatch.setitem(sys.modules, "safetensors", None)
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    api = importlib.import_module("npgrad.utils.safetensors")
    with pytest.raises(ImportError, match="needs the safetensors package"):
        api.save({"a": ng.ones(1)})
    with pytest.raises(ImportError, match="safetensors"):
        api.load_file("x.safetensors")


def test_npgrad_imports_safetensors_only_inside_functions():
    """No module of npgrad imports safetensors when it is imported itself."""
    import ast
    import pathlib

    package = pathlib.Path(importlib.util.find_spec("npgrad").origin).parent
    for path in package.rglob("*.py"):
        text = path.read_text()
        if "safetensors" not in text:
            continue
        tree = ast.parse(text)
        nested = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) for n in ast.walk(f)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in nested:
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                assert not any(n.split(".")[0] == "safetensors" for n in names), path
    assert "npgrad/utils/safetensors.py" in {p.relative_to(package.parent).as_posix() for p in package.rglob("*.py")}


# ------------------------------------------------------------------ interop with torch


def _mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))


@needs_safetensors
def test_weights_pass_between_torch_and_the_library_through_safetensors(ng, torch_ref, tmp_path):
    import safetensors.torch

    x = np.random.default_rng(1).normal(size=(5, 4)).astype(np.float32)
    theirs = _mlp(torch_ref)
    safetensors.torch.save_file(theirs.state_dict(), tmp_path / "torch.safetensors")
    ours = _mlp(ng)
    assert st(ng).load_model(ours, tmp_path / "torch.safetensors") == (set(), [])
    want = to_np(theirs(torch_ref.from_numpy(x)))
    assert np.allclose(to_np(ours(from_np(ng, x))), want, rtol=1e-6, atol=1e-6)
    # and back: the library's file loaded by torch
    mine = _mlp(ng)
    st(ng).save_model(mine, tmp_path / "ours.safetensors")
    back = _mlp(torch_ref)
    back.load_state_dict(safetensors.torch.load_file(tmp_path / "ours.safetensors"))
    assert np.allclose(to_np(back(torch_ref.from_numpy(x))), to_np(mine(from_np(ng, x))), rtol=1e-6, atol=1e-6)


def test_torch_state_dict_through_numpy_gives_the_same_outputs(ng, torch_ref):
    theirs = _mlp(torch_ref)
    ours = _mlp(ng)
    ours.load_state_dict({k: from_np(ng, to_np(v)) for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(2).normal(size=(6, 4)).astype(np.float32)
    got, want = to_np(ours(from_np(ng, x))), to_np(theirs(torch_ref.from_numpy(x)))
    assert np.allclose(got, want, rtol=1e-6, atol=1e-6)
    saved_again = round_trip(ng, ours.state_dict())
    reloaded = _mlp(ng)
    reloaded.load_state_dict(saved_again)
    assert np.array_equal(to_np(reloaded(from_np(ng, x))), got)


@needs_safetensors
def test_bfloat16_weights_pass_between_torch_and_the_library_through_safetensors(ng, torch_ref, tmp_path):
    import safetensors.torch

    theirs = _mlp(torch_ref).bfloat16()
    safetensors.torch.save_file(theirs.state_dict(), tmp_path / "torch.safetensors")
    ours = _mlp(ng).bfloat16()
    assert st(ng).load_model(ours, tmp_path / "torch.safetensors") == (set(), [])
    for name, value in theirs.state_dict().items():
        assert str(ours.state_dict()[name].dtype) == "torch.bfloat16"
        assert np.array_equal(to_np(ours.state_dict()[name]).view(np.uint16), to_np(value).view(np.uint16))
    st(ng).save_file(ours.state_dict(), tmp_path / "ours.safetensors")
    back = safetensors.torch.load_file(tmp_path / "ours.safetensors")
    assert all(back[k].dtype == torch_ref.bfloat16 and back[k].equal(v) for k, v in theirs.state_dict().items())
