"""npgrad's own ``saved_tensors_hooks(pack, unpack, dedup=True)``: tensors saved in
its scope that share one buffer are packed once per buffer and rebuilt as views of
the one unpacked buffer (Note [Storage dedup of saved tensors]).

npgrad-only: torch has no such option, so these tests skip with
``NPGRAD_TESTS_AGAINST_TORCH=1``."""

from __future__ import annotations

import gc
import re
import weakref

import numpy as np
import pytest

from oracle import AGAINST_TORCH, run_in_threads

pytestmark = pytest.mark.skipif(AGAINST_TORCH, reason="npgrad's own saved_tensors_hooks option")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 6))
W = RNG.standard_normal((6, 12)) / 3
MODIFIED = re.escape("one of the variables needed for gradient computation has been modified by an inplace operation")


class Counting:
    """Hooks that copy each packed tensor to NumPy and count packs, packed bytes,
    unpacks and prefetches."""

    def __init__(self):
        self.packs = []  # shapes received
        self.nbytes = 0
        self.unpacks = 0
        self.prefetches = 0

    def pack(self, t):
        self.packs.append(tuple(t.shape))
        a = t.detach().numpy().copy()
        self.nbytes += a.nbytes
        return a

    def unpack(self, a):
        import npgrad

        self.unpacks += 1
        return npgrad.from_numpy(a)

    def prefetch(self, a):
        self.prefetches += 1


def attention(ng, x, w):
    """q, k, v are views of one projection; several nodes save each."""
    qkv = x @ w
    q, k, v = qkv.chunk(3, dim=1)
    scores = (q @ k.t()).softmax(dim=-1)
    return ((scores @ v) * q).tanh().sum()


def run(ng, hooks=None, **kwargs):
    x = ng.tensor(X, requires_grad=True)
    w = ng.tensor(W, requires_grad=True)
    if hooks is None:
        loss = attention(ng, x, w)
    else:
        with ng.autograd.graph.saved_tensors_hooks(hooks.pack, hooks.unpack, **kwargs):
            loss = attention(ng, x, w)
    return x, w, loss


def plain_grads(ng):
    x, w, loss = run(ng)
    loss.backward()
    return loss.item(), x.grad.numpy().copy(), w.grad.numpy().copy()


def test_views_of_one_buffer_are_packed_once_with_equal_values_and_gradients(ng):
    plain = Counting()
    x, w, loss = run(ng, plain)
    dedup = Counting()
    xd, wd, loss_d = run(ng, dedup, dedup=True)
    # Plain: one pack per saved tensor: x, w; q, k.t(); softmax's result; it
    # and v; their product and q; tanh's result.
    assert len(plain.packs) == 10 and plain.nbytes == 8 * (24 + 72 + 8 * 16)
    # Dedup: q, k, v are views of x @ w, packed once in its own shape; the
    # softmax result, saved by two nodes, once.
    assert sorted(dedup.packs) == [(4, 4), (4, 4), (4, 4), (4, 6), (4, 12), (6, 12)]
    assert dedup.nbytes == 8 * (24 + 72 + 48 + 3 * 16)
    expected = plain_grads(ng)
    loss_d.backward()
    assert loss_d.item() == expected[0]
    np.testing.assert_array_equal(xd.grad.numpy(), expected[1])
    np.testing.assert_array_equal(wd.grad.numpy(), expected[2])
    assert dedup.unpacks == len(dedup.packs)  # once per payload


def test_unpack_once_per_payload_per_pass(ng):
    hooks = Counting()
    x, w, loss = run(ng, hooks, dedup=True, prefetch=hooks.prefetch)
    payloads = len(hooks.packs)
    expected = plain_grads(ng)
    for i in range(2):
        loss.backward(retain_graph=True)
        assert hooks.unpacks == payloads * (i + 1)
        assert hooks.prefetches == hooks.unpacks  # never after the unpack, once per pass
    np.testing.assert_allclose(x.grad.numpy(), 2 * expected[1], rtol=1e-12)
    (gw,) = ng.autograd.grad(loss, w, retain_graph=True)
    assert 2 * payloads < hooks.unpacks <= 3 * payloads
    np.testing.assert_array_equal(gw.numpy(), expected[2])
    # Outside a pass every read unpacks.
    before = hooks.unpacks
    mul = loss.grad_fn.next_functions[0][0].next_functions[0][0]
    assert mul.name() == "MulBackward0"
    np.testing.assert_allclose(mul._saved_other.detach().numpy(), (X @ W)[:, :4], rtol=1e-12)
    mul._saved_other  # noqa: B018
    assert hooks.unpacks == before + 2


