"""Batch and instance norm, embedding and loss layers against torch: constructor
defaults and options, parameters and buffers, repr, outputs, gradients and
running statistics with torch's state loaded, state-dict versions, default
initialisation, torch's errors; and a small CNN trained by hand as torch."""

from __future__ import annotations

import warnings
from collections import OrderedDict

import numpy as np
import pytest

from oracle import assert_module_matches_torch, assert_same_error, run_both, to_np

RNG = np.random.default_rng(1)


def _x(*shape):
    return RNG.standard_normal(shape)


def _steps(m, *xs):
    """Three forward passes in training mode, then one in evaluation mode."""
    outs = [m(x) for x in xs[:3]]
    return (*outs, m.eval()(xs[3]))


NORMS = [
    (lambda nn, d: nn.BatchNorm1d(3, dtype=d), (4, 3)),
    (lambda nn, d: nn.BatchNorm1d(2, eps=1e-3, momentum=None, dtype=d), (3, 2, 5)),
    (lambda nn, d: nn.BatchNorm1d(2, affine=False, momentum=0.3, dtype=d), (4, 2)),
    (lambda nn, d: nn.BatchNorm1d(3, track_running_stats=False, dtype=d), (2, 3, 2)),
    (lambda nn, d: nn.BatchNorm2d(2, dtype=d), (2, 2, 3, 3)),
    (lambda nn, d: nn.BatchNorm2d(3, momentum=None, bias=False, dtype=d), (2, 3, 2, 2)),
    (lambda nn, d: nn.BatchNorm2d(2, affine=False, track_running_stats=False, dtype=d), (3, 2, 2, 1)),
    (lambda nn, d: nn.InstanceNorm1d(2, dtype=d), (2, 2, 5)),
    (lambda nn, d: nn.InstanceNorm1d(3, affine=True, track_running_stats=True, dtype=d), (2, 3, 4)),
    (lambda nn, d: nn.InstanceNorm1d(2, affine=True, momentum=None, track_running_stats=True, dtype=d), (2, 4)),
    (lambda nn, d: nn.InstanceNorm2d(2, affine=True, dtype=d), (2, 2, 3, 3)),
    (lambda nn, d: nn.InstanceNorm2d(2, track_running_stats=True, bias=False, affine=True, dtype=d), (2, 3, 2)),
]


@pytest.mark.parametrize("build,shape", NORMS)
def test_norm_layers_train_and_eval_as_torch(build, shape):
    # Three training steps update the running statistics (and num_batches_tracked),
    # then evaluation normalizes with them.
    inputs = [_x(*shape) for _ in range(4)]
    assert_module_matches_torch(lambda lib: build(lib.nn, lib.float64), inputs, forward=_steps)


def test_batch_norm_float32_defaults_and_buffers(ng):
    bn = ng.nn.BatchNorm2d(3)
    assert [n for n, _ in bn.named_parameters()] == ["weight", "bias"]
    assert [n for n, _ in bn.named_buffers()] == ["running_mean", "running_var", "num_batches_tracked"]
    assert bn.weight.tolist() == [1.0] * 3 and bn.bias.tolist() == [0.0] * 3 and bn.weight.dtype == ng.float32
    assert bn.running_var.tolist() == [1.0] * 3 and bn.num_batches_tracked.dtype == ng.int64
    assert bn.num_batches_tracked.dim() == 0 and bn._version == 2
    assert bn.__constants__ == ["track_running_stats", "momentum", "eps", "num_features", "affine"]
    bare = ng.nn.BatchNorm1d(2, affine=False, track_running_stats=False)
    assert bare.weight is None and bare.running_mean is None and list(bare.state_dict()) == []
    inst = ng.nn.InstanceNorm2d(2)
    assert inst.weight is None and inst.running_mean is None and inst.eps == 1e-5


def test_batch_norm_momentum_none_is_the_cumulative_average(ng):
    bn = ng.nn.BatchNorm1d(1, momentum=None)
    batches = [[[1.0], [3.0]], [[5.0], [7.0]], [[0.0], [0.0]]]
    for b in batches:
        bn(ng.tensor(b))
    assert bn.num_batches_tracked.item() == 3
    assert bn.running_mean.tolist() == pytest.approx([np.mean([2.0, 6.0, 0.0])])
    assert bn.running_var.tolist() == pytest.approx([np.mean([2.0, 2.0, 0.0])])
    bn.reset_running_stats()
    assert bn.num_batches_tracked.item() == 0 and bn.running_mean.tolist() == [0.0]


