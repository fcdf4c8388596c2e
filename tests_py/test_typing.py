"""The typed surface: ``py.typed``, the ``npgrad._C`` stubs, and mypy --strict.

The stubs (``npgrad/_C/__init__.pyi``, ``_autograd.pyi``, ``_functions.pyi``)
are written by hand; these tests keep them in step with the extension module:
every attribute of ``Tensor`` and every name of ``_C`` and its submodules is in
the stubs, nothing in the stubs is missing at run time, and (with mypy
installed) ``mypy.stubtest`` agrees and the examples type-check strictly.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import pathlib
import subprocess
import sys
import tempfile

import pytest

import npgrad

PACKAGE = pathlib.Path(npgrad.__file__).resolve().parent
STUBS = PACKAGE / "_C"
REPO = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"

# What pybind11 (or Python) puts on every class: not part of npgrad's surface.
_MACHINERY = {"__dict__", "__doc__", "__module__", "__weakref__", "__init__", "_pybind11_conduit_v1_"}


def _stub_tree(name: str) -> ast.Module:
    return ast.parse((STUBS / name).read_text(), filename=name)


def _defined_names(body: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom):
            names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.If):  # version branches
            names |= _defined_names(node.body) | _defined_names(node.orelse)
    return names


def _stub_class(tree: ast.Module, name: str) -> ast.ClassDef:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    raise AssertionError(f"class {name} is not in the stub")


def test_package_is_marked_typed() -> None:
    assert (PACKAGE / "py.typed").is_file()
    for name in ("__init__.pyi", "_autograd.pyi", "_functions.pyi", "_nn.pyi"):
        assert (STUBS / name).is_file(), name


def test_stub_lists_every_tensor_attribute() -> None:
    stub = _defined_names(_stub_class(_stub_tree("__init__.pyi"), "Tensor").body)
    runtime = set(vars(npgrad.Tensor)) - _MACHINERY
    missing = sorted(runtime - stub)
    assert not missing, f"npgrad._C.Tensor attributes missing from _C/__init__.pyi: {missing}"


def test_stub_has_no_tensor_attribute_the_runtime_lacks() -> None:
    stub = _defined_names(_stub_class(_stub_tree("__init__.pyi"), "Tensor").body)
    stale = sorted(name for name in stub if not hasattr(npgrad.Tensor, name))
    assert not stale, f"_C/__init__.pyi declares Tensor attributes that do not exist: {stale}"


@pytest.mark.parametrize(
    "module,stub_file",
    [
        ("_C", "__init__.pyi"),
        ("_C._autograd", "_autograd.pyi"),
        ("_C._functions", "_functions.pyi"),
        ("_C._nn", "_nn.pyi"),
    ],
)
def test_stub_lists_every_module_name(module: str, stub_file: str) -> None:
    mod = npgrad._C
    for part in module.split(".")[1:]:
        mod = getattr(mod, part)
    stub = _defined_names(_stub_tree(stub_file).body)
    runtime = {name for name in vars(mod) if not (name.startswith("__") and name.endswith("__"))}
    missing = sorted(runtime - stub)
    assert not missing, f"npgrad.{module} names missing from _C/{stub_file}: {missing}"


def _require_mypy() -> None:
    # Looked up, not imported: importing mypy into the test process would
    # import mypy_extensions, whose deprecated TypedDict Hypothesis then
    # touches (a DeprecationWarning, an error under -W error).
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed")


def _mypy_env() -> dict[str, str]:
    env = dict(os.environ)
    # From a source checkout npgrad is found through MYPYPATH (and imported
    # through PYTHONPATH); an installed npgrad (site-packages, py.typed) is
    # found by mypy itself.
    env.pop("MYPYPATH", None)
    if PACKAGE.parent == REPO / "python":
        env["MYPYPATH"] = str(PACKAGE.parent)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE.parent), env.get("PYTHONPATH")]))
    return env


def _cache_dir() -> str:
    # Kept between runs: a cold mypy run spends most of its time on NumPy's stubs.
    return os.path.join(tempfile.gettempdir(), f"npgrad-mypy-cache-{os.getuid()}")


def test_examples_pass_mypy_strict() -> None:
    _require_mypy()
    if not EXAMPLES.is_dir():
        pytest.skip("no examples/ next to the tests (running outside the source tree)")
    files = sorted(str(p) for p in EXAMPLES.glob("*.py"))
    assert files
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", _cache_dir(), *files],
        capture_output=True,
        text=True,
        env=_mypy_env(),
        cwd=REPO,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


# pybind11 classes have their own metaclass and an __init__(*args, **kwargs)
# that refuses to construct: stubtest reports both for every class.
_STUBTEST_NOISE = ("metaclass differs", "__init__ is inconsistent, stub does not have *args parameter")


def test_stubtest_agrees_with_the_extension_module() -> None:
    _require_mypy()
    proc = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "npgrad._C", "--mypy-config-file", os.devnull],
        capture_output=True,
        text=True,
        env=_mypy_env(),
        cwd=REPO,
        timeout=900,
    )
    errors = [
        line
        for line in proc.stdout.splitlines()
        if line.startswith("error:") and not any(noise in line for noise in _STUBTEST_NOISE)
    ]
    assert not errors, "\n".join(errors)


def test_nn_exports_every_layer_of_nn_modules() -> None:
    # npgrad.nn star-imports each file of nn.modules (so type checkers see the
    # layers); a new file of layers must be added there too.
    import npgrad.nn
    import npgrad.nn.modules

    assert set(npgrad.nn.modules.__all__) <= set(npgrad.nn.__all__)
    assert all(getattr(npgrad.nn, name) is getattr(npgrad.nn.modules, name) for name in npgrad.nn.modules.__all__)
