"""MultiheadAttention, F.multi_head_attention_forward and the transformer layers
against torch: the same weights (torch's state_dict loaded by key) give the same
outputs, attention weights and gradients (inputs and every parameter), in train
mode with dropout 0 and in eval mode, for each option and mask kind; the
parameter names, shapes, initialisation and repr are torch's; bad input raises
torch's errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import oracle
from oracle import assert_close, assert_same_error, from_np, run_both, to_np

E, HEADS, BATCH = 8, 2, 2
RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, BATCH, E))  # (L, N, E)
MEM = RNG.standard_normal((5, BATCH, E))  # (S, N, E)
K4 = RNG.standard_normal((5, BATCH, 4))
V6 = RNG.standard_normal((5, BATCH, 6))
MASK_3D = RNG.standard_normal((BATCH * HEADS, 4, 5))
KPM = np.array([[False, False, True, False, True], [True, False, False, False, False]])


def _twins(torch, lib, build):
    """``build(torch)`` with a fixed seed, and ``build(lib)`` given the same state."""
    torch.manual_seed(0)
    ref = build(torch)
    m = build(lib)
    m.load_state_dict({k: from_np(lib, to_np(v)) for k, v in ref.state_dict().items()})
    return m


def _mask(lib, kind, tgt=4, src=5):
    """Masks by name: causal ((tgt, src) float, or bool), 2-D/3-D float, bool key padding."""
    if kind is None:
        return None
    if kind == "causal":
        return lib.nn.Transformer.generate_square_subsequent_mask(tgt, dtype=lib.float64)
    if kind == "causal_bool":
        return from_np(lib, np.triu(np.ones((tgt, src), dtype=bool), 1))
    if kind == "float2d":
        return from_np(lib, MASK_3D[0, :tgt, :src])
    if kind == "float3d":
        return from_np(lib, MASK_3D[:, :tgt, :src])
    if kind == "bool3d":
        return from_np(lib, MASK_3D[:, :tgt, :src] > 1.0)
    if kind == "kpm":
        return from_np(lib, KPM[:, :src])
    if kind == "kpm_float":
        return from_np(lib, np.where(KPM[:, :src], -1e9, 0.0))
    raise AssertionError(kind)


def _run(lib, torch, build, inputs, call, train=True):
    """Output(s) and the gradients of a fixed weighted sum of them with respect to
    the inputs and every parameter, as NumPy arrays."""
    m = _twins(torch, lib, build).train(train)
    xs = [from_np(lib, a, requires_grad=True) for a in inputs]
    outs = call(lib, m, *xs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    loss = 0
    for out in outs:
        if out is not None:
            weight = from_np(lib, np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))
            loss = loss + (out * weight).sum()
    loss.backward()
    params = {n: (None if p.grad is None else to_np(p.grad)) for n, p in m.named_parameters()}
    return [None if o is None else to_np(o) for o in outs], [to_np(x.grad) for x in xs], params


def _assert_same_run(got, expected):
    for g, e in zip(got[0], expected[0]):
        assert (g is None) == (e is None)
        if e is not None:
            assert_close(g, e, rtol=1e-7, atol=1e-9)
    for g, e in zip(got[1], expected[1]):
        assert_close(g, e, rtol=1e-7, atol=1e-9)
    assert list(got[2]) == list(expected[2])
    for name, e in expected[2].items():
        assert (got[2][name] is None) == (e is None), name
        if e is not None:
            assert_close(got[2][name], e, rtol=1e-7, atol=1e-9)


def _mha(**kw):
    return lambda lib: lib.nn.MultiheadAttention(E, HEADS, dtype=lib.float64, **kw)


# (module kwargs, call kwargs with masks by name, inputs: "self", "kv" (key is value) or "kdim")
MHA_CASES = [
    ({}, {}, "self"),
    ({}, {"need_weights": False}, "self"),
    ({}, {"average_attn_weights": False}, "kv"),
    ({"batch_first": True}, {"need_weights": False}, "self"),
    ({"batch_first": True}, {"attn_mask": "float2d"}, "kv"),
    ({"kdim": 4, "vdim": 6}, {"key_padding_mask": "kpm"}, "kdim"),
    ({"kdim": 4, "vdim": 6, "bias": False}, {"need_weights": False}, "kdim"),
    ({"add_bias_kv": True}, {"attn_mask": "float3d", "key_padding_mask": "kpm_float"}, "kv"),
    ({"add_zero_attn": True}, {"attn_mask": "bool3d", "need_weights": False}, "kv"),
    ({"add_bias_kv": True, "add_zero_attn": True}, {"key_padding_mask": "kpm_float", "need_weights": False}, "kv"),
    ({}, {"attn_mask": "causal_bool", "key_padding_mask": "kpm", "need_weights": False}, "kv"),
    ({}, {"attn_mask": "causal", "is_causal": True, "need_weights": False}, "self"),
    ({}, {"attn_mask": "causal", "is_causal": True}, "self"),
]
# Dropout: compared in eval mode only (in training the draws differ).
MHA_EVAL_CASES = [({"dropout": 0.5}, {}, "kv", False), ({"dropout": 0.5}, {"need_weights": False}, "self", False)]


def _mha_inputs(kind, batch_first):
    src = 4 if kind == "self" else 5
    arrays = {"self": [X], "kv": [X, MEM], "kdim": [X, K4, V6]}[kind]
    return [a.transpose(1, 0, 2).copy() if batch_first else a for a in arrays], src


@pytest.mark.parametrize(
    "kw,call_kw,kind,train",
    [(*case, train) for case in MHA_CASES for train in (True, False)] + MHA_EVAL_CASES,
)
def test_multihead_attention_matches_torch(ng, torch_ref, kw, call_kw, kind, train):
    inputs, src = _mha_inputs(kind, kw.get("batch_first", False))

    def call(lib, m, *xs):
        q, k, v = (xs[0], xs[0], xs[0]) if kind == "self" else (xs[0], xs[1], xs[1]) if kind == "kv" else xs
        masks = {name: _mask(lib, val, 4, src) for name, val in call_kw.items() if "mask" in name}
        rest = {name: val for name, val in call_kw.items() if "mask" not in name}
        return m(q, k, v, **masks, **rest)

    got = _run(ng, torch_ref, _mha(**kw), inputs, call, train)
    expected = _run(torch_ref, torch_ref, _mha(**kw), inputs, call, train)
    _assert_same_run(got, expected)


def test_multihead_attention_unbatched_and_eval_no_grad(ng, torch_ref):
    # Unbatched (L, E) inputs with a 3-D (heads, L, S) mask; and torch's fused
    # inference path (eval, no grad, batch_first self-attention) gives the same values.
    def prog(lib):
        m = _twins(torch_ref, lib, _mha(batch_first=True)).eval()
        q = from_np(lib, X[:, 0])
        mask = from_np(lib, MASK_3D[:HEADS, :4, :4])
        out, w = m(q, q, q, attn_mask=mask, average_attn_weights=False)
        with lib.no_grad():
            x = from_np(lib, X.transpose(1, 0, 2).copy())
            fused, fused_w = m(x, x, x, key_padding_mask=from_np(lib, KPM[:, :4]))
        return [to_np(t) for t in (out, w, fused, fused_w)]

    got, expected = run_both(prog)
    for g, e in zip(got, expected):
        assert_close(g, e, rtol=1e-7, atol=1e-9)


def test_multi_head_attention_forward_static_kv(ng, torch_ref):
    # The functional form with precomputed (static) keys and values per head.
    def prog(lib):
        w = from_np(lib, np.linspace(-1, 1, 3 * E * E).reshape(3 * E, E))
        out_w = from_np(lib, np.linspace(1, -1, E * E).reshape(E, E))
        q = from_np(lib, X, requires_grad=True)
        sk = from_np(lib, MASK_3D[:, :, :4].transpose(0, 2, 1).copy(), requires_grad=True)  # (N * heads, 4, 4)
        out, weights = lib.nn.functional.multi_head_attention_forward(
            q, q, q, E, HEADS, w, None, None, None, False, 0.0, out_w, None, static_k=sk, static_v=sk
        )
        out.sum().backward()
        return [to_np(t) for t in (out, weights, q.grad, sk.grad)] + [out.grad_fn.name(), weights.grad_fn.name()]

    got, expected = run_both(prog)
    for g, e in zip(got[:4], expected[:4]):
        assert_close(g, e, rtol=1e-7, atol=1e-9)
    assert got[4:] == expected[4:]


@pytest.mark.parametrize(
    "kw",
    [{}, {"kdim": 4, "vdim": 6}, {"bias": False, "add_bias_kv": True}, {"add_zero_attn": True, "batch_first": True}],
)
def test_multihead_attention_parameters_init_and_repr(ng, torch_ref, kw):
    def prog(lib):
        lib.manual_seed(0)
        m = lib.nn.MultiheadAttention(E, HEADS, **kw)
        params = {n: tuple(p.shape) for n, p in m.named_parameters()}
        # Xavier uniform: within sqrt(6 / (fan_in + fan_out)); zero biases.
        weights = [to_np(p) for n, p in m.named_parameters() if n.endswith("proj_weight")]
        in_bounds = all(np.abs(w).max() <= np.sqrt(6 / sum(w.shape)) for w in weights)
        zero_biases = m.in_proj_bias is None or not (to_np(m.in_proj_bias).any() or to_np(m.out_proj.bias).any())
        attrs = (m.embed_dim, m.kdim, m.vdim, m.head_dim, m._qkv_same_embed_dim, m.batch_first, m.add_zero_attn)
        return repr(m), list(m.state_dict()), params, in_bounds, zero_biases, attrs, m.bias_k is None

    got, expected = run_both(prog)
    assert got == expected
    assert got[3] and got[4]


def _mha_call(lib, m=None, q=None, k=None, v=None, **kw):
    m = m or lib.nn.MultiheadAttention(E, HEADS)
    x = lib.zeros(4, BATCH, E)
    return m(x if q is None else q, x if k is None else k, x if v is None else v, **kw)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.nn.MultiheadAttention(6, 4),
        lambda lib: lib.nn.MultiheadAttention(0, 2),
        lambda lib: lib.nn.MultiheadAttention(8, -1),
        lambda lib: _mha_call(lib, attn_mask=lib.zeros(3, 4)),
        lambda lib: _mha_call(lib, attn_mask=lib.zeros(3, 4, 4)),
        lambda lib: _mha_call(lib, attn_mask=lib.zeros(1, 1, 4, 4)),
        lambda lib: _mha_call(lib, attn_mask=lib.zeros(4, 4, dtype=lib.int64)),
        lambda lib: _mha_call(lib, key_padding_mask=lib.zeros(BATCH, 3, dtype=lib.bool)),
        lambda lib: _mha_call(lib, key_padding_mask=lib.zeros(3, 4, dtype=lib.bool)),
        lambda lib: _mha_call(lib, key_padding_mask=lib.zeros(BATCH, dtype=lib.bool)),
        lambda lib: _mha_call(lib, is_causal=True),
        lambda lib: _mha_call(lib, q=lib.zeros(4, BATCH, 6)),
        lambda lib: _mha_call(lib, q=lib.zeros(1, 4, BATCH, E)),
        lambda lib: _mha_call(lib, k=lib.zeros(4, E)),
        lambda lib: _mha_call(lib, v=lib.zeros(5, BATCH, E)),
        lambda lib: _mha_call(
            lib, q=lib.zeros(4, E), k=lib.zeros(4, E), v=lib.zeros(4, E), attn_mask=lib.zeros(3, 4, 4)
        ),
        lambda lib: _mha_call(lib, lib.nn.MultiheadAttention(E, HEADS, kdim=4), k=lib.zeros(5, BATCH, 4)),
    ],
)
def test_multihead_attention_errors(ng, torch_ref, call):
    assert_same_error(call)


def test_multihead_attention_mismatched_masks_warn(ng, torch_ref):
    def prog(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _mha_call(lib, key_padding_mask=lib.zeros(BATCH, 4, dtype=lib.bool), attn_mask=lib.zeros(4, 4))
        return [str(w.message) for w in caught]

    got, expected = run_both(prog)
    assert (
        got
        == expected
        == ["Support for mismatched key_padding_mask and attn_mask is deprecated. Use same type for both instead."]
    )


# ------------------------------------------------------------ transformer layers


def _enc_layer(lib, **kw):
    kw.setdefault("dropout", 0.0)
    return lib.nn.TransformerEncoderLayer(E, HEADS, 16, dtype=lib.float64, **kw)


def _dec_layer(lib, **kw):
    kw.setdefault("dropout", 0.0)
    return lib.nn.TransformerDecoderLayer(E, HEADS, 16, dtype=lib.float64, **kw)


ENCODER_CASES = [
    ({}, {}, True),
    ({}, {}, False),
    ({"norm_first": True, "activation": "gelu"}, {"src_mask": "causal", "is_causal": True}, True),
    ({"batch_first": True, "bias": False}, {"src_key_padding_mask": "kpm"}, True),
    ({"batch_first": True, "bias": False}, {"src_key_padding_mask": "kpm"}, False),
    (
        {"layer_norm_eps": 1e-3, "activation": "callable"},
        {"src_mask": "causal_bool", "src_key_padding_mask": "kpm"},
        True,
    ),
    # Dropout: eval mode only (in training the draws differ).
    ({"dropout": 0.3, "activation": "module"}, {"src_mask": "float2d"}, False),
]


def _activation(lib, kw):
    kw = dict(kw)
    if kw.get("activation") == "callable":
        kw["activation"] = lib.tanh
    elif kw.get("activation") == "module":
        kw["activation"] = lib.nn.GELU()
    return kw


def _seq_first(a, batch_first):
    return a.transpose(1, 0, 2).copy() if batch_first else a


@pytest.mark.parametrize("kw,call_kw,train", ENCODER_CASES)
def test_encoder_layer_matches_torch(ng, torch_ref, kw, call_kw, train):
    x = _seq_first(X, kw.get("batch_first", False))

    def call(lib, m, src):
        masks = {n: _mask(lib, v, 4, 4) for n, v in call_kw.items() if "mask" in n}
        return m(src, **masks, **{n: v for n, v in call_kw.items() if "mask" not in n})

    def build(lib):
        return _enc_layer(lib, **_activation(lib, kw))

    _assert_same_run(_run(ng, torch_ref, build, [x], call, train), _run(torch_ref, torch_ref, build, [x], call, train))


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize(
    "kw,call_kw",
    [
        ({}, {"tgt_mask": "causal"}),
        (
            {"norm_first": True, "batch_first": True},
            {"tgt_mask": "causal", "tgt_is_causal": True, "memory_key_padding_mask": "kpm"},
        ),
        ({"activation": "gelu", "bias": False}, {"memory_mask": "float2d", "tgt_key_padding_mask": "kpm"}),
    ],
)
def test_decoder_layer_matches_torch(ng, torch_ref, kw, call_kw, train):
    bf = kw.get("batch_first", False)

    def call(lib, m, tgt, mem):
        masks = {}
        for name, val in call_kw.items():
            if name == "tgt_mask":
                masks[name] = _mask(lib, val, 4, 4)
            elif name == "tgt_key_padding_mask":
                masks[name] = _mask(lib, val, 4, 4)
            elif "mask" in name:
                masks[name] = _mask(lib, val, 4, 5)
        return m(tgt, mem, **masks, **{n: v for n, v in call_kw.items() if "mask" not in n})

    def build(lib):
        return _dec_layer(lib, **kw)

    inputs = [_seq_first(X, bf), _seq_first(MEM, bf)]
    got = _run(ng, torch_ref, build, inputs, call, train)
    _assert_same_run(got, _run(torch_ref, torch_ref, build, inputs, call, train))


def test_encoder_of_two_layers_with_final_norm(ng, torch_ref):
    def build(lib):
        layer = _enc_layer(lib, batch_first=True)
        return lib.nn.TransformerEncoder(layer, 2, lib.nn.LayerNorm(E, dtype=lib.float64), enable_nested_tensor=False)

    def call(lib, m, src):
        # The causal mask is detected as causal (is_causal=None).
        return m(src, mask=_mask(lib, "causal", 4, 4), src_key_padding_mask=_mask(lib, "kpm_float", 4, 4))

    x = _seq_first(X, True)
    _assert_same_run(_run(ng, torch_ref, build, [x], call), _run(torch_ref, torch_ref, build, [x], call))
    _assert_same_run(_run(ng, torch_ref, build, [x], call, False), _run(torch_ref, torch_ref, build, [x], call, False))


def test_decoder_stack_and_transformer(ng, torch_ref):
    def build_decoder(lib):
        return lib.nn.TransformerDecoder(_dec_layer(lib), 2, lib.nn.LayerNorm(E, dtype=lib.float64))

    def call_decoder(lib, m, tgt, mem):
        return m(tgt, mem, tgt_mask=_mask(lib, "causal", 4, 4))

    def build_transformer(lib):
        with pytest.warns(UserWarning, match="because encoder_layer.norm_first was True"):
            return lib.nn.Transformer(E, HEADS, 1, 1, 16, 0.0, norm_first=True, dtype=lib.float64)

    def call_transformer(lib, m, src, tgt):
        mask = m.generate_square_subsequent_mask(4, dtype=lib.float64)
        return m(
            src, tgt, tgt_mask=mask, src_key_padding_mask=_mask(lib, "kpm"), memory_key_padding_mask=_mask(lib, "kpm")
        )

    for build, call, inputs in (
        (build_decoder, call_decoder, [X, MEM]),
        (build_transformer, call_transformer, [MEM, X]),
    ):
        _assert_same_run(_run(ng, torch_ref, build, inputs, call), _run(torch_ref, torch_ref, build, inputs, call))


def test_transformer_structure_init_and_repr(ng, torch_ref):
    def prog(lib):
        lib.manual_seed(0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m = lib.nn.Transformer(E, HEADS, 2, 1, 16, batch_first=True)
            enc = lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(E, 1, 16), 1)
        layers = m.encoder.layers
        shapes = {k: tuple(v.shape) for k, v in m.state_dict().items()}
        # _reset_parameters: every weight of two or more dims is Xavier uniform.
        xavier = np.abs(to_np(m.encoder.layers[0].linear1.weight)).max() <= np.sqrt(6 / (E + 16))
        return (
            repr(m),
            shapes,
            [str(c.message) for c in caught],
            layers[0] is not layers[1] and layers[0].linear1.weight is not layers[1].linear1.weight,
            (m.d_model, m.nhead, m.batch_first, enc.use_nested_tensor, m.encoder.use_nested_tensor),
            (layers[0].activation_relu_or_gelu, layers[0].norm_first, m.encoder.num_layers, m.decoder.num_layers),
            xavier,
            to_np(m.generate_square_subsequent_mask(3)).tolist(),
        )

    got, expected = run_both(prog)
    assert got == expected
    assert got[3] and got[6]


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.nn.TransformerEncoderLayer(E, HEADS, activation="tanh"),
        lambda lib: lib.nn.TransformerDecoderLayer(E, 3),
        lambda lib: lib.nn.Transformer(E, HEADS, 1, 1, 16)(lib.zeros(3, 2, E), lib.zeros(3, 1, E)),
        lambda lib: lib.nn.Transformer(E, HEADS, 1, 1, 16, batch_first=True)(lib.zeros(2, 3, E), lib.zeros(1, 3, E)),
        lambda lib: lib.nn.Transformer(E, HEADS, 1, 1, 16)(lib.zeros(3, 2, E), lib.zeros(3, 2, 4)),
        lambda lib: lib.nn.TransformerEncoderLayer(E, HEADS, 16)(lib.zeros(3, 2, E), src_mask=lib.zeros(2, 2)),
        lambda lib: lib.nn.TransformerEncoderLayer(E, HEADS, 16)(
            lib.zeros(3, 2, E), src_key_padding_mask=lib.zeros(2, 3, dtype=lib.int32)
        ),
    ],
)
@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
def test_transformer_errors(ng, torch_ref, call):
    assert_same_error(call)


# ------------------------------------------- scaled_dot_product_attention, math path

SDPA_CASES = [
    # (query, key, value shapes, mask kind, kwargs): 3-D, 2-D and 4-D inputs that
    # torch's CPU flash kernel does not take (no 4-D shape of one feature size).
    (((2, 3, 4), (2, 5, 4), (2, 5, 6)), None, {}),
    (((3, 4), (5, 4), (5, 4)), None, {"is_causal": True}),
    (((2, 3, 4), (2, 5, 4), (2, 5, 4)), "float", {"scale": -0.3}),
    (((2, 3, 4), (2, 5, 4), (2, 5, 4)), "bool_full_row", {}),
    (((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 6)), "float", {"scale": 0.7}),
]


@pytest.mark.parametrize("shapes,mask,kw", SDPA_CASES)
def test_sdpa_math_path_matches_torch(ng, torch_ref, shapes, mask, kw):
    arrays = [np.sin(np.arange(np.prod(s)) * (i + 1.3)).reshape(s) for i, s in enumerate(shapes)]
    L, S = shapes[0][-2], shapes[1][-2]

    def prog(lib):
        xs = [from_np(lib, a, requires_grad=True) for a in arrays]
        m = None
        if mask == "float":
            m = from_np(lib, np.cos(np.arange(L * S)).reshape(L, S), requires_grad=True)
        elif mask == "bool_full_row":  # the second query attends to nothing: zeros
            m = from_np(lib, np.array([[True] * S, [False] * S, [True, False] * (S // 2) + [True]]))
        out = lib.nn.functional.scaled_dot_product_attention(*xs, attn_mask=m, **kw)
        (out * from_np(lib, np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))).sum().backward()
        grads = [to_np(x.grad) for x in xs] + ([to_np(m.grad)] if mask == "float" else [])
        return to_np(out), grads

    got, expected = run_both(prog)
    assert_close(got[0], expected[0], rtol=1e-7, atol=1e-9)
    for g, e in zip(got[1], expected[1]):
        assert_close(g, e, rtol=1e-7, atol=1e-9)


def test_sdpa_dropout_and_training_layers_with_dropout(ng):
    # dropout_p > 0: each weight (here 1/4) is dropped or scaled by 1 / (1 - p);
    # the transformer layers in training mode with their default dropout 0.1 run,
    # and differ from eval mode only by the dropout.
    ng.manual_seed(0)
    q = ng.ones(2, 1, 6, 3, dtype=ng.float64, requires_grad=True)
    k = ng.ones(2, 1, 4, 3, dtype=ng.float64)
    out = ng.nn.functional.scaled_dot_product_attention(q, k, k, dropout_p=0.5)
    values = set(np.round(to_np(out).ravel() * 2).tolist())  # sums of kept 1/2s, times 2
    assert values <= {0.0, 1.0, 2.0, 3.0, 4.0} and len(values) > 1
    out.sum().backward()
    assert q.grad is not None
    layer = ng.nn.TransformerEncoderLayer(E, HEADS, 16, batch_first=True)
    x = ng.randn(2, 4, E)
    train_out = layer(x)
    eval_out = layer.eval()(x)
    assert tuple(train_out.shape) == (2, 4, E)
    assert not np.allclose(to_np(train_out), to_np(eval_out))
    assert_close(eval_out, layer(x))


def test_sdpa_math_path_errors(ng, torch_ref):
    assert_same_error(
        lambda lib: lib.nn.functional.scaled_dot_product_attention(
            lib.zeros(2, 3, 4), lib.zeros(2, 3, 4), lib.zeros(2, 3, 4), lib.zeros(3, 3), is_causal=True
        )
    )


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_inference_matches_torch_fused_path(ng, torch_ref, norm_first):
    # In eval mode without grad torch runs its fused encoder layer; same values.
    def prog(lib):
        m = _twins(torch_ref, lib, lambda lib: _enc_layer(lib, batch_first=True, norm_first=norm_first)).eval()
        with lib.no_grad():
            return to_np(m(from_np(lib, _seq_first(X, True)), src_key_padding_mask=_mask(lib, "kpm", 4, 4)))

    got, expected = run_both(prog)
    assert_close(got, expected, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("cls", ["TransformerEncoder", "TransformerDecoder"])
def test_a_layer_that_is_not_a_module_is_refused(ng, cls):
    # torch's error from ModuleList, raised before copying the layer num_layers times.
    with pytest.raises(TypeError, match="^torch.FloatTensor is not a Module subclass$"):
        getattr(ng.nn, cls)(ng.ones(2), 2)
    # torch copies the layer num_layers times first, so with a huge count it
    # never returns; npgrad refuses at once.
    count = 2 if oracle.AGAINST_TORCH else 2**64 + 1
    with pytest.raises(TypeError, match="^tuple is not a Module subclass$"):
        getattr(ng.nn, cls)((2, 3), count)