def test_batch_norm_old_state_dict_keeps_num_batches_tracked():
    # A state dict of version 1 (before num_batches_tracked) loads without that key.
    def prog(lib):
        bn = lib.nn.BatchNorm1d(2)
        bn(lib.ones(3, 2))
        sd = OrderedDict((k, v) for k, v in bn.state_dict().items() if k != "num_batches_tracked")
        sd._metadata = OrderedDict({"": {"version": 1}})
        fresh = lib.nn.BatchNorm1d(2)
        result = fresh.load_state_dict(sd)
        unversioned = lib.nn.BatchNorm1d(2).load_state_dict(dict(sd))
        try:
            sd._metadata = OrderedDict({"": {"version": 2}})
            lib.nn.BatchNorm1d(2).load_state_dict(sd)
            current = "loaded"
        except RuntimeError as e:
            current = str(e)
        meta = bn.state_dict()._metadata[""]["version"]
        return (
            list(result.missing_keys),
            list(unversioned.missing_keys),
            current,
            fresh.num_batches_tracked.item(),
            meta,
        )

    got, expected = run_both(prog)
    assert got == expected
    assert got[0] == [] and got[3] == 0 and got[4] == 2 and "num_batches_tracked" in got[2]


def test_instance_norm_rejects_running_stats_of_old_checkpoints():
    def prog(lib):
        sd = {"running_mean": lib.zeros(2), "running_var": lib.ones(2)}
        try:
            lib.nn.InstanceNorm1d(2).load_state_dict(sd)
        except RuntimeError as e:
            return str(e)

    got, expected = run_both(prog)
    assert got == expected and "Unexpected running stats buffer(s)" in got


@pytest.mark.parametrize(
    "call",
    [
        lambda nn, t: nn.BatchNorm1d(2)(t.ones(2, 2, 2, 2)),
        lambda nn, t: nn.BatchNorm1d(2)(t.ones(2)),
        lambda nn, t: nn.BatchNorm2d(2)(t.ones(2, 2, 2)),
        lambda nn, t: nn.BatchNorm1d(2)(t.ones(1, 2)),
        lambda nn, t: nn.BatchNorm1d(3, affine=False)(t.ones(4, 2)),
        lambda nn, t: nn.InstanceNorm1d(2)(t.ones(2, 2, 2, 2)),
        lambda nn, t: nn.InstanceNorm2d(2)(t.ones(2, 2)),
        lambda nn, t: nn.InstanceNorm1d(3, affine=True)(t.ones(2, 2, 4)),
        lambda nn, t: nn.InstanceNorm1d(2)(t.ones(2, 2, 1)),
    ],
)
def test_norm_errors(call):
    assert_same_error(lambda lib: call(lib.nn, lib))


def test_instance_norm_warns_on_a_channel_mismatch_without_affine(ng):
    with pytest.warns(UserWarning, match="input's size at dim=1 does not match num_features"):
        out = ng.nn.InstanceNorm1d(3)(ng.tensor([[[1.0, 3.0], [2.0, 2.0]]]))
    assert to_np(out).ravel().tolist() == pytest.approx([-1.0, 1.0, 0.0, 0.0], abs=1e-4)


EMBEDDINGS = [
    (lambda nn, d: nn.Embedding(5, 3, dtype=d), np.array([[0, 4, 4], [1, 2, 0]])),
    (lambda nn, d: nn.Embedding(5, 2, padding_idx=-2, scale_grad_by_freq=True, dtype=d), np.array([3, 1, 3, 3])),
    (lambda nn, d: nn.Embedding(4, 3, max_norm=1.0, norm_type=1.0, dtype=d), np.array([[2, 0], [2, 3]])),
]


@pytest.mark.parametrize("build,index", EMBEDDINGS)
def test_embedding_matches_torch(build, index):
    # max_norm renormalizes the looked-up rows in place: the state dicts after the
    # call match too.
    assert_module_matches_torch(lambda lib: build(lib.nn, lib.float64), [index])


def test_embedding_init_padding_row_and_from_pretrained(ng):
    ng.manual_seed(0)
    emb = ng.nn.Embedding(200, 40, padding_idx=3)
    w = to_np(emb.weight)
    assert emb.weight.requires_grad and emb.weight.dtype == ng.float32 and emb.padding_idx == 3
    assert np.all(w[3] == 0)
    rest = np.delete(w, 3, axis=0)
    assert abs(rest.mean()) < 0.05 and abs(rest.std() - 1.0) < 0.05  # N(0, 1)
    emb(ng.tensor([3, 3, 1])).sum().backward()
    assert np.all(to_np(emb.weight.grad)[3] == 0) and np.all(to_np(emb.weight.grad)[1] == 1)
    table = ng.tensor([[1.0, 2.0], [3.0, 4.0]])
    frozen = ng.nn.Embedding.from_pretrained(table)
    assert frozen.weight.requires_grad is False and frozen.weight.data_ptr() == table.data_ptr()
    trainable = ng.nn.Embedding.from_pretrained(table, freeze=False, padding_idx=0)
    assert trainable.weight.requires_grad and repr(trainable) == "Embedding(2, 2, padding_idx=0)"
    assert trainable.weight.tolist() == [[1.0, 2.0], [3.0, 4.0]]  # from_pretrained does not zero the row


