"""npgrad.optim against torch.optim: each optimizer's trajectory and state over a
few steps (float32 and float64, every option that changes the math), closures,
param groups, state_dict layout and round trip, hooks, zero_grad, repr,
pickling, and the constructors' errors.

The gradients are set from NumPy as a fixed function of the parameters'
current values, so both libraries see the same gradients and only the
optimizers' arithmetic is compared.
"""

from __future__ import annotations

import copy
import importlib
import pickle
import warnings

import numpy as np
import pytest

from oracle import assert_same_error, dtype_name, from_np, run_both, to_np

W0 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])
B0 = np.array([0.1, -0.2])
SCALE_W = np.array([[1.0, 2.0, -0.5], [0.3, -1.5, 0.8]])
SCALE_B = np.array([0.7, -2.0])
STEPS = 7


def _params(lib, dtype="float64"):
    """Three parameters: w and b get gradients, frozen never does."""
    dt = getattr(np, dtype)
    return [
        lib.nn.Parameter(from_np(lib, W0.astype(dt))),
        lib.nn.Parameter(from_np(lib, B0.astype(dt))),
        lib.nn.Parameter(from_np(lib, np.ones(2, dtype=dt))),
    ]


def _set_grads(lib, params):
    # A deterministic gradient: scale * (p - 0.3) + 0.1, computed in NumPy.
    for p, scale in zip(params[:2], (SCALE_W, SCALE_B)):
        value = to_np(p)
        p.grad = from_np(lib, (scale * (value - 0.3) + 0.1).astype(value.dtype))


def _trajectory(lib, name, kwargs, dtype, steps=STEPS):
    params = _params(lib, dtype)
    opt = getattr(lib.optim, name)(params, **kwargs)
    for _ in range(steps):
        _set_grads(lib, params)
        opt.step()
    return params, opt


def _state_np(opt):
    """The packed state: {index: {key: (dtype name, array)}} (plain values as they are)."""
    out = {}
    for index, state in opt.state_dict()["state"].items():
        out[index] = {
            k: (dtype_name(v.dtype), to_np(v)) if hasattr(v, "dtype") else v for k, v in sorted(state.items())
        }
    return out


CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "maximize": True}),
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "maximize": True, "decoupled_weight_decay": True, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "amsgrad": True, "maximize": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "centered": True, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True, "maximize": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.1, "initial_accumulator_value": 0.5, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "maximize": True, "eps": 1e-6}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.5, "weight_decay": 0.1, "maximize": True}),
    ("Adamax", {"lr": 0.05}),
    ("Adamax", {"lr": 0.05, "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {"lr": 0.05}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "momentum_decay": 0.1}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    # betas[1] = 0.9 makes rho_t exceed 5 from step 6: both of RAdam's branches run.
    ("RAdam", {"lr": 0.05, "betas": (0.9, 0.9)}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.05, "betas": (0.8, 0.9), "weight_decay": 0.1, "decoupled_weight_decay": True}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_trajectory_and_state_match_torch(name, kwargs, dtype):
    (params, opt), (t_params, t_opt) = run_both(lambda lib: _trajectory(lib, name, kwargs, dtype))
    rtol, atol = (1e-6, 1e-7) if dtype == "float32" else (1e-12, 1e-15)
    for p, t in zip(params, t_params):
        assert dtype_name(p.dtype) == dtype
        np.testing.assert_allclose(to_np(p), to_np(t), rtol=rtol, atol=atol)
    state, t_state = _state_np(opt), _state_np(t_opt)
    assert state.keys() == t_state.keys()
    # The parameter without a gradient was skipped: no state (Adagrad makes
    # its state in the constructor, so there it is untouched).
    assert 2 not in state or float(state[2]["step"][1]) == 0.0
    for index in state:
        assert state[index].keys() == t_state[index].keys()
        for key, (dt, value) in state[index].items():
            t_dt, t_value = t_state[index][key]
            assert dt == t_dt, key
            np.testing.assert_allclose(value, t_value, rtol=rtol, atol=atol, err_msg=key)
    assert opt.state_dict()["param_groups"] == t_opt.state_dict()["param_groups"]


def test_closure_and_param_groups_with_different_lrs(ng, torch_ref):
    def run(lib):
        w, b, _ = _params(lib)
        target = from_np(lib, np.array([0.2, 0.4]))
        opt = lib.optim.SGD([{"params": [w], "lr": 0.1}, {"params": [b]}], lr=0.01, momentum=0.5)

        def closure():
            opt.zero_grad()
            loss = ((w.sum(1) - target) ** 2).sum() + (b * b).sum()
            loss.backward()
            return loss

        losses = [float(opt.step(closure).detach()) for _ in range(4)]
        assert lib.is_grad_enabled()
        return losses, to_np(w), to_np(b), [g["lr"] for g in opt.param_groups]

    got, expected = run(ng), run(torch_ref)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-12)
    np.testing.assert_allclose(got[2], expected[2], rtol=1e-12)
    assert got[3] == expected[3] == [0.1, 0.01]


def test_step_runs_under_no_grad_and_returns_none_without_closure(ng):
    w = ng.nn.Parameter(ng.ones(2))
    w.grad = ng.ones(2)
    opt = ng.optim.Adam([w])
    assert opt.step() is None
    assert w.grad_fn is None and w.is_leaf and ng.is_grad_enabled()


def test_state_dict_layout_matches_torch(ng, torch_ref):
    def run(lib):
        w, b, frozen = _params(lib)
        opt = lib.optim.Adam([{"params": [w, frozen]}, {"params": [b], "lr": 0.5}], amsgrad=True)
        _set_grads(lib, [w, b])
        opt.step()
        sd = opt.state_dict()
        return (
            sd["param_groups"],
            {i: sorted(s) for i, s in sd["state"].items()},
            {i: dtype_name(s["step"].dtype) for i, s in sd["state"].items()},
            sd["state"][0]["exp_avg"] is opt.state[w]["exp_avg"],
        )

    got, expected = run_both(run)
    assert got == expected
    assert got[0][0]["params"] == [0, 1] and got[0][1]["params"] == [2]
    assert got[3] is True  # the state tensors themselves, not copies


@pytest.mark.parametrize("name,kwargs", [("Adam", {"amsgrad": True, "lr": 0.05}), ("SGD", {"momentum": 0.9})])
def test_state_dict_round_trip_continues_the_same_trajectory(ng, name, kwargs):
    params, opt = _trajectory(ng, name, kwargs, "float64", steps=3)
    saved = copy.deepcopy(opt.state_dict())
    fresh = [ng.nn.Parameter(p.detach().clone()) for p in params]
    opt2 = getattr(ng.optim, name)(fresh, lr=123.0)
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr"] == kwargs["lr"] if "lr" in kwargs else True
    for ps, o in ((params, opt), (fresh, opt2)):
        for _ in range(3):
            _set_grads(ng, ps)
            o.step()
    for p, q in zip(params, fresh):
        np.testing.assert_array_equal(to_np(p), to_np(q))
    assert opt2.param_groups[0]["params"][0] is fresh[0]


def test_load_state_dict_casts_state_to_the_param_dtype_except_step(ng, torch_ref):
    def run(lib):
        w = lib.nn.Parameter(lib.ones(2, dtype=lib.float64))
        opt = lib.optim.Adam([w])
        saved = {
            "state": {0: {"step": lib.tensor(3.0), "exp_avg": lib.ones(2), "exp_avg_sq": lib.ones(2)}},
            "param_groups": [opt.state_dict()["param_groups"][0]],
        }
        opt.load_state_dict(saved)
        return {k: dtype_name(v.dtype) for k, v in opt.state[w].items()}

    got, expected = run(ng), run(torch_ref)
    assert got == expected == {"step": "float32", "exp_avg": "float64", "exp_avg_sq": "float64"}


@pytest.mark.parametrize(
    "make_saved",
    [
        lambda sd: {**sd, "param_groups": sd["param_groups"] * 2},
        lambda sd: {**sd, "param_groups": [{**sd["param_groups"][0], "params": [0]}]},
    ],
    ids=["group-count", "group-size"],
)
def test_load_state_dict_errors(make_saved):
    def fn(lib):
        opt = lib.optim.SGD(_params(lib)[:2])
        opt.load_state_dict(make_saved(opt.state_dict()))

    assert_same_error(fn, length=200)


def test_step_hooks_are_called_in_order_and_can_replace_args(ng):
    w = ng.nn.Parameter(ng.ones(1))
    w.grad = ng.ones(1)
    opt = ng.optim.SGD([w], lr=0.5)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre1", o is opt, args[1:], kwargs)))
    opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre2",)))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post",)))
    opt.step()
    assert calls == [("pre1", True, (), {}), ("pre2",), ("post",)]
    h1.remove()
    calls.clear()

    def swap_closure(o, args, kwargs):
        return args, {"closure": lambda: 42.0}

    opt.register_step_pre_hook(swap_closure)
    assert opt.step() == 42.0
    assert calls == [("pre2",), ("post",)]
    opt.register_step_pre_hook(lambda o, args, kwargs: "bad")
    with pytest.raises(RuntimeError, match=r"must return None or a tuple of \(new_args, new_kwargs\), but got bad"):
        opt.step()


