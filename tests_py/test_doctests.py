"""Docstrings: every public name has one, and their ``>>>`` examples run.

The examples are run with ``doctest`` over every module of the package
(the texts attached to the native names live in ``npgrad._tensor_docs`` and
``npgrad._torch_docs``, whose ``__test__`` dicts hold them). Every name of
``npgrad.autograd.graph`` has at least one example.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import inspect
import pathlib
import pkgutil
import types
from typing import Any

import pytest

import npgrad

OPTIONFLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

# npgrad._C's own docstrings are the texts of _tensor_docs/_torch_docs, run
# there; the pytest plugin is a plugin, not library code.
_SKIP_MODULES = {"npgrad._C", "npgrad._C._autograd", "npgrad._C._functions", "npgrad.pytest_plugin"}


def _modules() -> list[str]:
    names = ["npgrad"]
    for info in pkgutil.walk_packages(npgrad.__path__, "npgrad."):
        if info.name not in _SKIP_MODULES:
            names.append(info.name)
    return sorted(names)


MODULES = _modules()


def _run(module_name: str) -> doctest.TestResults:
    module = importlib.import_module(module_name)
    # The module's own namespace, as testmod does; grad mode must survive.
    was_enabled = npgrad.is_grad_enabled()
    try:
        return doctest.testmod(module, optionflags=OPTIONFLAGS, report=False)
    finally:
        npgrad._C._set_grad_enabled(was_enabled)


# Modules whose examples need an optional package (a pip extra).
_OPTIONAL_PACKAGE = {"npgrad.utils.safetensors": "safetensors"}


@pytest.mark.parametrize("module_name", MODULES)
def test_doctest_examples_pass(module_name: str) -> None:
    if module_name in _OPTIONAL_PACKAGE:
        pytest.importorskip(_OPTIONAL_PACKAGE[module_name])
    result = _run(module_name)
    assert result.failed == 0, f"{result.failed} doctest example(s) failed in {module_name} (see the output above)"


def test_enough_examples_are_run() -> None:
    attempted = {name: _run(name).attempted for name in MODULES}
    assert attempted["npgrad.autograd.graph"] >= 80
    assert attempted["npgrad._tensor_docs"] >= 250
    assert attempted["npgrad._torch_docs"] >= 150
    assert sum(attempted.values()) >= 550


GRAPH_NAMES_WITH_EXAMPLES = [
    "Node",
    "Node.name",
    "Node.next_functions",
    "Node.metadata",
    "Node.register_hook",
    "Node.register_prehook",
    "Node._register_hook_dict",
    "GradientEdge",
    "get_gradient_edge",
    "increment_version",
    "saved_tensors_hooks",
    "save_on_cpu",
    "disable_saved_tensors_hooks",
    "register_multi_grad_hook",
    "allow_mutation_on_saved_tensors",
]


@pytest.mark.parametrize("name", GRAPH_NAMES_WITH_EXAMPLES)
def test_every_graph_name_has_an_example(name: str) -> None:
    obj: Any = npgrad.autograd.graph
    for part in name.split("."):
        obj = inspect.getattr_static(obj, part)
    if isinstance(obj, property):
        obj = obj.fget
    doc = inspect.getdoc(obj) or ""
    examples = doctest.DocTestParser().get_examples(doc)
    assert examples, f"npgrad.autograd.graph.{name} has no >>> example"


# ------------------------------------------------------ every public name


def _public_names() -> list[tuple[str, Any]]:
    """(qualified name, object) for each public name of the README's API surface."""
    import npgrad.autograd.function as function
    import npgrad.autograd.graph as graph
    import npgrad.autograd.variable as variable
    import npgrad.nn.functional as functional
    import npgrad.nn.modules.module as nn_module
    import npgrad.utils.checkpoint as checkpoint
    import npgrad.utils.hooks as hooks

    out: list[tuple[str, Any]] = []
    nn = npgrad.nn
    for mod in (
        npgrad,
        npgrad.autograd,
        graph,
        function,
        variable,
        hooks,
        nn,
        functional,
        nn.init,
        nn.utils,
        nn_module,
        checkpoint,
    ):
        for name in mod.__all__:
            out.append((f"{mod.__name__}.{name}", getattr(mod, name)))
    # Tensor: its public methods and properties, and the private attributes
    # the README's API surface lists.
    tensor_names = [n for n in dir(npgrad.Tensor) if not n.startswith("_")]
    tensor_names += ["_version", "_base", "__len__", "__getitem__", "__setitem__"]
    for name in tensor_names:
        out.append((f"npgrad.Tensor.{name}", inspect.getattr_static(npgrad.Tensor, name)))
    # Public methods of the public classes.
    for cls in (
        graph.Node,
        function.Function,
        function.FunctionCtx,
        hooks.RemovableHandle,
        npgrad._C._functions._NodeBase,
        npgrad._C._functions.AccumulateGrad,
        npgrad._C._autograd.SavedTensor,
        nn.Module,
        nn.Parameter,
        nn.Linear,
        nn.Sequential,
        nn.ModuleList,
        nn.ModuleDict,
        nn.ParameterList,
        nn.ParameterDict,
    ):
        for name, attr in vars(cls).items():
            if not name.startswith("_") and (callable(attr) or isinstance(attr, (property, staticmethod, classmethod))):
                out.append((f"{cls.__qualname__}.{name}", attr))
    out.append(("Variable._execution_engine.queue_callback", variable.Variable._execution_engine.queue_callback))
    c = npgrad._C
    for name in ("_current_graph_task_id", "_will_engine_execute_node", "_current_autograd_node", "_increment_version"):
        out.append((f"npgrad._C.{name}", getattr(c, name)))
    for name in dir(c._autograd):
        if "saved_tensors" in name:
            out.append((f"npgrad._C._autograd.{name}", getattr(c._autograd, name)))
    for name in dir(c._functions):
        obj = getattr(c._functions, name)
        if isinstance(obj, type):
            out.append((f"npgrad._C._functions.{name}", obj))
    return out