@pytest.mark.parametrize(
    "call",
    [
        lambda nn, t: nn.Embedding(3, 2, padding_idx=3),
        lambda nn, t: nn.Embedding(3, 2, padding_idx=-4),
        lambda nn, t: nn.Embedding(3, 2, _weight=t.ones(2, 2)),
        lambda nn, t: nn.Embedding.from_pretrained(t.ones(3)),
        lambda nn, t: nn.Embedding(3, 2)(t.tensor([0.0, 1.0])),
        lambda nn, t: nn.Embedding(3, 2)(t.tensor([3])),
    ],
)
def test_embedding_errors(call):
    assert_same_error(lambda lib: call(lib.nn, lib), length=40)


P = RNG.uniform(0.05, 0.95, (3, 4))
Y01 = (RNG.uniform(size=(3, 4)) > 0.5).astype(np.float64)
CLASSES = np.array([1, 0, 3])

LOSSES = [
    (lambda nn, t: nn.L1Loss(), [_x(3, 4), _x(3, 4)]),
    (lambda nn, t: nn.L1Loss(reduction="sum"), [_x(3, 4), _x(4)]),
    (lambda nn, t: nn.MSELoss(reduction="none"), [_x(2, 3), _x(2, 3)]),
    (lambda nn, t: nn.MSELoss(size_average=False), [_x(2, 3), _x(2, 3)]),
    (lambda nn, t: nn.SmoothL1Loss(beta=0.5), [_x(3, 4), _x(3, 4)]),
    (lambda nn, t: nn.HuberLoss(reduction="sum", delta=0.7), [_x(3, 4), _x(3, 4)]),
    (lambda nn, t: nn.SoftMarginLoss(), [_x(3, 4), np.sign(_x(3, 4))], [True, False]),
    (lambda nn, t: nn.BCELoss(), [P, Y01]),
    (lambda nn, t: nn.BCELoss(weight=t.tensor([1.0, 2.0, 0.5, 1.0], dtype=t.float64), reduce=False), [P, Y01]),
    (lambda nn, t: nn.BCEWithLogitsLoss(), [_x(3, 4), Y01]),
    (
        lambda nn, t: nn.BCEWithLogitsLoss(
            weight=t.tensor([[2.0], [1.0], [0.5]], dtype=t.float64),
            pos_weight=t.tensor([1.0, 3.0, 0.5, 2.0], dtype=t.float64),
        ),
        [_x(3, 4), Y01],
    ),
    (lambda nn, t: nn.CrossEntropyLoss(), [_x(3, 4), CLASSES]),
    (
        lambda nn, t: nn.CrossEntropyLoss(
            weight=t.tensor([1.0, 2.0, 0.5, 1.0], dtype=t.float64), ignore_index=0, label_smoothing=0.1
        ),
        [_x(3, 4), CLASSES],
    ),
    (lambda nn, t: nn.CrossEntropyLoss(reduction="sum"), [_x(3, 4), P / P.sum(1, keepdims=True)]),
    (
        lambda nn, t: nn.CrossEntropyLoss(size_average=True, reduce=False),
        [_x(2, 4, 3), np.array([[0, 3, 1], [2, 2, 1]])],
    ),
    (lambda nn, t: nn.NLLLoss(), [np.log(P), CLASSES]),
    (
        lambda nn, t: nn.NLLLoss(weight=t.tensor([1.0, 0.0, 2.0, 1.0], dtype=t.float64), ignore_index=3),
        [_x(3, 4), CLASSES],
    ),
    (lambda nn, t: nn.KLDivLoss(reduction="batchmean"), [np.log(P), P[::-1].copy()]),
    (lambda nn, t: nn.KLDivLoss(reduction="sum", log_target=True), [np.log(P), np.log(P[::-1].copy())]),
    (lambda nn, t: nn.PoissonNLLLoss(), [_x(3, 4), RNG.poisson(2.0, (3, 4)).astype(np.float64)]),
    (lambda nn, t: nn.PoissonNLLLoss(log_input=False, full=True, eps=1e-6), [P, RNG.poisson(2.0, (3, 4)) + 0.0]),
    (lambda nn, t: nn.GaussianNLLLoss(), [_x(3, 4), _x(3, 4), P]),
    (lambda nn, t: nn.GaussianNLLLoss(full=True, eps=1e-3, reduction="none"), [_x(3, 4), _x(3, 4), P[:, :1].copy()]),
]