def test_global_step_hooks_wrap_the_optimizers_own(ng):
    module = importlib.import_module(f"{ng.__name__}.optim.optimizer")
    opt = ng.optim.Adam([ng.nn.Parameter(ng.ones(1))])
    calls = []
    opt.register_step_pre_hook(lambda *a: calls.append("pre"))
    opt.register_step_post_hook(lambda *a: calls.append("post"))
    handles = [
        module.register_optimizer_step_pre_hook(lambda o, *a: calls.append(("global-pre", o is opt))),
        module.register_optimizer_step_post_hook(lambda *a: calls.append("global-post")),
    ]
    try:
        opt.step()
    finally:
        for handle in handles:
            handle.remove()
    opt.step()
    assert calls == [("global-pre", True), "pre", "post", "global-post", "pre", "post"]


def test_state_dict_hooks(ng):
    opt = ng.optim.SGD([ng.nn.Parameter(ng.ones(1))], lr=0.1)
    calls = []
    opt.register_state_dict_pre_hook(lambda o: calls.append("pre"))
    opt.register_state_dict_pre_hook(lambda o: calls.append("pre-first"), prepend=True)
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "tag": 1})
    sd = opt.state_dict()
    assert calls == ["pre-first", "pre"] and sd["tag"] == 1
    opt.register_load_state_dict_pre_hook(lambda o, sd: calls.append("load-pre"))
    opt.register_load_state_dict_post_hook(lambda o: calls.append("load-post"))
    opt.load_state_dict(sd)
    assert calls[-2:] == ["load-pre", "load-post"]


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad(ng, set_to_none):
    w = ng.nn.Parameter(ng.ones(2))
    unused = ng.nn.Parameter(ng.ones(2))
    (w * 3).sum().backward()
    grad = w.grad
    ng.optim.SGD([w, unused]).zero_grad(set_to_none=set_to_none)
    assert unused.grad is None
    if set_to_none:
        assert w.grad is None
    else:
        assert w.grad is grad and to_np(w.grad).tolist() == [0.0, 0.0] and not w.grad.requires_grad


def test_repr_matches_torch():
    def run(lib):
        w, b, _ = _params(lib)
        opt = lib.optim.Adam([{"params": [w]}, {"params": [b], "lr": 0.5, "amsgrad": True}])
        return repr(opt)

    got, expected = run_both(run)
    assert got == expected


def test_pickle_and_deepcopy_keep_state_but_not_hooks(ng):
    params, opt = _trajectory(ng, "Adam", {"lr": 0.05}, "float64", steps=2)
    opt.register_step_post_hook(lambda *a: None)
    for clone in (copy.deepcopy(opt), pickle.loads(pickle.dumps(opt))):
        assert clone.defaults == opt.defaults
        assert len(clone._optimizer_step_post_hooks) == 0
        p0 = clone.param_groups[0]["params"][0]
        assert p0 is not params[0]
        np.testing.assert_array_equal(to_np(clone.state[p0]["exp_avg"]), to_np(opt.state[params[0]]["exp_avg"]))
        np.testing.assert_array_equal(to_np(p0), to_np(params[0]))


def _required(lib):
    return importlib.import_module(f"{lib.__name__}.optim.optimizer").required


def _bad_param_groups(lib):
    w = lib.nn.Parameter(lib.ones(1))
    opt = lib.optim.SGD([w])
    opt.add_param_group({"params": [w]})