def test_a_tensor_saved_by_several_nodes_and_its_detach(ng):
    hooks = Counting()
    a = ng.tensor(X[0], requires_grad=True)
    with ng.autograd.graph.saved_tensors_hooks(hooks.pack, hooks.unpack, dedup=True):
        h = a * 3
        y = (h.sin() + h.cos() + h * h.detach()).sum()  # h saved by sin, cos, mul (twice)
    assert hooks.packs == [(6,)]
    y.backward()
    h0 = X[0] * 3
    np.testing.assert_allclose(a.grad.numpy(), 3 * (np.cos(h0) - np.sin(h0) + h0), rtol=1e-12)
    assert hooks.unpacks == 1


def test_unpack_with_other_strides_is_laid_out_again(ng):
    hooks = Counting()

    def unpack_transposed(a):
        hooks.unpacks += 1
        return ng.from_numpy(np.asfortranarray(a))  # same shape, other strides

    x = ng.tensor(X, requires_grad=True)
    w = ng.tensor(W, requires_grad=True)
    with ng.autograd.graph.saved_tensors_hooks(hooks.pack, unpack_transposed, dedup=True):
        loss = attention(ng, x, w)
    loss.backward()
    expected = plain_grads(ng)
    np.testing.assert_allclose(x.grad.numpy(), expected[1], rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), expected[2], rtol=1e-12)


def test_version_checks_per_saved_tensor(ng):
    x = ng.tensor(X, requires_grad=True)
    hooks = Counting()
    with ng.autograd.graph.saved_tensors_hooks(hooks.pack, hooks.unpack, dedup=True):
        h = x * 1
        q, k = h.chunk(2, dim=1)
        y = (q.exp() * k).sum()  # saves exp's result (its own buffer), q's result... and k
    h.add_(1)  # k (a view of h) is modified after being saved
    with pytest.raises(RuntimeError, match=MODIFIED + r".*\[torch\.DoubleTensor \[4, 3\]\]"):
        y.backward()
    # Plain hooks, as torch's, do not check: the difference is dedup's own.
    with ng.autograd.graph.saved_tensors_hooks(hooks.pack, hooks.unpack):
        h2 = x * 1
        y2 = (h2.exp() * h2).sum()
    h2.add_(1)
    y2.backward()


def test_a_buffer_written_between_saves_is_packed_again(ng):
    a = ng.tensor(X[0], requires_grad=True)
    hooks = Counting()
    with ng.autograd.graph.saved_tensors_hooks(hooks.pack, hooks.unpack, dedup=True):
        h = a * 1
        first = h.sin()  # saves h at version 0
        with ng.no_grad():
            h.mul_(2)
        second = h.cos()  # saves h at version 1: another payload, of the new values
    assert hooks.packs == [(6,), (6,)]
    (g,) = ng.autograd.grad(second.sum(), a)
    np.testing.assert_allclose(g.numpy(), -np.sin(2 * X[0]), rtol=1e-12)
    with pytest.raises(RuntimeError, match=MODIFIED):
        first.sum().backward()


def test_unpack_of_the_wrong_shape_or_dtype_is_a_clear_error(ng):
    x = ng.tensor(X, requires_grad=True)
    bad = [lambda a: ng.from_numpy(a[:1]), lambda a: ng.from_numpy(a.astype(np.float32))]
    messages = [
        r"\(\[\d+, \d+\], torch\.DoubleTensor\) but got \[1, \d+\]",
        r"but got \[\d+, \d+\], torch\.FloatTensor",
    ]
    for unpack, message in zip(bad, messages):
        with ng.autograd.graph.saved_tensors_hooks(lambda t: t.numpy().copy(), unpack, dedup=True):
            loss = attention(ng, x, ng.tensor(W))
        with pytest.raises(
            RuntimeError, match=re.escape("saved_tensors_hooks(dedup=True): unpack_hook must") + ".*" + message
        ):
            loss.backward()
    with ng.autograd.graph.saved_tensors_hooks(lambda t: t, lambda p: "oops", dedup=True):
        loss = (x * x).sum()
    with pytest.raises(TypeError, match="Output of saved tensor unpack_hook expected to be a Tensor"):
        loss.backward()
    # The engine is usable afterwards.
    x2, w2, loss2 = run(ng, Counting(), dedup=True)
    loss2.backward()
    np.testing.assert_allclose(x2.grad.numpy(), plain_grads(ng)[1], rtol=1e-12)


