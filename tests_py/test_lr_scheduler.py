"""npgrad.optim.lr_scheduler against torch's: the learning rates (and
OneCycleLR's momentum) over 20 steps for every scheduler, chained and
sequential schedules, ReduceLROnPlateau on a metric sequence, the closed
form of step(epoch), state_dict round trips, warnings and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from oracle import assert_same_error, run_both

STEPS = 20
METRICS = [1.0, 0.9, 0.95, 0.95, 0.96, 0.8, 0.85, 0.85, 0.85, 0.9, 0.7, 0.7, 0.71, 0.72, 0.73, 0.74, 0.5, 0.6, 0.6, 0.6]


def _optimizer(lib, name="SGD"):
    w = lib.nn.Parameter(lib.ones(2))
    b = lib.nn.Parameter(lib.ones(1))
    if name == "Adam":
        return lib.optim.Adam([{"params": [w]}, {"params": [b], "lr": 0.05}], lr=0.1)
    return lib.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.05}], lr=0.1, momentum=0.9)


def _lam(epoch):
    return 0.95**epoch


def _sequential(lib, opt):
    s = lib.optim.lr_scheduler
    warmup = s.LinearLR(opt, start_factor=0.1, total_iters=4)
    cosine = s.CosineAnnealingLR(opt, T_max=6)
    step = s.StepLR(opt, step_size=3, gamma=0.5)
    return s.SequentialLR(opt, [warmup, cosine, step], milestones=[5, 12])


def _chained(lib, opt):
    s = lib.optim.lr_scheduler
    return s.ChainedScheduler([s.ConstantLR(opt, factor=0.5, total_iters=4), s.ExponentialLR(opt, gamma=0.9)])


SCHEDULERS = {
    "LambdaLR": lambda lib, opt: lib.optim.lr_scheduler.LambdaLR(opt, [_lam, lambda e: 1.0 / (e + 1)]),
    "MultiplicativeLR": lambda lib, opt: lib.optim.lr_scheduler.MultiplicativeLR(opt, lambda e: 0.9),
    "StepLR": lambda lib, opt: lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.3),
    "MultiStepLR": lambda lib, opt: lib.optim.lr_scheduler.MultiStepLR(opt, [2, 5, 5, 11], gamma=0.5),
    "ConstantLR": lambda lib, opt: lib.optim.lr_scheduler.ConstantLR(opt, factor=0.3, total_iters=4),
    "LinearLR": lambda lib, opt: lib.optim.lr_scheduler.LinearLR(opt, start_factor=0.2, end_factor=0.9, total_iters=7),
    "ExponentialLR": lambda lib, opt: lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.87),
    "CosineAnnealingLR": lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6, eta_min=0.01),
    "CosineAnnealingWarmRestarts": lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        opt, T_0=3, T_mult=2, eta_min=0.001
    ),
    "PolynomialLR": lambda lib, opt: lib.optim.lr_scheduler.PolynomialLR(opt, total_iters=12, power=2.0),
    "OneCycleLR": lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=[1.0, 0.5], total_steps=STEPS),
    "OneCycleLR-3phase-linear": lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=1.0, epochs=4, steps_per_epoch=5, three_phase=True, anneal_strategy="linear"
    ),
    "CyclicLR": lambda lib, opt: lib.optim.lr_scheduler.CyclicLR(
        opt, base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=3, step_size_down=5
    ),
    "CyclicLR-triangular2": lambda lib, opt: lib.optim.lr_scheduler.CyclicLR(
        opt, base_lr=0.01, max_lr=0.1, step_size_up=2, mode="triangular2", base_momentum=[0.7, 0.75]
    ),
    "CyclicLR-exp_range": lambda lib, opt: lib.optim.lr_scheduler.CyclicLR(
        opt, base_lr=0.01, max_lr=0.1, step_size_up=4, mode="exp_range", gamma=0.9, cycle_momentum=False
    ),
    "CyclicLR-scale_fn": lambda lib, opt: lib.optim.lr_scheduler.CyclicLR(
        opt, base_lr=0.01, max_lr=0.1, step_size_up=2, scale_fn=lambda x: 0.9**x, scale_mode="iterations"
    ),
    "SequentialLR": _sequential,
    "ChainedScheduler": _chained,
    "ReduceLROnPlateau": lambda lib, opt: lib.optim.lr_scheduler.ReduceLROnPlateau(
        opt, patience=1, cooldown=1, factor=0.5, min_lr=[0.01, 0.02]
    ),
    "ReduceLROnPlateau-max-abs": lambda lib, opt: lib.optim.lr_scheduler.ReduceLROnPlateau(
        opt, mode="max", threshold_mode="abs", threshold=0.01, patience=0, factor=0.7
    ),
}


def _run(lib, name, optimizer="SGD", steps=STEPS, start=0, sched=None, opt=None):
    """The lrs (and momentum or beta1) after each of ``steps`` steps."""
    if opt is None:
        opt = _optimizer(lib, optimizer)
        sched = SCHEDULERS[name](lib, opt)
    out = [(sched.get_last_lr(), [g["lr"] for g in opt.param_groups])]
    for i in range(start, start + steps):
        opt.step()
        if name.startswith("ReduceLROnPlateau"):
            sched.step(METRICS[i])
        else:
            sched.step()
        momenta = [g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups]
        out.append((sched.get_last_lr(), [g["lr"] for g in opt.param_groups], momenta))
    return out, opt, sched


def _assert_same_schedule(got, expected):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        for a, b in zip(g, e):
            np.testing.assert_allclose(np.array(a, dtype=float), np.array(b, dtype=float), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_schedule_matches_torch(name):
    (got, *_), (expected, *_) = run_both(lambda lib: _run(lib, name))
    _assert_same_schedule(got, expected)


@pytest.mark.parametrize("name", ["OneCycleLR", "CyclicLR"])
def test_momentum_cycling_moves_adams_beta1(ng, torch_ref, name):
    got, expected = _run(ng, name, "Adam")[0], _run(torch_ref, name, "Adam")[0]
    _assert_same_schedule(got, expected)
    if name == "CyclicLR":
        assert {round(step[2][0], 12) for step in got[1:]} >= {0.8, 0.9}
        return
    beta1s = [step[2][0] for step in got[1:]]
    assert beta1s[0] < 0.95 and min(beta1s) == pytest.approx(0.85) and beta1s[-2] == pytest.approx(0.95)


@pytest.mark.parametrize(
    "name", ["StepLR", "CosineAnnealingLR", "SequentialLR", "LambdaLR", "ReduceLROnPlateau", "CyclicLR-exp_range"]
)
def test_state_dict_round_trip(ng, name):
    full, *_ = _run(ng, name)
    first, opt, sched = _run(ng, name, steps=8)
    opt_sd, sched_sd = opt.state_dict(), sched.state_dict()
    opt2 = _optimizer(ng)
    sched2 = SCHEDULERS[name](ng, opt2)
    opt2.load_state_dict(opt_sd)
    sched2.load_state_dict(sched_sd)
    rest, *_ = _run(ng, name, steps=STEPS - 8, start=8, sched=sched2, opt=opt2)
    _assert_same_schedule(first + rest[1:], full)


def test_state_dict_layout_matches_torch():
    def run(lib):
        opt = _optimizer(lib)
        sd = _sequential(lib, opt).state_dict()
        return sorted(sd), sorted(sd["_schedulers"][1]), sd["_milestones"], sd["last_epoch"]

    got, expected = run_both(run)
    assert got == expected


def test_initial_lr_and_base_lrs(ng):
    opt = _optimizer(ng)
    sched = ng.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    assert [g["initial_lr"] for g in opt.param_groups] == sched.base_lrs == [0.1, 0.05]
    assert sched.last_epoch == 0 and sched.get_last_lr() == [0.1, 0.05]


def test_closed_form_with_an_explicit_epoch(ng, torch_ref):
    def run(lib):
        opt = _optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
        opt.step()
        with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)` was not necessary"):
            sched.step(7)
        return sched.get_last_lr(), sched.last_epoch

    assert run(ng) == run(torch_ref) == ([0.025, 0.0125], 7)


def test_step_before_optimizer_step_warns(ng):
    sched = ng.optim.lr_scheduler.StepLR(_optimizer(ng), step_size=1)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step\\(\\)`"):
        sched.step()


def test_no_warning_in_the_right_order_and_get_lr_outside_step_warns(ng):
    opt = _optimizer(ng)
    sched = ng.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        sched.step()
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()


def test_overridden_optimizer_step_warns(ng):
    opt = _optimizer(ng)
    sched = ng.optim.lr_scheduler.StepLR(opt, step_size=1)
    opt.step = lambda: None
    with pytest.warns(UserWarning, match="Seems like `optimizer.step\\(\\)` has been overridden"):
        sched.step()


def _sched_error(make):
    def fn(lib):
        make(lib, _optimizer(lib))

    return fn


ERRORS = [
    lambda lib, opt: lib.optim.lr_scheduler.StepLR(3, step_size=1),
    lambda lib, opt: lib.optim.lr_scheduler.ConstantLR(opt, factor=1.5),
    lambda lib, opt: lib.optim.lr_scheduler.LinearLR(opt, start_factor=0),
    lambda lib, opt: lib.optim.lr_scheduler.LinearLR(opt, end_factor=2.0),
    lambda lib, opt: lib.optim.lr_scheduler.LambdaLR(opt, [_lam]),
    lambda lib, opt: lib.optim.lr_scheduler.MultiplicativeLR(opt, 0.5),
    lambda lib, opt: lib.optim.lr_scheduler.StepLR(opt, step_size=1, last_epoch=4),
    lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=0),
    lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=1.5),
    lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2).step(-1),
    lambda lib, opt: lib.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=1.0),
    lambda lib, opt: lib.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="mid"),
    lambda lib, opt: lib.optim.lr_scheduler.ReduceLROnPlateau(opt, threshold_mode="pct"),
    lambda lib, opt: lib.optim.lr_scheduler.ReduceLROnPlateau(opt, min_lr=[0.1]),
    lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0),
    lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=0),
    lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=5, pct_start=1),
    lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=5, anneal_strategy="exp"),
    lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=[1.0], total_steps=5),
    lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(lib.optim.Adagrad(opt.param_groups[0]["params"]), 1.0, 5),
    lambda lib, opt: _one_cycle_past_the_end(lib, opt),
    lambda lib, opt: lib.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, mode="sine"),
    lambda lib, opt: lib.optim.lr_scheduler.CyclicLR(opt, [0.1], 1.0),
    lambda lib, opt: lib.optim.lr_scheduler.CyclicLR(lib.optim.Adagrad(opt.param_groups[0]["params"]), 0.1, 1.0),
    lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(opt, [], milestones=[]),
    lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(
        opt, [lib.optim.lr_scheduler.ExponentialLR(opt, 0.9)], milestones=[3]
    ),
    lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(
        opt, [lib.optim.lr_scheduler.ReduceLROnPlateau(opt)], milestones=[]
    ),
    lambda lib, opt: lib.optim.lr_scheduler.ChainedScheduler([]),
    lambda lib, opt: lib.optim.lr_scheduler.ChainedScheduler([3]),
]


def _one_cycle_past_the_end(lib, opt):
    sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=2)
    for _ in range(3):
        opt.step()
        sched.step()


@pytest.mark.parametrize("make", ERRORS, ids=range(len(ERRORS)))
def test_errors_match_torch(make):
    assert_same_error(_sched_error(make), length=300)