@pytest.mark.filterwarnings("ignore:size_average and reduce args will be deprecated")
@pytest.mark.filterwarnings("ignore:Using a target size")
@pytest.mark.parametrize("case", LOSSES)
def test_losses_match_torch(case):
    build, inputs, *flags = case
    assert_module_matches_torch(lambda lib: build(lib.nn, lib), inputs, requires_grad=flags[0] if flags else None)


def test_loss_settings_buffers_and_legacy_arguments(ng):
    with pytest.warns(UserWarning, match="please use reduction='sum' instead"):
        assert ng.nn.NLLLoss(size_average=False).reduction == "sum"
    with pytest.warns(UserWarning, match="please use reduction='none' instead"):
        assert ng.nn.L1Loss(reduce=False, reduction="mean").reduction == "none"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ng.nn.SmoothL1Loss(reduction="sum").reduction == "sum"
    ce = ng.nn.CrossEntropyLoss()
    assert ce.weight is None and ce.ignore_index == -100 and ce.label_smoothing == 0.0 and dict(ce.state_dict()) == {}
    assert ng.nn.CrossEntropyLoss.__constants__ == ["ignore_index", "reduction", "label_smoothing"]
    bce = ng.nn.BCEWithLogitsLoss(weight=ng.ones(2), pos_weight=ng.ones(2))
    assert [n for n, _ in bce.named_buffers()] == ["weight", "pos_weight"]
    assert list(bce.double().state_dict()) == ["weight", "pos_weight"] and bce.weight.dtype == ng.float64
    assert ng.nn.HuberLoss().delta == 1.0 and ng.nn.GaussianNLLLoss().eps == 1e-6
    assert ng.nn.PoissonNLLLoss().log_input is True and ng.nn.KLDivLoss().log_target is False


@pytest.mark.parametrize(
    "call",
    [
        lambda nn, t: nn.HuberLoss(delta="1"),
        lambda nn, t: nn.MSELoss(reduction="avg")(t.ones(2), t.ones(2)),
        lambda nn, t: nn.GaussianNLLLoss(reduction="none")(t.ones(2, 3), t.ones(2, 3), t.ones(3, 2)),
        lambda nn, t: nn.GaussianNLLLoss(1.0),
        lambda nn, t: nn.CrossEntropyLoss()(t.ones(2, 3), t.tensor([0, 3])),
        lambda nn, t: nn.NLLLoss(weight=t.ones(2))(t.ones(2, 3), t.tensor([0, 1])),
        lambda nn, t: nn.BCELoss()(t.ones(2), t.ones(3)),
    ],
)
def test_loss_errors(call):
    assert_same_error(lambda lib: call(lib.nn, lib), length=40)


def test_small_cnn_trains_as_torch():
    """Conv2d-BatchNorm2d-ReLU-MaxPool2d-Flatten-Linear, three hand-written SGD
    steps from torch's initial weights: losses, weights and running statistics
    stay torch's."""
    rng = np.random.default_rng(5)
    images, labels = rng.standard_normal((4, 1, 6, 6)), np.array([0, 2, 1, 2])

    def build(lib):
        nn = lib.nn
        return nn.Sequential(
            nn.Conv2d(1, 3, 3, padding=1, dtype=lib.float64),
            nn.BatchNorm2d(3, dtype=lib.float64),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(27, 3, dtype=lib.float64),
        )

    recorded = []

    def train(model, x, y):
        lib = __import__(type(model).__module__.split(".")[0])
        loss_fn, losses = lib.nn.CrossEntropyLoss(), []
        for _ in range(3):
            model.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            with lib.no_grad():
                for p in model.parameters():
                    p.data -= 0.5 * p.grad
            losses.append(loss.item())
        recorded.append(losses)
        return lib.tensor(losses, dtype=lib.float64)

    model, ref = assert_module_matches_torch(build, [images, labels], forward=train)
    assert model[1].num_batches_tracked.item() == 3 and ref[1].num_batches_tracked.item() == 3
    assert recorded[0] == pytest.approx(recorded[1]) and recorded[0][2] < recorded[0][0]  # it trained