def test_current_saved_tensor_in_the_pack_hook(ng):
    from npgrad.autograd.graph import current_saved_tensor

    seen = []

    def pack(t):
        info = current_saved_tensor()
        seen.append((info.node.name(), info.name, tuple(info.shape), tuple(t.shape), info.storage == t._storage_id))
        return t

    x = ng.tensor(X, requires_grad=True)
    for dedup in (False, True):
        with ng.autograd.graph.saved_tensors_hooks(pack, lambda t: t, dedup=dedup):
            q, k = (x * 1).chunk(2, dim=1)
            (q * k).sum()
    # The first save of the buffer packs it, and is what the pack hook is told of.
    first = seen[0]
    assert len(seen) == 3 and first[0] == "MulBackward0" and first[3] == (4, 3)
    assert seen[2] == (*first[:3], (4, 6), True)


def test_compose_prefetch_and_nesting(ng):
    log = []

    def offload(t):
        log.append(("pack", tuple(t.shape)))
        return t.numpy().copy()

    def load(a):
        log.append("unpack")
        return ng.from_numpy(a)

    def scaled(t):
        log.append(("scale", tuple(t.shape)))
        return t * 2

    expected = plain_grads(ng)
    # dedup on the inner composed pair: it gets the buffer; the enclosing pair
    # packs its result, once per buffer too.
    x, w = ng.tensor(X, requires_grad=True), ng.tensor(W, requires_grad=True)
    with ng.autograd.graph.saved_tensors_hooks(offload, load, prefetch=lambda a: log.append("prefetch")):
        with ng.autograd.graph.saved_tensors_hooks(scaled, lambda t: t / 2, compose=True, dedup=True):
            loss = attention(ng, x, w)
    assert log.count(("scale", (4, 12))) == 1 and log.count(("scale", (4, 4))) == 3
    packs = sum(1 for e in log if e[0] == "pack")
    assert packs == sum(1 for e in log if e[0] == "scale") == 6
    log.clear()
    loss.backward()
    assert log.count("unpack") == packs and log.count("prefetch") == packs
    np.testing.assert_allclose(w.grad.numpy(), expected[2], rtol=1e-12)
    # dedup on the outer pair: the nested composed pair runs per saved tensor, so
    # its fresh results share nothing.
    log.clear()
    x, w = ng.tensor(X, requires_grad=True), ng.tensor(W, requires_grad=True)
    with ng.autograd.graph.saved_tensors_hooks(offload, load, dedup=True):
        with ng.autograd.graph.saved_tensors_hooks(scaled, lambda t: t / 2, compose=True):
            loss = attention(ng, x, w)
    assert log.count(("scale", (4, 4))) >= 3
    loss.backward()
    np.testing.assert_allclose(w.grad.numpy(), expected[2], rtol=1e-12)
    # A plain pair nested inside replaces the dedup pair (the innermost wins).
    inner = Counting()
    x, w = ng.tensor(X, requires_grad=True), ng.tensor(W, requires_grad=True)
    with ng.autograd.graph.saved_tensors_hooks(offload, load, dedup=True):
        with ng.autograd.graph.saved_tensors_hooks(inner.pack, inner.unpack):
            loss = attention(ng, x, w)
    assert inner.packs.count((4, 4)) >= 3
    with ng.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with ng.autograd.graph.saved_tensors_hooks(offload, load, dedup=True):
                pass


def test_custom_function_and_checkpoint(ng):
    from npgrad.utils.checkpoint import checkpoint

    class Mul(ng.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, g * a

    hooks = Counting()
    x = ng.tensor(X, requires_grad=True)
    with ng.autograd.graph.saved_tensors_hooks(hooks.pack, hooks.unpack, dedup=True):
        q, k = (x * 1).chunk(2, dim=1)
        y = Mul.apply(q, k).sum()
    assert hooks.packs == [(4, 6)]
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.concatenate([X[:, 3:], X[:, :3]], axis=1), rtol=1e-12)

    expected = plain_grads(ng)
    for inside in (False, True):
        hooks = Counting()
        x, w = ng.tensor(X, requires_grad=True), ng.tensor(W, requires_grad=True)

        def body(x, w, inside=inside, hooks=hooks):
            if not inside:
                return attention(ng, x, w)
            with ng.autograd.graph.saved_tensors_hooks(hooks.pack, hooks.unpack, dedup=True):
                return attention(ng, x, w)

        if inside:
            loss = checkpoint(body, x, w, use_reentrant=False)
        else:
            with ng.autograd.graph.saved_tensors_hooks(hooks.pack, hooks.unpack, dedup=True):
                loss = checkpoint(body, x, w, use_reentrant=False)
        loss.backward()
        np.testing.assert_allclose(x.grad.numpy(), expected[1], rtol=1e-12)
        np.testing.assert_allclose(w.grad.numpy(), expected[2], rtol=1e-12)


