"""Random numbers and creation: Generator and the RNG state, npgrad.random,
the random functions (``generator=``), the in-place random fills, linspace,
logspace, eye, full_like, as_tensor, asarray, Tensor.new_* and type_as, and
the device queries (npgrad.cuda, is_autocast_enabled).

Values drawn at random are not torch's (another bit generator): the tests
check reproducibility, ranges, shapes and dtypes, and exact values only where
the distribution leaves no choice."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from oracle import assert_close, assert_same_error, to_np


def same(a, b) -> bool:
    return np.array_equal(to_np(a), to_np(b))


LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."

# ---------------------------------------------------------------- Generator


def test_manual_seed_returns_the_default_generator(ng):
    assert ng.manual_seed(3) is ng.default_generator
    assert ng.initial_seed() == 3
    assert ng.random.manual_seed(4) is ng.default_generator
    assert ng.random.initial_seed() == 4


@pytest.mark.parametrize(
    "draw",
    [
        lambda lib, g: lib.rand(5, generator=g),
        lambda lib, g: lib.randn(2, 3, generator=g),
        lambda lib, g: lib.randint(0, 100, (6,), generator=g),
        lambda lib, g: lib.randperm(7, generator=g),
        lambda lib, g: lib.normal(lib.zeros(4), 2.0, generator=g),
        lambda lib, g: lib.normal(0.0, 1.0, (3,), generator=g),
        lambda lib, g: lib.bernoulli(lib.full((8,), 0.5), generator=g),
        lambda lib, g: lib.multinomial(lib.ones(10), 4, generator=g),
        lambda lib, g: lib.rand_like(lib.zeros(3), generator=g),
        lambda lib, g: lib.randn_like(lib.zeros(3), generator=g),
        lambda lib, g: lib.randint_like(lib.zeros(3), 10, generator=g),
        lambda lib, g: lib.zeros(4).normal_(generator=g),
        lambda lib, g: lib.zeros(4).uniform_(-1, 1, generator=g),
        lambda lib, g: lib.zeros(4).bernoulli_(0.5, generator=g),
        lambda lib, g: lib.zeros(4).exponential_(generator=g),
        lambda lib, g: lib.zeros(4).random_(0, 1000, generator=g),
    ],
)
def test_same_seed_same_numbers(ng, draw):
    g = ng.Generator().manual_seed(123)
    first = to_np(draw(ng, g))
    g.manual_seed(123)
    assert np.array_equal(to_np(draw(ng, g)), first)
    # The default generator too (generator=None).
    ng.manual_seed(5)
    a = to_np(draw(ng, None))
    ng.manual_seed(5)
    assert np.array_equal(to_np(draw(ng, None)), a)


def test_a_generator_does_not_advance_the_default_one(ng):
    ng.manual_seed(0)
    a = ng.rand(3)
    ng.manual_seed(0)
    ng.rand(5, generator=ng.Generator())
    assert same(ng.rand(3), a)


def test_unseeded_generators_start_alike(ng):
    # torch's default seed (default_rng_seed_val): a fresh generator is seeded.
    assert ng.Generator().initial_seed() == 67280421310721
    assert same(ng.rand(4, generator=ng.Generator()), ng.rand(4, generator=ng.Generator()))


def test_generator_methods(ng):
    g = ng.Generator(device="cpu")
    assert g.manual_seed(7) is g
    assert g.initial_seed() == 7
    assert str(g.device) == "cpu"
    s = g.seed()
    assert isinstance(s, int) and s == g.initial_seed()
    assert g.manual_seed(-1).initial_seed() == 2**64 - 1  # modulo 2**64
    s = ng.seed()
    assert s == ng.initial_seed()


def test_state_round_trips(ng):
    g = ng.Generator().manual_seed(9)
    state = g.get_state()
    a = ng.randn(5, generator=g)
    g.manual_seed(1)
    assert g.set_state(state) is g
    assert g.initial_seed() == 9
    assert same(ng.randn(5, generator=g), a)
    ng.manual_seed(2)
    state = ng.get_rng_state()
    b = ng.rand(4)
    ng.manual_seed(3)
    ng.set_rng_state(state)
    assert ng.initial_seed() == 2
    assert same(ng.rand(4), b)
    # get_state is a copy: changing it does not change the generator.
    state = ng.get_rng_state()
    state.zero_()
    assert not same(ng.get_rng_state(), state)


def test_state_round_trips_after_an_odd_number_of_draws(ng):
    # A 32-bit draw buffers half of a 64-bit word: the state keeps it.
    g = ng.Generator().manual_seed(4)
    ng.randint(0, 5, (3,), dtype=ng.bool if False else ng.int64, generator=g)
    ng.rand(3, dtype=ng.float16, generator=g)
    state = g.get_state()
    a = ng.rand(7, generator=g)
    assert same(ng.rand(7, generator=g.set_state(state)), a)


@pytest.mark.parametrize(
    "fn,key",
    [
        (lambda lib: lib.set_rng_state([1, 2]), "expected a torch."),
        (lambda lib: lib.set_rng_state(lib.get_rng_state().double()), "RNG state must be a torch."),
        (lambda lib: lib.Generator().set_state(lib.Generator().get_state()[:3]), "RNG state size to be 3"),
        (lambda lib: lib.Generator().manual_seed(1.5), "manual_seed expected a long, but got float"),
        (lambda lib: lib.Generator().manual_seed(2**64), "Overflow when unpacking long long"),
        (lambda lib: lib.manual_seed(2**64), "Overflow when unpacking long long"),
        (lambda lib: lib.Generator("cuda"), ""),
        (lambda lib: lib.Generator("nope"), "Expected one of cpu, cuda"),
        (lambda lib: lib.rand(2, generator=5), "generator"),
        (lambda lib: lib.random.fork_rng(devices=[0]).__enter__(), "Torch not compiled with CUDA enabled"),
    ],
)
def test_generator_errors(ng, fn, key):
    assert_same_error(fn, key)
    assert ng.rand(2).shape == (2,)  # still usable


def test_fork_rng_restores_the_state(ng):
    ng.manual_seed(8)
    with ng.random.fork_rng():
        a = ng.rand(3)
    assert same(ng.rand(3), a)
    ng.manual_seed(8)
    with ng.random.fork_rng(enabled=False):
        b = ng.rand(3)
    assert not same(ng.rand(3), b)
    ng.manual_seed(8)
    with pytest.raises(ValueError), ng.random.fork_rng(devices=[]):
        ng.rand(3)
        raise ValueError
    assert same(ng.rand(3), a)


# ------------------------------------------------------- random functions


def test_rand_randn_ranges_and_dtypes(ng):
    for dt in (ng.float16, ng.float32, ng.float64):
        x = ng.rand(1000, dtype=dt)
        assert x.dtype == dt and 0 <= x.min().item() and x.max().item() < 1
        assert ng.randn(2, 3, dtype=dt).dtype == dt


@pytest.mark.parametrize(
    "call,dtype,low,high",
    [
        (lambda lib: lib.randint(5, (200,)), "int64", 0, 5),
        (lambda lib: lib.randint(-3, 4, (200,)), "int64", -3, 4),
        (lambda lib: lib.randint(high=3, size=(200,)), "int64", 0, 3),
        (lambda lib: lib.randint(0, 2, (200,), dtype=lib.bool), "bool", 0, 2),
        (lambda lib: lib.randint(2, 9, (200,), dtype=lib.float64), "float64", 2, 9),
        (lambda lib: lib.randint(-(2**63), 2**63 - 1, (20,)), "int64", -(2**63), 2**63 - 1),
        (lambda lib: lib.randint_like(lib.zeros(200), 4), "float32", 0, 4),
        (lambda lib: lib.randint_like(lib.zeros(200, dtype=lib.int64), 2, 5), "int64", 2, 5),
        (lambda lib: lib.randint_like(lib.zeros(200), high=3, dtype=lib.float64), "float64", 0, 3),
    ],
)
def test_randint(ng, call, dtype, low, high):
    x = call(ng)
    assert str(x.dtype) == f"torch.{dtype}" and not x.requires_grad
    values = to_np(x).astype(object if dtype == "int64" else np.float64)
    assert ((values >= low) & (values < high)).all()
    assert np.array_equal(to_np(x), np.floor(to_np(x).astype(np.float64))) or dtype == "int64"


def test_randint_requires_grad(ng):
    x = ng.randint(3, (2,), dtype=ng.float32, requires_grad=True)
    assert x.requires_grad and x.is_leaf
    assert ng.randint_like(ng.zeros(2), 5, requires_grad=True).requires_grad


def test_randperm(ng):
    for n in (0, 1, 10):
        p = ng.randperm(n)
        assert p.dtype == ng.int64 and sorted(p.tolist()) == list(range(n))
    p = ng.randperm(6, dtype=ng.float64, requires_grad=True)
    assert p.requires_grad and sorted(p.tolist()) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_normal_overloads(ng, torch_ref):
    cases = [
        lambda lib: lib.normal(lib.zeros(2, 3), 1.0),
        lambda lib: lib.normal(lib.zeros(2, 3)),
        lambda lib: lib.normal(0.0, lib.ones(3)),
        lambda lib: lib.normal(lib.zeros(2, 1), lib.ones(3)),
        lambda lib: lib.normal(0.0, 1.0, (2,)),
        lambda lib: lib.normal(0, 1, size=(2, 2), dtype=lib.float64),
        lambda lib: lib.normal(lib.zeros(2, dtype=lib.float64), lib.ones(2)),
        lambda lib: lib.normal(lib.zeros(2), lib.ones(2, dtype=lib.float64)),
        lambda lib: lib.normal(0.0, lib.ones(2, dtype=lib.float64)),
        lambda lib: lib.normal(lib.zeros(2, dtype=lib.float16), 1.0),
        lambda lib: lib.normal(lib.zeros(2), lib.ones(2, dtype=lib.int64)),
    ]
    for case in cases:
        got, want = case(ng), case(torch_ref)
        assert got.shape == want.shape and str(got.dtype) == str(want.dtype)


def test_normal_values(ng):
    assert same(ng.normal(ng.tensor([1.0, -2.0]), 0.0), ng.tensor([1.0, -2.0]))
    assert same(ng.normal(3.0, ng.zeros(2)), ng.tensor([3.0, 3.0]))
    assert same(ng.normal(2.0, 0.0, (2,)), ng.tensor([2.0, 2.0]))
    x = ng.normal(10.0, 2.0, (20000,), dtype=ng.float64)
    assert abs(to_np(x).mean() - 10) < 0.1 and abs(to_np(x).std() - 2) < 0.1


def test_bernoulli_and_multinomial_values(ng):
    p = ng.tensor([0.0, 1.0, 1.0, 0.0])
    assert same(ng.bernoulli(p), p)
    assert same(ng.bernoulli(ng.zeros(3, dtype=ng.int64), 1.0), ng.ones(3, dtype=ng.int64))
    assert ng.bernoulli(ng.zeros(2, dtype=ng.bool), 0.5).dtype == ng.bool
    assert ng.bernoulli(ng.zeros(2, dtype=ng.float64)).dtype == ng.float64
    assert same(ng.multinomial(ng.tensor([0.0, 0.0, 2.0]), 1), ng.tensor([2]))
    rows = ng.multinomial(ng.tensor([[0.0, 1.0], [3.0, 0.0]]), 4, replacement=True)
    assert same(rows, ng.tensor([[1, 1, 1, 1], [0, 0, 0, 0]]))
    picks = ng.multinomial(ng.ones(2, 6), 6)
    assert picks.shape == (2, 6) and all(sorted(r) == list(range(6)) for r in picks.tolist())
    # Positive categories come before zero ones when drawing without replacement.
    assert sorted(ng.multinomial(ng.tensor([0.0, 5.0, 0.0, 1.0]), 2).tolist()) == [1, 3]
    assert ng.multinomial(ng.ones(0, 2), 1).shape == (0, 1)
    counts = np.bincount(to_np(ng.multinomial(ng.tensor([1.0, 3.0]), 4000, True)), minlength=2)
    assert 0.2 < counts[0] / 4000 < 0.3


@pytest.mark.parametrize(
    "fn,key",
    [
        (lambda lib: lib.randint(5, 3), "argument 'size' (position 2) must be tuple of ints, not int"),
        (lambda lib: lib.randint(5, 5, (3,)), "random_ expects 'from' to be less than 'to', but got from=5 >= to=5"),
        (lambda lib: lib.randint(5, (3,), requires_grad=True), "Only Tensors of floating point"),
        (lambda lib: lib.randint(5.5, (3,)), "randint(): argument 'high' (position 1) must be int, not float"),
        (lambda lib: lib.randint(0, 3, (3,), dtype=lib.bool), "to - 1 is out of bounds for bool"),
        (lambda lib: lib.randint(-1, 1, (3,), dtype=lib.bool), "from is out of bounds for bool"),
        (lambda lib: lib.randint(0, 70000, (2,), dtype=lib.float16), "to - 1 is out of bounds for c10::Half"),
        (lambda lib: lib.randint(5, (-1,)), "Trying to create tensor with negative dimension -1: [-1]"),
        (lambda lib: lib.randint_like(lib.zeros(2), 5, 2), "but got from=5 >= to=2"),
        (lambda lib: lib.randperm(-1), "Trying to create tensor with negative dimension -1: [-1]"),
        (lambda lib: lib.randperm(4, dtype=lib.bool), "\"randperm\" not implemented for 'Bool'"),
        (lambda lib: lib.randperm(3000, dtype=lib.float16), "n cannot be greater than 2049 for Half type."),
        (lambda lib: lib.randperm(2.0), "randperm(): argument 'n' (position 1) must be int, not float"),
        (lambda lib: lib.randperm(4, requires_grad=True), "Only Tensors of floating point"),
        (lambda lib: lib.normal(0.0, -1.0, (2,)), "normal expects std >= 0.0, but found std -1"),
        (lambda lib: lib.normal(lib.zeros(2), -1.0), "normal expects std >= 0.0, but found std -1"),
        (lambda lib: lib.normal(0.0, float("nan"), (2,)), "normal expects std >= 0.0, but found std nan"),
        (lambda lib: lib.normal(lib.zeros(2), lib.tensor([1.0, -1.0])), "normal expects all elements of std >= 0.0"),
        (lambda lib: lib.normal(0.0, lib.tensor([1.0, -1.0])), "normal expects all elements of std >= 0.0"),
        (
            lambda lib: lib.normal(lib.zeros(2), lib.ones(3)),
            "The size of tensor a (2) must match the size of tensor b (3)",
        ),
        (
            lambda lib: lib.normal(lib.zeros(2, dtype=lib.int64), 1.0),
            "\"normal_kernel_cpu\" not implemented for 'Long'",
        ),
        (lambda lib: lib.normal(0, 1, (2,), dtype=lib.int64), "\"normal_kernel_cpu\" not implemented for 'Long'"),
        (lambda lib: lib.normal(0.0, 1.0), "normal() received an invalid combination of arguments"),
        (lambda lib: lib.bernoulli(lib.full((3,), 1.5)), "Expected p_in >= 0 && p_in <= 1 to be true, but got false."),
        (lambda lib: lib.bernoulli(lib.full((3,), float("nan"))), "Expected p_in >= 0 && p_in <= 1"),
        (lambda lib: lib.bernoulli(lib.full((3,), 0.5), 1.5), "bernoulli_ expects p to be in [0, 1], but got p=1.5"),
        (
            lambda lib: lib.bernoulli(lib.ones(3, dtype=lib.int64)),
            "\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'",
        ),
        (lambda lib: lib.bernoulli(1.0), "bernoulli(): argument 'input' (position 1) must be Tensor, not float"),
        (
            lambda lib: lib.multinomial(lib.tensor([0.2, 0.8]), 3),
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement",
        ),
        (
            lambda lib: lib.multinomial(lib.tensor([-0.2, 0.8]), 1),
            "probability tensor contains either `inf`, `nan` or element < 0",
        ),
        (
            lambda lib: lib.multinomial(lib.tensor([float("inf"), 1.0]), 1),
            "probability tensor contains either `inf`, `nan`",
        ),
        (
            lambda lib: lib.multinomial(lib.tensor([[0.0, 0.0], [1.0, 1.0]]), 1),
            "invalid multinomial distribution (sum of probabilities <= 0)",
        ),
        (lambda lib: lib.multinomial(lib.tensor(0.5), 1), "prob_dist must be 1 or 2 dim"),
        (lambda lib: lib.multinomial(lib.ones(2, 2, 2), 0), "prob_dist must be 1 or 2 dim"),
        (
            lambda lib: lib.multinomial(lib.tensor([1, 2]), 0),
            "multinomial only supports floating-point dtypes for input, got: Long",
        ),
        (lambda lib: lib.multinomial(lib.tensor([0.2, 0.8]), 0), "cannot sample n_sample <= 0 samples"),
        (
            lambda lib: lib.multinomial(lib.tensor([1.0, 2.0]), 1.5),
            "multinomial(): argument 'num_samples' (position 2) must be int, not float",
        ),
        (
            lambda lib: lib.rand_like(lib.zeros(2), dtype=lib.int64),
            "\"check_uniform_bounds\" not implemented for 'Long'",
        ),
    ],
)
def test_random_function_errors(ng, fn, key):
    assert_same_error(fn, key)


def test_random_results_and_grad(ng):
    mean = ng.zeros(2, 1, requires_grad=True)
    std = ng.ones(3, requires_grad=True)
    for out, node, saved in [
        (ng.normal(mean, 1.0), "NormalBackward1", {"_saved_mean_sym_sizes": (2, 1)}),
        (ng.normal(0.0, std), "NormalBackward2", {"_saved_std_sym_sizes": (3,)}),
        (ng.normal(mean, std), "NormalBackward3", {"_saved_mean_sym_sizes": (2, 1), "_saved_std_sym_sizes": (3,)}),
        (ng.normal(mean.detach(), std), "NormalBackward3", {}),
        (ng.bernoulli(ng.full((3,), 0.5, requires_grad=True)), "BernoulliBackward0", {}),
    ]:
        assert out.requires_grad and out.grad_fn.name() == node
        for attr, value in saved.items():
            assert tuple(getattr(out.grad_fn, attr)) == value
        out.sum().backward()
    assert same(mean.grad, ng.zeros(2, 1)) and same(std.grad, ng.zeros(3))
    assert not ng.normal(ng.zeros(2), ng.ones(2)).requires_grad
    with ng.no_grad():
        assert not ng.normal(mean, 1.0).requires_grad
    assert not ng.multinomial(ng.ones(2, requires_grad=True), 1).requires_grad
    assert ng.normal(1.0, 2.0, (2,), requires_grad=True).is_leaf


def test_bernoulli_with_a_number_p_has_no_derivative(ng):
    x = ng.full((3,), 0.5, requires_grad=True)
    y = ng.bernoulli(x, 0.5)
    assert y.requires_grad and y.grad_fn.name() == "torch::autograd::NotImplemented"
    assert y.grad_fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
    with pytest.raises(RuntimeError, match="derivative for aten::bernoulli is not implemented"):
        y.sum().backward()
    assert not ng.bernoulli(x.detach(), 0.5).requires_grad


# ------------------------------------------------------ in-place random fills

FILLS = [
    ("normal_", lambda t: t.normal_(), "NormalBackward0"),
    ("uniform_", lambda t: t.uniform_(), "UniformBackward0"),
    ("bernoulli_float", lambda t: t.bernoulli_(0.5), "BernoulliBackward2"),
    ("bernoulli_tensor", lambda t: t.bernoulli_(t.new_full((3,), 0.5)), "BernoulliBackward1"),
    ("exponential_", lambda t: t.exponential_(), "ExponentialBackward0"),
    ("random_", lambda t: t.random_(), "RandomBackward2"),
    ("random_to", lambda t: t.random_(5), "RandomBackward1"),
    ("random_from_to", lambda t: t.random_(2, 5), "RandomBackward0"),
    ("random_from_none", lambda t: t.random_(2, None), "RandomBackward0"),
    ("fill_", lambda t: t.fill_(1.0), "FillBackward2"),
    ("zero_", lambda t: t.zero_(), "ZeroBackward0"),
]


@pytest.mark.parametrize("fill", [f[1] for f in FILLS], ids=[f[0] for f in FILLS])
def test_fill_on_a_leaf_that_requires_grad_raises(ng, fill):
    leaf = ng.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=LEAF_ERROR):
        fill(leaf)
    assert same(leaf, ng.ones(3)) and leaf._version == 0


@pytest.mark.parametrize("fill,node", [f[1:] for f in FILLS], ids=[f[0] for f in FILLS])
def test_fill_on_a_non_leaf(ng, fill, node):
    leaf = ng.ones(3, requires_grad=True)
    x = leaf * 2
    v = x._version
    assert fill(x) is x
    assert x._version == v + 1
    assert x.grad_fn.name() == node
    assert x.grad_fn.next_functions[0][0].name() == "MulBackward0"
    x.sum().backward()
    assert same(leaf.grad, ng.zeros(3))


def test_fills_in_no_grad_mode_on_a_leaf(ng):
    # As nn.init does: allowed, no history, the version still bumps.
    leaf = ng.ones(3, requires_grad=True)
    with ng.no_grad():
        leaf.normal_()
        leaf.uniform_()
        leaf.random_(3)
        leaf.exponential_()
        leaf.bernoulli_(0.5)
    assert leaf._version == 5 and leaf.requires_grad and leaf.grad_fn is None


def test_fills_through_views(ng):
    leaf = ng.ones(3, requires_grad=True)
    a = leaf * 1
    v = a[0:2]
    v.normal_()
    assert a.grad_fn.name() == "torch::autograd::CopySlices"
    assert v.grad_fn.name() == "AsStridedBackward0"
    assert a._version == 1 and v._version == 1
    a.sum().backward()
    assert leaf.grad.tolist() == [0.0, 0.0, 1.0]
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an in-place"):
        leaf[0:2].uniform_()
    y = ng.zeros(2, 3)
    y.t().normal_(5.0, 0.0)  # a non-contiguous view writes through to its base
    assert (to_np(y) == 5).all()


def test_bernoulli_tensor_p_gets_a_zero_gradient(ng):
    p = ng.full((3,), 0.5, requires_grad=True)
    x = ng.zeros(2, 3)
    x.bernoulli_(p)
    assert x.grad_fn.name() == "BernoulliBackward1"
    assert x.grad_fn.next_functions[0][0] is None
    x.sum().backward()
    assert same(p.grad, ng.zeros(3))


def test_fills_without_grad(ng):
    x = ng.zeros(1000, dtype=ng.float64)
    assert x.normal_(5.0, 0.0) is x and same(x, ng.full((1000,), 5.0, dtype=ng.float64))
    x.uniform_(-2.0, -1.0)
    assert -2 <= x.min().item() and x.max().item() < -1
    assert (to_np(x.uniform_(1, 1)) == 1).all()
    x.exponential_(4.0)
    assert x.min().item() >= 0 and abs(x.mean().item() - 0.25) < 0.05
    x.bernoulli_(1.0)
    assert (to_np(x) == 1).all()
    x.random_(3)
    assert set(x.tolist()) <= {0.0, 1.0, 2.0}
    x.random_(-4, -2)
    assert set(x.tolist()) <= {-4.0, -3.0}
    assert x._version == 7
    h = ng.zeros(2000, dtype=ng.float16).random_()
    assert 0 <= h.min().item() and h.max().item() <= 2048
    i = ng.zeros(50, dtype=ng.int64).random_()
    assert i.min().item() >= 0 and i.max().item() > 2**40
    b = ng.zeros(50, dtype=ng.bool).random_()
    assert b.dtype == ng.bool and to_np(b).any()
    assert ng.zeros(3, dtype=ng.int64).bernoulli_(1.0).tolist() == [1, 1, 1]
    assert ng.zeros(2, 3).bernoulli_(ng.tensor([0.0, 1.0, 0.0])).tolist() == [[0.0, 1.0, 0.0]] * 2


@pytest.mark.parametrize(
    "fn,key",
    [
        (lambda lib: lib.zeros(2, dtype=lib.int64).normal_(), "\"normal_kernel_cpu\" not implemented for 'Long'"),
        (lambda lib: lib.zeros(2).normal_(0, -1), "normal expects std >= 0.0, but found std -1"),
        (lambda lib: lib.zeros(2, dtype=lib.int64).uniform_(), "\"check_uniform_bounds\" not implemented for 'Long'"),
        (
            lambda lib: lib.zeros(2).uniform_(2, 1),
            "uniform_ expects to return a [from, to) range, but found from=2 > to=1",
        ),
        (lambda lib: lib.zeros(2).uniform_(0, float("inf")), "to is out of bounds for float"),
        (
            lambda lib: lib.zeros(2, dtype=lib.int64).exponential_(),
            "Exponential distribution is a continuous probability distribution. dtype must be a floating point but you specified Long",
        ),
        (lambda lib: lib.zeros(2).exponential_(0), "exponential_ expects lambda > 0.0, but found lambda=0"),
        (lambda lib: lib.zeros(2).bernoulli_(1.5), "bernoulli_ expects p to be in [0, 1], but got p=1.5"),
        (lambda lib: lib.zeros(2).bernoulli_(lib.tensor([0.5, 2.0])), "Expected p_in >= 0 && p_in <= 1"),
        (
            lambda lib: lib.zeros(2).bernoulli_(lib.ones(3)),
            "The expanded size of the tensor (2) must match the existing size (3)",
        ),
        (
            lambda lib: lib.zeros(2).bernoulli_(lib.ones(2, dtype=lib.int64)),
            "\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'",
        ),
        (lambda lib: lib.zeros(2).random_(5, 2), "random_ expects 'from' to be less than 'to', but got from=5 >= to=2"),
        (lambda lib: lib.zeros(2).random_(-5), "but got from=0 >= to=-5"),
        (lambda lib: lib.zeros(2, dtype=lib.bool).random_(3), "to - 1 is out of bounds for bool"),
        (
            lambda lib: lib.zeros(2).expand(2, 2).normal_(),
            "unsupported operation: more than one element of the written-to tensor",
        ),
    ],
)
def test_fill_errors(ng, fn, key):
    assert_same_error(fn, key)


# --------------------------------------------------- deterministic factories

FACTORIES = [
    lambda lib: lib.linspace(0, 1, 5),
    lambda lib: lib.linspace(0, 10, 5, dtype=lib.int64),
    lambda lib: lib.linspace(0, 10, 4, dtype=lib.int64),
    lambda lib: lib.linspace(10, 0, 4, dtype=lib.int64),
    lambda lib: lib.linspace(-1.5, 2.5, 7, dtype=lib.float64),
    lambda lib: lib.linspace(0, 1, 0),
    lambda lib: lib.linspace(3, 1, 1),
    lambda lib: lib.linspace(lib.tensor(0.0), lib.tensor(1.0), 3),
    lambda lib: lib.linspace(0, 1, 3, requires_grad=True),
    lambda lib: lib.logspace(0, 2, 3),
    lambda lib: lib.logspace(0, 2, 3, base=2),
    lambda lib: lib.logspace(0, 2, 3, dtype=lib.int64),
    lambda lib: lib.logspace(0, 3, 4, 2.0, dtype=lib.float64),
    lambda lib: lib.eye(3),
    lambda lib: lib.eye(2, 3),
    lambda lib: lib.eye(3, 2, dtype=lib.int64),
    lambda lib: lib.eye(2, dtype=lib.bool),
    lambda lib: lib.eye(0),
    lambda lib: lib.eye(2, requires_grad=True),
    lambda lib: lib.full_like(lib.zeros(2), 3),
    lambda lib: lib.full_like(lib.zeros(2, dtype=lib.int64), 2.7),
    lambda lib: lib.full_like(lib.zeros(2), 3, dtype=lib.int64),
    lambda lib: lib.full_like(lib.zeros(2, dtype=lib.bool), 2),
    lambda lib: lib.full_like(lib.zeros(2), lib.tensor(2.0)),
    lambda lib: lib.full_like(lib.zeros(2, 2), 1.5, requires_grad=True),
    lambda lib: lib.as_tensor([1, 2]),
    lambda lib: lib.as_tensor(np.arange(3.0)),
    lambda lib: lib.as_tensor(np.arange(3.0), dtype=lib.float32),
    lambda lib: lib.as_tensor(1.5),
    lambda lib: lib.as_tensor(lib.ones(2), dtype=lib.float64),
    lambda lib: lib.asarray([1, 2]),
    lambda lib: lib.asarray(np.arange(3.0)),
    lambda lib: lib.asarray(np.arange(3.0), copy=True),
    lambda lib: lib.asarray([1.0, 2.0], requires_grad=True),
    lambda lib: lib.asarray(lib.ones(2), dtype=lib.int64),
    lambda lib: lib.asarray(np.float64(2.5)),
    lambda lib: lib.asarray(3),
    lambda lib: lib.ones(2, dtype=lib.float64).new_zeros(3),
    lambda lib: lib.ones(2, dtype=lib.float64).new_zeros((2, 3)),
    lambda lib: lib.ones(2, dtype=lib.float64).new_zeros(2, 3),
    lambda lib: lib.ones(2, dtype=lib.int64).new_ones(2, dtype=lib.float32),
    lambda lib: lib.ones(2, dtype=lib.float64).new_full((2,), 3),
    lambda lib: lib.ones(2, dtype=lib.int64).new_full((2,), 3.5),
    lambda lib: lib.ones(2, dtype=lib.float64).new_empty(2).zero_(),
    lambda lib: lib.ones(2, dtype=lib.float64).new_tensor([1, 2]),
    lambda lib: lib.ones(2, dtype=lib.int64).new_tensor([1.5, 2]),
    lambda lib: lib.ones(2).new_zeros(2, requires_grad=True),
    lambda lib: lib.ones(2).type_as(lib.ones(1, dtype=lib.int64)),
]


@pytest.mark.parametrize("make", FACTORIES)
def test_factories_against_torch(ng, torch_ref, make):
    got, want = make(ng), make(torch_ref)
    assert str(got.dtype) == str(want.dtype)
    assert got.shape == want.shape and got.requires_grad == want.requires_grad
    assert_close(got.detach(), want.detach(), rtol=1e-6, atol=1e-6)


def test_linspace_float_values_are_symmetric(ng):
    x = ng.linspace(-1.0, 1.0, 5, dtype=ng.float64)
    assert x.tolist() == [-1.0, -0.5, 0.0, 0.5, 1.0]


def test_as_tensor_and_asarray_share_memory(ng):
    a = np.arange(3.0)
    assert np.shares_memory(ng.as_tensor(a).numpy(), a)
    assert np.shares_memory(ng.asarray(a).numpy(), a)
    assert not np.shares_memory(ng.asarray(a, copy=True).numpy(), a)
    assert not np.shares_memory(ng.as_tensor(a, dtype=ng.float32).numpy(), a)
    b = np.arange(6.0).reshape(2, 3)[:, ::2]
    assert np.shares_memory(ng.as_tensor(b).numpy(), b)
    x = ng.ones(2)
    assert ng.as_tensor(x) is x and ng.asarray(x) is x
    assert ng.as_tensor(x, dtype=ng.float32) is x
    assert ng.asarray(x, copy=True) is not x
    y = ng.ones(2, dtype=ng.float64, requires_grad=True)
    assert ng.as_tensor(y, dtype=ng.float32).grad_fn.name() == "ToCopyBackward0"


def test_new_tensor_warns_on_a_tensor_and_type_as_keeps_history(ng):
    with pytest.warns(UserWarning, match="To copy construct from a tensor"):
        t = ng.ones(2, dtype=ng.float64).new_tensor(ng.ones(2, requires_grad=True))
    assert t.dtype == ng.float64 and not t.requires_grad
    x = ng.ones(2, requires_grad=True)
    assert x.type_as(ng.ones(1)) is x
    assert x.type_as(ng.ones(1, dtype=ng.float64)).grad_fn.name() == "ToCopyBackward0"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ng.ones(1).new_tensor([1.0])


@pytest.mark.parametrize(
    "fn,key",
    [
        (lambda lib: lib.linspace(0, 1, -1), "number of steps must be non-negative"),
        (lambda lib: lib.linspace(0, 1), "linspace()"),
        (lambda lib: lib.linspace("a", 1, 3), "linspace() received an invalid combination of arguments"),
        (
            lambda lib: lib.linspace(lib.tensor([0.0]), 1, 3),
            "linspace only supports 0-dimensional start and end tensors, but got start with 1 dimension(s).",
        ),
        (lambda lib: lib.linspace(0, 1, 3, dtype=lib.bool), "\"linspace_cpu\" not implemented for 'Bool'"),
        (lambda lib: lib.logspace(0, 2, -1), "number of steps must be non-negative"),
        (lambda lib: lib.logspace(0, 2, 3, dtype=lib.bool), "\"logspace_cpu\" not implemented for 'Bool'"),
        (lambda lib: lib.eye(-1), "n must be greater or equal to 0, got -1"),
        (lambda lib: lib.eye(2, -1), "m must be greater or equal to 0, got -1"),
        (lambda lib: lib.eye(2.0), "eye(): argument 'n' (position 1) must be int, not float"),
        (
            lambda lib: lib.full_like(lib.zeros(2), "a"),
            "full_like(): argument 'fill_value' (position 2) must be Number, not str",
        ),
        (lambda lib: lib.full_like(lib.zeros(2), 1e300), "value cannot be converted to type float without overflow"),
        (
            lambda lib: lib.full_like(lib.zeros(2, dtype=lib.int64), 1, requires_grad=True),
            "Only Tensors of floating point",
        ),
        (
            lambda lib: lib.asarray(np.arange(3.0), dtype=lib.float32, copy=False),
            "can't alias tensor with dtype 'Double' into dtype 'Float'.",
        ),
        (
            lambda lib: lib.ones(2).new_full(2, 3),
            "new_full(): argument 'size' (position 1) must be tuple of ints, not int",
        ),
        (lambda lib: lib.ones(2, dtype=lib.int64).new_zeros(2, requires_grad=True), "Only Tensors of floating point"),
        (lambda lib: lib.ones(2).new_zeros(-1), "Trying to create tensor with negative dimension -1: [-1]"),
        (lambda lib: lib.ones(2).new_zeros(), 'new_zeros() missing 1 required positional arguments: "size"'),
        (lambda lib: lib.ones(2).type_as(3), "type_as(): argument 'other' (position 1) must be Tensor, not int"),
    ],
)
def test_factory_errors(ng, fn, key):
    assert_same_error(fn, key)


# ---------------------------------------------------------- device queries


def test_cuda_queries(ng):
    assert ng.cuda.is_available() is False
    assert ng.cuda.device_count() == 0
    assert ng.cuda.is_initialized() is False
    for silent in (ng.cuda.manual_seed, ng.cuda.manual_seed_all):
        assert silent(0) is None
    assert ng.cuda.seed() is None and ng.cuda.seed_all() is None and ng.cuda.empty_cache() is None
    with pytest.raises(ValueError):
        ng.cuda.manual_seed("x")
    for raising in (ng.cuda.synchronize, ng.cuda.current_device):
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            raising()


def test_is_autocast_enabled(ng):
    assert ng.is_autocast_enabled() is False
    assert ng.is_autocast_enabled("cpu") is False
    assert ng.is_autocast_enabled("cuda") is False


@pytest.mark.parametrize(
    "fn,key",
    [
        (lambda lib: lib.is_autocast_enabled("foo"), "Expected one of cpu, cuda"),
        (
            lambda lib: lib.is_autocast_enabled(1),
            "is_autocast_enabled(): argument 'device_type' (position 1) must be str, not int",
        ),
    ],
)
def test_is_autocast_enabled_errors(ng, fn, key):
    assert_same_error(fn, key)
