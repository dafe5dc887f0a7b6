"""One audit test over the randomizer registry: honest randomizers pass, broken ones fail.

Discrete randomizers: :func:`shuffledp.audit.exact_audit` (the matrix's epsilon,
certified by plain and importance-sampled chi-square tests of the sampler) at
epsilon up to 74, and refusal above the largest epsilon float64 can hold.
Continuous randomizers: the Monte-Carlo lower bound of
:func:`shuffledp.audit.audit_continuous`.  Broken variants: the double budget
(sampling with 2 eps while claiming eps) for every randomizer, and, for discrete
ones, the naive sampler that inverts the matrix row's CDF with one
``rng.random()`` (2^-53 resolution), i.e. the former implementation's defect.
"""

import numpy as np
import pytest

from shuffledp.audit import audit_continuous, exact_audit
from shuffledp.errors import AuditError, PrivacyParameterError
from shuffledp.randomizers.base import MAX_DISCRETE_EPSILON, DiscreteRandomizer
from shuffledp.randomizers.categorical import table_index
from shuffledp.randomizers.registry import available_randomizers, make_randomizer, randomizer_class, size_argument

NAMES = available_randomizers()
DISCRETE = [name for name in NAMES if issubclass(randomizer_class(name), DiscreteRandomizer)]
CONTINUOUS = [name for name in NAMES if name not in DISCRETE]
#: Small tables, so that the tilted audit reaches every cell (k = 4 categories, subsets of
#: 5 items, the integers 0..2); vector randomizers in dimension 2.
SIZES = {"k": 4, "high": 2, "dim": 2}
LARGE_EPSILONS = [20.0, 38.0, 40.0, 74.0]


def _make(name, eps, cls=None):
    size = SIZES.get(size_argument(name), 2)
    if name == "subset_exponential":
        size = 5
    R = make_randomizer(name, eps, size)
    if cls is not None:
        R.__class__ = cls(type(R))
    return R


def _double_budget(name, eps):
    """Samples (and tabulates) with budget 2 eps while claiming eps."""
    R = _make(name, 2 * eps)
    R.epsilon = eps
    return R


def _naive_sampler(base):
    """``base`` with the former defect: one uniform against the row's CDF, so nothing below 2^-53 is drawn."""

    def _randomize(self, X, rng):
        inputs = self.transition_inputs()
        rows = np.searchsorted(inputs, X) if X.ndim == 1 else table_index(inputs, X)
        cdf = np.cumsum(self.transition_matrix(), axis=1)[rows]
        column = np.minimum((rng.random(len(X))[:, None] >= cdf).sum(axis=1), cdf.shape[1] - 1)
        return self.transition_outputs()[column]

    return type(f"Naive{base.__name__}", (base,), {"_randomize": _randomize})


def test_the_registry_has_both_kinds():
    assert {"krr", "binary_rr", "subset_exponential", "geometric", "unary"} <= set(DISCRETE)
    assert {"laplace", "minkowski", "privunit"} <= set(CONTINUOUS)


@pytest.mark.parametrize("name", DISCRETE)
@pytest.mark.parametrize("eps", [1.0, *LARGE_EPSILONS])
def test_discrete_sampler_realizes_its_epsilon(name, eps):
    assert exact_audit(_make(name, eps)) == pytest.approx(eps, rel=1e-9)


@pytest.mark.parametrize("name", DISCRETE)
@pytest.mark.parametrize("eps", LARGE_EPSILONS)
def test_naive_sampler_fails_the_audit(name, eps):
    R = _make(name, eps, _naive_sampler)
    with pytest.raises(AuditError, match="does not realize its transition matrix"):
        exact_audit(R)


@pytest.mark.parametrize("name", DISCRETE)
def test_naive_sampler_is_correct_at_small_epsilon(name):
    """The control: at eps = 1 the naive sampler is a correct sampler, and the audit passes it."""
    assert exact_audit(_make(name, 1.0, _naive_sampler)) == pytest.approx(1.0, rel=1e-9)


@pytest.mark.parametrize("name", DISCRETE)
def test_discrete_epsilon_beyond_float64_is_refused(name):
    assert _make(name, MAX_DISCRETE_EPSILON).epsilon == MAX_DISCRETE_EPSILON
    with pytest.raises(
        PrivacyParameterError, match=r"epsilon must be a number in \[2\^-52, 700\]; got 800.0 \(for \w+: beyond 700"
    ):
        _make(name, 800.0)


@pytest.mark.parametrize("name", NAMES)
def test_honest_passes_and_double_budget_fails(name):
    eps = 2.0
    if name in DISCRETE:
        assert exact_audit(_make(name, eps)) == pytest.approx(eps, rel=1e-9)
        assert exact_audit(_double_budget(name, eps)) > eps + 0.5
        return
    honest = audit_continuous(_make(name, eps), n_samples=300_000, rng=np.random.default_rng(1))
    assert honest.passed, honest
    assert honest.epsilon_lower > 0.5 * eps  # the audit has power: it sees most of the loss
    broken = audit_continuous(_double_budget(name, eps), n_samples=300_000, rng=np.random.default_rng(1))
    assert not broken.passed, broken