def test_threads_each_with_their_own_dedup_hooks(ng):
    expected = plain_grads(ng)
    results = {}

    def work(i):
        hooks = Counting()
        x, w, loss = run(ng, hooks, dedup=True, prefetch=hooks.prefetch)
        for _ in range(5):
            loss.backward(retain_graph=True)
        results[i] = (hooks, x.grad.numpy() / 5, w.grad.numpy() / 5)

    run_in_threads(work, 8)
    for hooks, gx, gw in results.values():
        assert hooks.packs.count((4, 12)) == 1
        assert hooks.unpacks == hooks.prefetches == 5 * len(hooks.packs)
        np.testing.assert_allclose(gx, expected[1], rtol=1e-12)
        np.testing.assert_allclose(gw, expected[2], rtol=1e-12)


def test_no_leaks(ng):
    class Payload:
        def __init__(self, t):
            self.t = t.detach().clone()

    payloads = []

    def pack(t):
        p = Payload(t)
        payloads.append(weakref.ref(p))
        return p

    def unpack(p):
        return p.t

    def make():
        x, w = ng.tensor(X, requires_grad=True), ng.tensor(W, requires_grad=True)
        with ng.autograd.graph.saved_tensors_hooks(pack, unpack, dedup=True, prefetch=lambda p: None):
            loss = attention(ng, x, w)
        loss.backward(retain_graph=True)  # keeps, then releases, the pass's unpacked buffers
        loss.backward()  # releases the saved tensors: every share of each payload
        assert all(r() is None for r in payloads)
        # Cycles through a payload that one node holds all the shares of (mul
        # saves q and k, views of one buffer), and through one saved once.
        with ng.autograd.graph.saved_tensors_hooks(pack, unpack, dedup=True):
            q, k = (x * 1).chunk(2, dim=1)
            y = q * k
            z = x.exp()
        payloads[-2]().cycle = y
        payloads[-1]().cycle = z
        return weakref.ref(y), weakref.ref(z)

    refs = make()
    gc.collect()
    assert payloads and all(r() is None for r in payloads)
    assert all(r() is None for r in refs)


def test_a_buffer_that_cannot_be_laid_out_again_is_packed_alone(ng):
    # An overlapping array (no ndarray base) and a view of another dtype's memory:
    # each saved tensor is packed by itself, as without dedup.
    overlapping = np.lib.stride_tricks.as_strided(np.arange(4.0), shape=(3, 2), strides=(8, 8))
    other_dtype = np.frombuffer(bytearray(np.arange(4.0).tobytes()), dtype=np.uint8).view(np.float64)
    for array in (overlapping, other_dtype):
        hooks = Counting()
        base = ng.from_numpy(array)
        a = ng.tensor(np.ones(array.shape), requires_grad=True)
        with ng.autograd.graph.saved_tensors_hooks(hooks.pack, hooks.unpack, dedup=True):
            y = (a * base).sum() + (a * base).sum()  # saves base twice
        assert hooks.packs == [array.shape] * 2
        y.backward()
        np.testing.assert_allclose(a.grad.numpy(), 2 * array, rtol=1e-12)


def test_custom_function_ctx_cycle_is_collected(ng):
    class Mul(ng.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, g * a

    class Payload:
        def __init__(self, t):
            self.t = t.detach().clone()

    payloads = []

    def pack(t):
        p = Payload(t)
        payloads.append(weakref.ref(p))
        return p

    def make():
        x = ng.tensor(X, requires_grad=True)
        with ng.autograd.graph.saved_tensors_hooks(pack, lambda p: p.t, dedup=True):
            q, k = (x * 1).chunk(2, dim=1)
            y = Mul.apply(q, k)  # the ctx holds both shares of the payload
        payloads[-1]().cycle = y
        return weakref.ref(y)

    ref = make()
    gc.collect()
    assert len(payloads) == 1 and payloads[0]() is None and ref() is None


def test_a_pass_releases_what_it_unpacked_however_it_ends(ng):
    refs = []
    fail_at = [None]

    def unpack(a):
        if len(refs) == fail_at[0]:
            raise ValueError("unpack failed")
        t = ng.from_numpy(a)
        refs.append(weakref.ref(t))
        return t

    x, w = ng.tensor(X, requires_grad=True), ng.tensor(W, requires_grad=True)
    with ng.autograd.graph.saved_tensors_hooks(lambda t: t.numpy().copy(), unpack, dedup=True):
        loss = attention(ng, x, w)
    loss.backward(retain_graph=True)  # the graph and its payloads stay
    gc.collect()
    assert len(refs) == 6 and all(r() is None for r in refs)
    refs.clear()
    fail_at[0] = 2
    with pytest.raises(ValueError, match="unpack failed"):
        loss.backward(retain_graph=True)
    gc.collect()
    assert len(refs) == 2 and all(r() is None for r in refs)
    fail_at[0] = None
    refs.clear()
    loss.backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * plain_grads(ng)[2], rtol=1e-12)