ERRORS = [
    (lambda lib: lib.optim.SGD(_params(lib), lr=-1), None),
    (lambda lib: lib.optim.SGD(_params(lib), momentum=-0.5), None),
    (lambda lib: lib.optim.SGD(_params(lib), weight_decay=-0.5), None),
    (lambda lib: lib.optim.SGD(_params(lib), nesterov=True, momentum=0.9, dampening=0.1), None),
    (lambda lib: lib.optim.Adam(_params(lib), lr=-1.0), None),
    (lambda lib: lib.optim.Adam(_params(lib), betas=(1.0, 0.999)), None),
    (lambda lib: lib.optim.AdamW(_params(lib), betas=(0.9, -0.1)), None),
    (lambda lib: lib.optim.Adam(_params(lib), eps=-1e-8), None),
    (lambda lib: lib.optim.Adam(_params(lib), betas=(0.9, 1)), None),
    (lambda lib: lib.optim.RMSprop(_params(lib), alpha=-1.0), None),
    (lambda lib: lib.optim.RMSprop(_params(lib), momentum=-1.0), None),
    (lambda lib: lib.optim.Adagrad(_params(lib), initial_accumulator_value=-1.0), None),
    (lambda lib: lib.optim.Adagrad(_params(lib), lr_decay=-1.0), None),
    (lambda lib: lib.optim.Adadelta(_params(lib), rho=1.5), None),
    (lambda lib: lib.optim.Adamax(_params(lib), betas=(0.9, 1.5)), None),
    (lambda lib: lib.optim.NAdam(_params(lib), momentum_decay=-1.0), None),
    (lambda lib: lib.optim.RAdam(_params(lib), weight_decay=-1.0), None),
    (lambda lib: lib.optim.SGD(lib.ones(2)), None),
    (lambda lib: lib.optim.SGD([lib.ones(2, requires_grad=True) * 2]), None),
    (lambda lib: lib.optim.SGD([lib.nn.Parameter(lib.ones(1)), 3]), None),
    (lambda lib: lib.optim.SGD([]), None),
    (lambda lib: lib.optim.Adam([{"params": set()}]), None),
    (lambda lib: lib.optim.Optimizer(_params(lib), {"lr": _required(lib)}), None),
    (_bad_param_groups, None),
    (lambda lib: lib.optim.SGD([("w", lib.nn.Parameter(lib.ones(1))), lib.nn.Parameter(lib.ones(1))]), None),
    (lambda lib: lib.optim.SGD(_params(lib), fused=True, foreach=True), None),
    (lambda lib: lib.optim.Adam(_params(lib), fused=True, differentiable=True), None),
]


@pytest.mark.parametrize("fn,key", ERRORS, ids=range(len(ERRORS)))
def test_constructor_errors_match_torch(fn, key):
    assert_same_error(fn, key=key, length=300)


@pytest.mark.parametrize("name", ["Adam", "AdamW", "RMSprop", "Adadelta", "Adamax", "NAdam", "RAdam"])
def test_capturable_on_cpu_fails_at_the_first_step_with_a_grad(name):
    def fn(lib):
        params = _params(lib)
        opt = getattr(lib.optim, name)(params, capturable=True)
        opt.step()  # no gradient yet: nothing to do
        _set_grads(lib, params)
        opt.step()

    assert_same_error(fn, length=300)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad"])
def test_fused_runs_or_is_refused_clearly(ng, name):
    params = _params(ng)
    try:
        opt = getattr(ng.optim, name)(params, fused=True)
    except RuntimeError as e:  # npgrad: torch's fused kernels are not reimplemented
        assert "fused=True" in str(e) and "not supported" in str(e)
        return
    _set_grads(ng, params)
    opt.step()
    assert opt.defaults["fused"] is True


def test_duplicate_params_in_a_group_warn(ng):
    w = ng.nn.Parameter(ng.ones(1))
    with pytest.warns(UserWarning, match="optimizer contains a parameter group with duplicate parameters"):
        ng.optim.SGD([w, w])


def test_named_params_and_tensor_lr(ng, torch_ref):
    def run(lib):
        w = lib.nn.Parameter(lib.ones(2, dtype=lib.float64))
        opt = lib.optim.Adam([("w", w)], lr=lib.tensor(0.1, dtype=lib.float64))
        w.grad = lib.ones(2, dtype=lib.float64)
        opt.step()
        return opt.state_dict()["param_groups"][0]["param_names"], to_np(w)

    got, expected = run(ng), run(torch_ref)
    assert got[0] == expected[0] == ["w"]
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-12)


def test_no_warning_in_a_plain_step(ng):
    w = ng.nn.Parameter(ng.ones(2))
    opt = ng.optim.NAdam([w])
    w.grad = ng.ones(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()


def test_every_public_name_of_npgrad_optim_has_an_example():
    # npgrad's own docstrings (torch's are not all exemplified): each public
    # name of the three modules, and each public method of their classes.
    import doctest
    import inspect

    import npgrad
    import npgrad.optim.lr_scheduler as lr_scheduler
    import npgrad.optim.optimizer as optimizer

    missing = []
    for module in (npgrad.optim, optimizer, lr_scheduler):
        for name in module.__all__:
            obj = getattr(module, name)
            members = [(name, obj)]
            if inspect.isclass(obj):
                members += [
                    (f"{name}.{attr}", value)
                    for klass in obj.__mro__
                    if klass.__module__.startswith("npgrad.optim")
                    for attr, value in vars(klass).items()
                    if not attr.startswith("_") and (callable(value) or isinstance(value, property))
                ]
            for qualname, member in members:
                doc = inspect.getdoc(member.fget if isinstance(member, property) else member) or ""
                if not doctest.DocTestParser().get_examples(doc):
                    missing.append(qualname)
    assert not missing, missing