def _doc_text(obj: Any) -> str:
    """The docstring minus pybind11's signature line(s)."""
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if isinstance(obj, types.ModuleType) or isinstance(obj, (type, property)) or callable(obj):
        doc = obj.__doc__ or ""
    else:  # an instance (a dtype object): its type documents it
        doc = type(obj).__doc__ or ""
    name = getattr(obj, "__name__", "")
    lines = doc.strip().splitlines()
    if lines and name and lines[0].startswith(f"{name}(") and isinstance(obj, types.BuiltinFunctionType):
        lines = lines[1:]
    return "\n".join(lines).strip()


@pytest.mark.parametrize("qualname,obj", _public_names(), ids=lambda v: v if isinstance(v, str) else "")
def test_public_name_has_a_docstring(qualname: str, obj: Any) -> None:
    if inspect.isclass(obj) is False and isinstance(obj, type(npgrad.float32)):
        obj = type(obj)
    assert _doc_text(obj), f"{qualname} has no docstring"


# ------------------------------------------------------------ _add_docstr


def test_add_docstr_keeps_the_pybind11_signature_line() -> None:
    doc = npgrad.Tensor.add.__doc__ or ""
    first, _, rest = doc.partition("\n")
    assert first.startswith("add(self: Tensor, other")
    assert "alpha" in rest and ">>> " in rest


def test_add_docstr_refuses_a_second_docstring() -> None:
    with pytest.raises(RuntimeError, match="function 'add' already has a docstring"):
        npgrad._C._add_docstr(npgrad.Tensor.add, "again")
    with pytest.raises(RuntimeError, match="function 'sum' already has a docstring"):
        npgrad._C._add_docstr(npgrad.sum, "again")
    with pytest.raises(RuntimeError, match="already has a docstring"):
        npgrad._C._add_docstr(inspect.getattr_static(npgrad.Tensor, "requires_grad"), "again")
    with pytest.raises(RuntimeError, match="Type 'npgrad._C.Tensor' already has a docstring"):
        npgrad._C._add_docstr(npgrad.Tensor, "again")


def test_add_docstr_rejects_other_objects() -> None:
    with pytest.raises(TypeError, match="don't know how to add docstring to type 'int'"):
        npgrad._C._add_docstr(1, "doc")
    with pytest.raises(TypeError, match="don't know how to add docstring to type 'function'"):
        npgrad._C._add_docstr(lambda: None, "doc")


def test_add_docstr_documents_a_fresh_property_and_returns_it() -> None:
    p = property(lambda self: 1)
    assert npgrad._C._add_docstr(p, "One.") is p
    assert p.__doc__ == "One."


def test_readme_api_list_is_rendered_from_the_package() -> None:
    """The README's list of public names is the one scripts/update_readme_api.py
    renders from the modules' ``__all__`` and the op tables."""
    script = pathlib.Path(__file__).resolve().parent.parent / "scripts" / "update_readme_api.py"
    if not script.is_file():
        pytest.skip("no scripts/ next to the tests (running outside the source tree)")
    spec = importlib.util.spec_from_file_location("update_readme_api", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.rendered_readme() == module.README.read_text(), "run python scripts/update_readme_api.py"
