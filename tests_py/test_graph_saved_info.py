"""npgrad.autograd.graph's own additions: the pack-hook context
(``current_saved_tensor``) and the saved-tensor inventory (``saved_tensors``,
``saved_tensors_summary``). torch has neither, so these tests skip when torch is
the library under test; they need no torch themselves."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest

import op_specs
import oracle

pytestmark = pytest.mark.skipif(
    oracle.AGAINST_TORCH, reason="the saved-tensor context and inventory are npgrad's own API"
)


@pytest.fixture
def graph(ng):
    return ng.autograd.graph


def _recording(graph):
    """saved_tensors_hooks whose pack hook records current_saved_tensor()."""
    infos = []

    def pack(t):
        info = graph.current_saved_tensor()
        assert info is not None
        infos.append(info)
        return t

    return infos, graph.saved_tensors_hooks(pack, lambda t: t)


def _names(infos):
    return [(i.node.name(), i.name) for i in infos]


# ----------------------------------------------------------------------------------
# the pack-hook context


def test_names_of_unary_binary_and_result_saving_ops(ng, graph):
    a = ng.ones(3, requires_grad=True)
    infos, hooks = _recording(graph)
    with hooks:
        s = a.sin()  # saves its input
        e = s.exp()  # saves its result
        y = e * s  # saves both operands, other first (torch's order)
    assert _names(infos) == [
        ("SinBackward0", "self"),
        ("ExpBackward0", "result"),
        ("MulBackward0", "other"),
        ("MulBackward0", "self"),
    ]
    assert infos[0].node is s.grad_fn and infos[1].node is e.grad_fn and infos[2].node is y.grad_fn
    assert [i.is_output for i in infos] == [False, True, False, False]
    assert [i.is_leaf for i in infos] == [True, False, False, False]
    assert all(i.requires_grad and i.packed for i in infos)
    assert infos[0].shape == (3,) and infos[0].dtype == ng.float32 and infos[0].nbytes == 12
    assert graph.current_saved_tensor() is None  # only inside a pack hook


def test_a_create_graph_backward_names_what_its_formulas_save(ng, graph):
    a = ng.ones(3, requires_grad=True)
    y = a.exp().sum()
    infos, hooks = _recording(graph)
    with hooks:
        (ga,) = ng.autograd.grad(y, a, create_graph=True)  # runs in the engine
    assert infos and all(i.node is not None and i.name for i in infos)
    listed = graph.saved_tensors(ga)  # the formula's nodes, and the forward's
    assert {(i.node_ref, i.name) for i in listed if i.packed} == {(i.node_ref, i.name) for i in infos}
    assert ("ExpBackward0", "result", False) in [(i.node.name(), i.name, i.packed) for i in listed]


def test_names_of_custom_function_saved_tensors(ng, graph):
    class Scale(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            out = x * w
            ctx.save_for_backward(x, out, None)
            return out

        @staticmethod
        def backward(ctx, g):
            x, out, _ = ctx.saved_tensors
            return g * out / x, g * x

    x = ng.full((2,), 2.0, requires_grad=True)
    w = ng.full((2,), 3.0, requires_grad=True)
    infos, hooks = _recording(graph)
    with hooks:
        y = Scale.apply(x, w)
    assert [(i.node, i.name, i.is_output) for i in infos] == [
        (y.grad_fn, "saved_tensors[0]", False),
        (y.grad_fn, "saved_tensors[1]", True),
    ]
    assert [(i.name, i.is_output) for i in graph.saved_tensors(y)] == [
        ("saved_tensors[0]", False),
        ("saved_tensors[1]", True),
    ]


def test_list_elements_and_in_place_results(ng, graph):
    a = ng.ones(4, requires_grad=True)
    infos, hooks = _recording(graph)
    with hooks:
        picked = a[ng.tensor([0, 2])]
        b = a.clone()
        b.exp_()  # the result, saved after the write
    assert _names(infos) == [("IndexBackward0", "indices[0]"), ("ExpBackward0", "result")]
    assert infos[0].dtype == ng.int64 and not infos[0].requires_grad
    assert infos[1].is_output and infos[1].node is b.grad_fn
    assert picked.grad_fn is infos[0].node


def test_every_op_names_each_packed_tensor_as_its_node_declares_it(ng, graph):
    """Every op_specs row: each pack hook sees a node and a name, the name is a
    ``_raw_saved_*`` attribute of that node, and the inventory of the output
    lists only packed (node, name) pairs."""
    packed = set()

    def pack(t):
        info = graph.current_saved_tensor()
        base, _, index = info.name.partition("[")
        raw = getattr(info.node, f"_raw_saved_{base}")  # AttributeError if not declared
        assert isinstance(raw, tuple) == bool(index), info
        packed.add((info.node_ref, info.name))
        return t

    for op in op_specs.ALL:
        inputs = op.tensors(ng, requires_grad=op.grad_mask)
        packed.clear()
        try:
            with graph.saved_tensors_hooks(pack, lambda t: t):
                out = op.fn(ng, *inputs)
        except Exception as e:
            raise AssertionError(op.id) from e
        # A composite op may also pack for nodes its output does not reach.
        listed = graph.saved_tensors(*(out if isinstance(out, tuple) else (out,)))
        assert {(i.node_ref, i.name) for i in listed} <= packed, op.id
        assert all(i.packed for i in listed), op.id


def test_register_hooks_on_one_saved_tensor_sees_its_context(ng, graph):
    a = ng.ones(3, requires_grad=True)
    y = a.exp() * a
    seen = []

    def pack(t):
        seen.append(graph.current_saved_tensor())
        return t

    y.grad_fn._raw_saved_other.register_hooks(pack, lambda t: t)
    assert [(i.node, i.name, i.is_leaf) for i in seen] == [(y.grad_fn, "other", True)]
    assert [(i.name, i.packed) for i in graph.saved_tensors(y)] == [
        ("result", False),
        ("other", True),
        ("self", False),
    ]


def test_context_in_unpack_hooks_and_nested_hooks(ng, graph):
    a = ng.ones(3, requires_grad=True)
    during_unpack = []

    def unpack(t):
        during_unpack.append(graph.current_saved_tensor())
        return t

    outer, inner = [], []
    with graph.saved_tensors_hooks(lambda t: outer.append(graph.current_saved_tensor().name) or t, unpack):
        x = a.exp()
        with graph.saved_tensors_hooks(lambda t: inner.append(graph.current_saved_tensor().name) or t, unpack):
            y = x.sin()
    (x.sum() + y.sum()).backward()
    assert outer == ["result"] and inner == ["self"]
    assert during_unpack == [None, None]


def test_a_raising_pack_hook_leaves_no_context(ng, graph):
    a = ng.ones(3, requires_grad=True)

    def pack(t):
        raise RuntimeError("pack refused " + graph.current_saved_tensor().name)

    with pytest.raises(RuntimeError, match="pack refused result"):
        with graph.saved_tensors_hooks(pack, lambda t: t):
            a.exp()
    assert graph.current_saved_tensor() is None
    y = a.exp()  # the graph records as usual afterwards
    y.sum().backward()
    assert ng.allclose(a.grad, ng.ones(3).exp())


def test_storage_is_shared_by_views_and_detach(ng, graph):
    a = ng.ones(2, 3, requires_grad=True)
    e = a.exp()
    infos, hooks = _recording(graph)
    with hooks:
        y = e[0] * e[1]  # two views of e, saved as each other's operand
        z = e.detach().view(6) * a.view(6)  # saves only the detached view
        w = a.sin()
    assert _names(infos) == [
        ("MulBackward0", "other"),
        ("MulBackward0", "self"),
        ("MulBackward0", "self"),
        ("SinBackward0", "self"),
    ]
    e1, e0, detached, leaf = infos
    assert e0.node is y.grad_fn and detached.node is z.grad_fn and leaf.node is w.grad_fn
    assert e0.storage == e1.storage == detached.storage == e._storage_id
    assert leaf.storage == a._storage_id != e0.storage
    assert e0.nbytes == 12 and detached.nbytes == 24  # a view's own bytes
    assert len({e0.storage, leaf.storage}) == 2  # hashable


def test_values_are_unchanged_by_a_policy_reading_the_context(ng, graph):
    def run(policy):
        w = ng.linspace(0.5, 1.5, 6).reshape(2, 3).requires_grad_()
        x = ng.linspace(-1.0, 1.0, 6).reshape(3, 2)
        with policy():
            loss = ((w @ x).tanh() * w.sum()).sum()
        loss.backward()
        return loss.detach(), w.grad

    def offload_activations():
        # keeps parameters as they are, copies the rest (a stand-in for offloading)
        def pack(t):
            info = graph.current_saved_tensor()
            return ("kept", t) if info.is_leaf else ("copied", t.clone())

        return graph.saved_tensors_hooks(pack, lambda p: p[1])

    import contextlib

    plain_loss, plain_grad = run(contextlib.nullcontext)
    loss, grad = run(offload_activations)
    assert ng.equal(loss, plain_loss) and ng.equal(grad, plain_grad)


# ----------------------------------------------------------------------------------
# the inventory


def test_inventory_counts_roots_and_release(ng, graph):
    a = ng.ones(2, 3, requires_grad=True)
    b = a.exp()
    y = (b * b[0]).sum()
    infos = graph.saved_tensors(y)
    assert [(i.node.name(), i.name) for i in infos] == [
        ("ExpBackward0", "result"),
        ("MulBackward0", "other"),
        ("MulBackward0", "self"),
    ]
    assert not any(i.packed for i in infos)
    assert sum(i.nbytes for i in infos) == 24 + 12 + 24
    assert len({i.storage for i in infos}) == 1
    # Roots: a node, a gradient edge, several roots sharing nodes, a leaf.
    assert graph.saved_tensors(y.grad_fn) == infos
    assert graph.saved_tensors(graph.get_gradient_edge(b)) == infos[:1]
    assert graph.saved_tensors(y, b, y) == infos
    assert graph.saved_tensors(a) == []
    assert graph.saved_tensors(a.detach()) == []
    # Python numbers a node keeps are no saved tensors.
    assert graph.saved_tensors(a * 2) == []
    y.backward(retain_graph=True)
    assert len(graph.saved_tensors(y)) == 3
    y.backward()
    assert graph.saved_tensors(y) == []


def test_inventory_does_not_unpack(ng, graph):
    a = ng.ones(3, requires_grad=True)
    unpacked = []
    with graph.saved_tensors_hooks(lambda t: t, lambda t: unpacked.append(t) or t):
        y = a.exp().sin()
    assert [(i.name, i.packed) for i in graph.saved_tensors(y)] == [("result", True), ("self", True)]
    assert unpacked == []


def test_summary_table_and_totals(ng, graph):
    a = ng.ones(2, 3, requires_grad=True)
    b = a.exp()
    y = (b * b[0]).sum() + a.sin().sum()
    text = graph.saved_tensors_summary(y)
    assert text.splitlines() == [
        "node          saved   shape   dtype    bytes  buffer  output  leaf  packed",
        "ExpBackward0  result  [2, 3]  float32     24  #1      yes     no    no",
        "MulBackward0  other   [3]     float32     12  #1      no      no    no",
        "              self    [2, 3]  float32     24  #1      no      no    no",
        "SinBackward0  self    [2, 3]  float32     24  #2      no      yes   no",
        "4 saved tensors in 3 nodes: 84 bytes; 48 unique bytes in 2 buffers",
    ]
    assert (
        graph.saved_tensors_summary(a).splitlines()[-1]
        == "0 saved tensors in 0 nodes: 0 bytes; 0 unique bytes in 0 buffers"
    )


@pytest.mark.parametrize("fn", ["saved_tensors", "saved_tensors_summary"])
def test_bad_roots_are_type_errors(ng, graph, fn):
    y = ng.ones(3, requires_grad=True).exp()
    f = getattr(graph, fn)
    with pytest.raises(TypeError, match=rf"^{fn}\(\) takes at least one root"):
        f()
    with pytest.raises(
        TypeError, match=rf"^{fn}\(\): each root must be a Tensor, a Node or a GradientEdge, not list; pass"
    ):
        f([y])
    with pytest.raises(TypeError, match="not int$"):
        f(y, 3)
    with pytest.raises(TypeError):
        graph.current_saved_tensor(y)


# ----------------------------------------------------------------------------------
# threads and lifetimes


def test_each_thread_sees_its_own_context(ng, graph):
    barrier = threading.Barrier(8)
    results: dict[int, list] = {}
    errors = []

    def worker(k):
        try:
            seen = []

            def pack(t):
                info = graph.current_saved_tensor()
                seen.append((info.name, tuple(info.shape), info.shape == t.shape, info.storage == t._storage_id))
                return t

            a = ng.ones(k + 1, requires_grad=True)
            barrier.wait()
            with graph.saved_tensors_hooks(pack, lambda t: t):
                for _ in range(20):
                    y = a.exp() * a
            y.sum().backward()
            results[k] = seen
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for k in range(8):
        shape = (k + 1,)
        assert (
            results[k]
            == [("result", shape, True, True), ("other", shape, True, True), ("self", shape, True, True)] * 20
        )


def test_infos_keep_no_tensor_and_no_node(ng, graph):
    gc.collect()
    live = ng._C._live_node_count()
    a = ng.ones(3, requires_grad=True)
    h = a * 2
    ref = weakref.ref(h)
    y = (h * h).sum()
    infos = graph.saved_tensors(y)
    del h
    assert ref() is not None  # the graph saves h
    y.backward()
    gc.collect()
    assert ref() is None and len(infos) == 2  # the infos do not keep it
    del y
    gc.collect()
    assert ng._C._live_node_count() == live  # nor the nodes
    assert [i.node for i in infos] == [None, None] and infos[0].name == "other"


def test_an_info_kept_in_the_packed_value_keeps_no_graph(ng, graph):
    gc.collect()
    live = ng._C._live_node_count()
    a = ng.ones(3, requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: (graph.current_saved_tensor(), t), lambda p: p[1]):
        y = a.exp().sin()  # node -> packed -> info: no way back to the node
    assert ng._C._live_node_count() > live
    ref = weakref.ref(y)
    del y
    gc.collect()
    assert ref() is None
    assert ng._C._live_node_count() == live
