"""npgrad.nn.functional's losses against torch.

Values, nodes, saved state, gradients and second order of each loss are compared
through op_specs (``LOSSES``); here: the reductions, class weights, ignore_index,
label smoothing, class-probability and K-dimensional targets, torch's legacy
``size_average``/``reduce`` arguments, its warnings and its errors.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from oracle import assert_same_error, assert_same_result, from_np, run_both

RNG = np.random.default_rng(7)
LOGITS = RNG.normal(size=(4, 5))
LOGITS_4D = RNG.normal(size=(2, 3, 2, 2))
LOGITS_3D = RNG.normal(size=(2, 3, 4))
PROBS = RNG.dirichlet(np.ones(5), size=4)
X = RNG.uniform(0.1, 0.9, size=(3, 4))
Y = RNG.uniform(0.1, 0.9, size=(3, 4))
W5 = np.array([1.0, 2.0, 0.5, 1.5, 0.25])


def _F(lib):
    return lib.nn.functional


def _t(lib, a, requires_grad=False, dtype=None):
    t = from_np(lib, np.asarray(a), requires_grad)
    return t if dtype is None else t.to(dtype)


def _idx(lib, values):
    return lib.tensor(values)


# Each call: lib -> (loss, input requiring grad). Loss and input gradient must match.
CALLS = {
    "mse_none": lambda lib, x: _F(lib).mse_loss(x, _t(lib, Y), reduction="none"),
    "mse_weight_mean": lambda lib, x: _F(lib).mse_loss(x, _t(lib, Y), weight=_t(lib, Y)),
    "l1_sum": lambda lib, x: _F(lib).l1_loss(x, _t(lib, Y), reduction="sum"),
    "l1_weight": lambda lib, x: _F(lib).l1_loss(x, _t(lib, Y), weight=_t(lib, Y)),
    "smooth_l1_beta0": lambda lib, x: _F(lib).smooth_l1_loss(x, _t(lib, Y), beta=0.0),
    "smooth_l1_float32": lambda lib, x: _F(lib).smooth_l1_loss(x.float(), _t(lib, Y).float(), beta=0.2),
    "huber_weight_none": lambda lib, x: _F(lib).huber_loss(x, _t(lib, Y), "none", 0.1, weight=_t(lib, X)),
    "mse_promotes_to_float64": lambda lib, x: _F(lib).mse_loss(x.float(), _t(lib, Y)),
    "soft_margin_none": lambda lib, x: _F(lib).soft_margin_loss(x, _t(lib, np.sign(Y - 0.5)), reduction="none"),
    "bce_sum_float32": lambda lib, x: _F(lib).binary_cross_entropy(x.float(), _t(lib, Y).float(), reduction="sum"),
    "bce_weight_broadcast": lambda lib, x: _F(lib).binary_cross_entropy(x, _t(lib, Y), _t(lib, [1.0, 2.0, 0.0, 3.0])),
    "bce_at_0_and_1": lambda lib, x: _F(lib).binary_cross_entropy(x * 0, _t(lib, Y).round()),
    "bce_logits_pos_weight_none": lambda lib, x: _F(lib).binary_cross_entropy_with_logits(
        x * 20 - 10, _t(lib, Y), reduction="none", pos_weight=_t(lib, [3.0, 1.0, 0.5, 2.0])
    ),
    "nll_weight_mean": lambda lib, x: _F(lib).nll_loss(x, _idx(lib, [0, 4, 2, 2]), _t(lib, W5)),
    "nll_all_ignored_is_nan": lambda lib, x: _F(lib).nll_loss(x, _idx(lib, [1, 1, 1, 1]), ignore_index=1),
    "nll_ignore_none": lambda lib, x: _F(lib).nll_loss(x, _idx(lib, [0, -100, 2, 3]), reduction="none"),
    "ce_float32": lambda lib, x: _F(lib).cross_entropy(x.float(), _idx(lib, [0, 4, 2, 2])),
    "ce_weight_ignore": lambda lib, x: _F(lib).cross_entropy(x, _idx(lib, [0, 4, 2, 2]), _t(lib, W5), ignore_index=2),
    "ce_unbatched": lambda lib, x: _F(lib).cross_entropy(x[0], _idx(lib, 3)),
    "ce_uint8_target": lambda lib, x: _F(lib).cross_entropy(x, lib.tensor([0, 4, 2, 2], dtype=lib.uint8)),
    "ce_probabilities": lambda lib, x: _F(lib).cross_entropy(x, _t(lib, PROBS)),
    "ce_probabilities_weight_smoothing_none": lambda lib, x: _F(lib).cross_entropy(
        x, _t(lib, PROBS), _t(lib, W5), reduction="none", label_smoothing=0.2
    ),
    "ce_label_smoothing": lambda lib, x: _F(lib).cross_entropy(x, _idx(lib, [0, 4, 2, 2]), label_smoothing=0.1),
    "ce_label_smoothing_weight_ignore": lambda lib, x: _F(lib).cross_entropy(
        x, _idx(lib, [0, 4, 2, 2]), _t(lib, W5), ignore_index=4, label_smoothing=0.3
    ),
    "ce_label_smoothing_sum": lambda lib, x: _F(lib).cross_entropy(
        x, _idx(lib, [0, 4, 2, 2]), reduction="sum", label_smoothing=0.3
    ),
    "kl_div_none": lambda lib, x: _F(lib).kl_div(x.log_softmax(1), _t(lib, PROBS), reduction="none"),
    "kl_div_sum_log_target": lambda lib, x: _F(lib).kl_div(x, _t(lib, PROBS).log(), reduction="sum", log_target=True),
    "poisson_rate": lambda lib, x: _F(lib).poisson_nll_loss(x + 1, _t(lib, PROBS) * 4, log_input=False),
    "gaussian_float_var": lambda lib, x: _F(lib).gaussian_nll_loss(x, _t(lib, PROBS), 0.5, full=True),
    "gaussian_homoscedastic": lambda lib, x: _F(lib).gaussian_nll_loss(
        x, _t(lib, PROBS), _t(lib, [1.0, 2.0, 0.5, 1.0])
    ),
}
INPUTS = {name: LOGITS if name.split("_")[0] in ("nll", "ce", "kl", "poisson", "gaussian") else X for name in CALLS}


@pytest.mark.usefixtures("torch_ref")
@pytest.mark.parametrize("name", sorted(CALLS))
def test_values_and_gradients_match_torch(name):
    def run(lib):
        x = _t(lib, INPUTS[name], requires_grad=True)
        out = CALLS[name](lib, x)
        (grad,) = lib.autograd.grad(out.sum(), x)
        return out.detach(), grad

    (got, got_grad), (expected, expected_grad) = run_both(run)
    assert_same_result(got, expected)
    assert_same_result(got_grad, expected_grad)


# K-dimensional inputs: (N, C, d1, ...) with (N, d1, ...) targets.
KDIM = {
    "nll_4d_weight": lambda lib, x: _F(lib).nll_loss(
        x, _idx(lib, [[[0, 2], [1, 1]], [[2, 2], [0, 1]]]), _t(lib, [1.0, 2.0, 3.0])
    ),
    "nll_4d_none": lambda lib, x: _F(lib).nll_loss(
        x, _idx(lib, [[[0, 2], [1, 1]], [[2, 2], [0, 1]]]), reduction="none"
    ),
    "ce_3d_ignore": lambda lib, x: _F(lib).cross_entropy(x[:, :, :, 0], _idx(lib, [[0, 2], [1, -100]])),
    "ce_5d_none": lambda lib, x: _F(lib).cross_entropy(
        x.unsqueeze(-1), _idx(lib, [[[[0], [2]], [[1], [1]]], [[[2], [2]], [[0], [1]]]]), reduction="none"
    ),
    "ce_4d_label_smoothing": lambda lib, x: _F(lib).cross_entropy(
        x, _idx(lib, [[[0, 2], [1, 1]], [[2, 2], [0, 1]]]), label_smoothing=0.2
    ),
    "ce_4d_probabilities": lambda lib, x: _F(lib).cross_entropy(
        x, x.detach().softmax(1) * 0.5 + 0.1, _t(lib, [1.0, 2.0, 3.0])
    ),
}


@pytest.mark.usefixtures("torch_ref")
@pytest.mark.parametrize("name", sorted(KDIM))
def test_k_dimensional_targets_match_torch(name):
    def run(lib):
        x = _t(lib, LOGITS_4D, requires_grad=True)
        out = KDIM[name](lib, x)
        (grad,) = lib.autograd.grad(out.sum(), x)
        return out.detach(), grad, out.grad_fn.name()

    (got, got_grad, got_node), (expected, expected_grad, expected_node) = run_both(run)
    assert_same_result(got, expected)
    assert_same_result(got_grad, expected_grad)
    if "probabilities" not in name:  # torch's composite divides by a Scalar (DivBackward1)
        assert got_node == expected_node


@pytest.mark.parametrize(
    ("size_average", "reduce", "reduction"),
    [(False, None, "sum"), (None, False, "none"), (True, True, "mean")],
)
def test_legacy_arguments_warn_and_choose_the_reduction(ng, size_average, reduce, reduction):
    x, t = _t(ng, X), _t(ng, Y)
    f = _F(ng)
    for loss in (f.mse_loss, f.l1_loss, f.soft_margin_loss, f.binary_cross_entropy):
        with pytest.warns(UserWarning, match=f"please use reduction='{reduction}' instead"):
            got = loss(x, t, size_average=size_average, reduce=reduce)
        expected = loss(x, t, reduction=reduction)
        assert_same_result(got, expected)
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        got = f.nll_loss(_t(ng, LOGITS), _idx(ng, [0, 1, 2, 3]), size_average=size_average, reduce=reduce)
    assert_same_result(got, f.nll_loss(_t(ng, LOGITS), _idx(ng, [0, 1, 2, 3]), reduction=reduction))


@pytest.mark.parametrize(
    "loss",
    [
        "mse_loss",
        "l1_loss",
        "smooth_l1_loss",
        "huber_loss",
        "soft_margin_loss",
        "nll_loss",
        "cross_entropy",
        "kl_div",
        "binary_cross_entropy",
        "poisson_nll_loss",
    ],
)
def test_a_bad_reduction_string_is_torch_value_error(ng, loss):
    target = _idx(ng, [0, 1, 2]) if loss in ("nll_loss", "cross_entropy") else _t(ng, X[:, 0])
    with pytest.raises(ValueError, match="^foo is not a valid value for reduction$"):
        getattr(_F(ng), loss)(
            _t(ng, X[:, :3]) if loss in ("nll_loss", "cross_entropy") else _t(ng, X[:, 0]), target, reduction="foo"
        )


@pytest.mark.parametrize("loss", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
def test_a_target_of_another_size_warns_and_broadcasts(ng, torch_ref, loss):
    def run(lib):
        with pytest.warns(
            UserWarning,
            match=r"Using a target size \(torch.Size\(\[4\]\)\) that is different to the input size \(torch.Size\(\[3, 4\]\)\)",
        ):
            return getattr(_F(lib), loss)(_t(lib, X), _t(lib, Y[0]), reduction="none")

    got, expected = run_both(run)
    assert_same_result(got, expected)


def test_kl_div_mean_warns_and_batchmean_divides_by_the_batch(ng):
    x, t = _t(ng, LOGITS).log_softmax(1), _t(ng, PROBS)
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        mean = _F(ng).kl_div(x, t)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        batchmean = _F(ng).kl_div(x, t, reduction="batchmean")
    assert_same_result(batchmean, mean * 5)


def test_mse_loss_differentiates_the_target(ng):
    x, t = _t(ng, X, True), _t(ng, Y, True)
    gx, gt = ng.autograd.grad(_F(ng).mse_loss(x, t, reduction="sum"), [x, t])
    assert_same_result(gx, -gt)
    assert_same_result(gx, 2 * (x - t).detach())


# Each: (call, key phrase of torch's message or None for its first 60 characters).
ERRORS = {
    "batch_size": (lambda lib: _F(lib).cross_entropy(_t(lib, LOGITS), _idx(lib, [1, 0])), None),
    "target_out_of_bounds": (lambda lib: _F(lib).nll_loss(_t(lib, LOGITS), _idx(lib, [1, 0, 5, 2])), None),
    "negative_target": (lambda lib: _F(lib).cross_entropy(_t(lib, LOGITS), _idx(lib, [1, -1, 0, 2])), None),
    "2d_target_out_of_bounds": (
        lambda lib: _F(lib).nll_loss(_t(lib, LOGITS_4D), _idx(lib, [[[0, 7], [0, 0]]] * 2)),
        None,
    ),
    "multi_target": (lambda lib: _F(lib).nll_loss(_t(lib, LOGITS), _idx(lib, [[1, 0, 1, 2]] * 4)), None),
    "int32_target": (lambda lib: _F(lib).nll_loss(_t(lib, LOGITS), lib.tensor([1, 0, 1, 2], dtype=lib.int32)), None),
    "weight_size": (lambda lib: _F(lib).nll_loss(_t(lib, LOGITS), _idx(lib, [1, 0, 1, 2]), _t(lib, W5[:3])), None),
    "weight_dtype": (lambda lib: _F(lib).nll_loss(_t(lib, LOGITS), _idx(lib, [1, 0, 1, 2]), _t(lib, W5).float()), None),
    "weight_requires_grad": (
        lambda lib: _F(lib).nll_loss(_t(lib, LOGITS), _idx(lib, [1, 0, 1, 2]), _t(lib, W5, True)),
        "is not differentiable with respect to argument 'weight'",
    ),
    "integer_input": (lambda lib: _F(lib).nll_loss(lib.ones(2, 3, dtype=lib.int64), _idx(lib, [1, 0])), None),
    "0d_input": (lambda lib: _F(lib).nll_loss(_t(lib, 1.0), _idx(lib, 0)), None),
    "kdim_target_size": (lambda lib: _F(lib).nll_loss(_t(lib, LOGITS_3D), _idx(lib, [[0] * 5] * 2)), None),
    "2d_target_size": (lambda lib: _F(lib).nll_loss(_t(lib, LOGITS_4D), _idx(lib, [[[0, 0, 0]] * 2] * 2)), None),
    "label_smoothing": (
        lambda lib: _F(lib).cross_entropy(_t(lib, LOGITS), _idx(lib, [1, 0, 1, 2]), label_smoothing=1.5),
        None,
    ),
    "probabilities_ignore_index": (
        lambda lib: _F(lib).cross_entropy(_t(lib, LOGITS), _t(lib, PROBS), ignore_index=1),
        None,
    ),
    "probabilities_integer": (
        lambda lib: _F(lib).cross_entropy(_t(lib, LOGITS), lib.ones(4, 5, dtype=lib.int64)),
        None,
    ),
    "bce_input_range": (lambda lib: _F(lib).binary_cross_entropy(_t(lib, X) * 2, _t(lib, Y)), None),
    "bce_target_range": (lambda lib: _F(lib).binary_cross_entropy(_t(lib, X), _t(lib, Y) - 1), None),
    "bce_size": (lambda lib: _F(lib).binary_cross_entropy(_t(lib, X), _t(lib, Y[0])), None),
    "bce_dtype": (lambda lib: _F(lib).binary_cross_entropy(_t(lib, X), _t(lib, Y).float()), None),
    "bce_integer": (
        lambda lib: _F(lib).binary_cross_entropy(lib.ones(3, dtype=lib.int64), lib.ones(3, dtype=lib.int64)),
        None,
    ),
    "bce_logits_size": (lambda lib: _F(lib).binary_cross_entropy_with_logits(_t(lib, X), _t(lib, Y[0])), None),
    "bce_logits_pos_weight_grad": (
        lambda lib: _F(lib).binary_cross_entropy_with_logits(_t(lib, X), _t(lib, Y), pos_weight=_t(lib, Y[0], True)),
        None,
    ),
    "mse_integer": (lambda lib: _F(lib).mse_loss(lib.ones(3, dtype=lib.int64), lib.ones(3, dtype=lib.int64)), None),
    "mse_shapes": (lambda lib: _F(lib).mse_loss(_t(lib, X), _t(lib, Y[:2])), "must match the size of tensor b"),
    "mse_weight_size": (lambda lib: _F(lib).mse_loss(_t(lib, X), _t(lib, Y), weight=_t(lib, Y[0])), None),
    "smooth_l1_beta": (lambda lib: _F(lib).smooth_l1_loss(_t(lib, X), _t(lib, Y), beta=-1.0), None),
    "huber_delta": (lambda lib: _F(lib).huber_loss(_t(lib, X), _t(lib, Y), delta=0.0), None),
    "soft_margin_target_grad": (lambda lib: _F(lib).soft_margin_loss(_t(lib, X), _t(lib, Y, True)), None),
    "gaussian_negative_var": (lambda lib: _F(lib).gaussian_nll_loss(_t(lib, X), _t(lib, Y), _t(lib, Y) - 1), None),
    "gaussian_var_size": (lambda lib: _F(lib).gaussian_nll_loss(_t(lib, X), _t(lib, Y), _t(lib, Y[:2, :2])), None),
}


@pytest.mark.filterwarnings("ignore:Using a target size")
@pytest.mark.usefixtures("torch_ref")
@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    fn, key = ERRORS[name]
    assert_same_error(fn, key)


def test_tensors_and_the_engine_work_after_an_error(ng):
    x = _t(ng, LOGITS, True)
    with pytest.raises(IndexError):
        _F(ng).cross_entropy(x, _idx(ng, [9, 0, 0, 0]))
    _F(ng).cross_entropy(x, _idx(ng, [4, 0, 0, 0])).backward()
    assert x.grad is not None and tuple(x.grad.shape) == (4, 5)
