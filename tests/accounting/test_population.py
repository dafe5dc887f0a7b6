"""PIC §5.3 anonymous populations and §8 linked reports (key reuse)."""

import itertools
import math

import numpy as np
import pytest

from shuffledp.accounting import VariationRatio, shuffle_epsilon
from shuffledp.accounting.blanket import blanket_divergence
from shuffledp.accounting.population import anonymous_population, matching_population
from shuffledp.errors import PrivacyParameterError
from shuffledp.params import BlanketDecomposition
from shuffledp.randomizers.categorical import KRandomizedResponse
from shuffledp.shuffle_audit import exact_shuffle_delta


def test_anonymous_population_counts():
    assert anonymous_population(1000) == 1000
    assert anonymous_population(1000, corrupted=100) == 900
    assert anonymous_population(1000, corrupted=100, deanonymized=50) == 850
    assert matching_population(1000, 100) == 800
    assert anonymous_population(5, corrupted=4) == 1  # all but the victim: no amplification left


@pytest.mark.parametrize(
    "args, message",
    [
        ((10, 10), r"corrupted \+ deanonymized = 10 must be < group_size = 10"),
        ((10, 6, 5), r"corrupted \+ deanonymized = 11"),
        ((0,), r"group_size must be an integer in \[1, inf\); got 0"),
        ((10, -1), r"corrupted must be an integer in \[0, inf\); got -1"),
        ((10, 1, 2.5), r"deanonymized must be an integer in \[0, inf\); got 2.5"),
    ],
)
def test_anonymous_population_rejects_impossible_counts(args, message):
    with pytest.raises(PrivacyParameterError, match=message):
        anonymous_population(*args)


def test_fewer_anonymous_users_means_less_amplification():
    eps = [shuffle_epsilon(anonymous_population(10_000, c), 1e-6, eps0=2.0) for c in (0, 5_000, 9_000)]
    assert eps[0] < eps[1] < eps[2]


def _product_table(P: np.ndarray, k: int) -> np.ndarray:
    """Transition matrix of k independent uses of P on the same input (outputs are k-tuples)."""
    rows = []
    for x in range(P.shape[0]):
        rows.append([math.prod(P[x, y] for y in ys) for ys in itertools.product(range(P.shape[1]), repeat=k)])
    return np.array(rows)


@pytest.mark.parametrize("eps, k_cats, k", [(1.0, 3, 2), (0.5, 4, 3), (2.0, 2, 4)])
def test_linked_parameters_bound_the_exact_product_randomizer(eps, k_cats, k, common_ratio):
    R = KRandomizedResponse(eps, k_cats)
    P = np.full((k_cats, k_cats), R.p_other) + np.eye(k_cats) * (R.p_true - R.p_other)
    T = _product_table(P, k)
    linked = R.amplification_parameters().linked(k)
    assert isinstance(linked, BlanketDecomposition)
    ratio = max(T[a, y] / T[b, y] for a in range(k_cats) for b in range(k_cats) for y in range(T.shape[1]))
    tv = max(0.5 * np.abs(T[a] - T[b]).sum() for a in range(k_cats) for b in range(k_cats))
    assert ratio <= math.exp(linked.eps0) * (1 + 1e-12) and linked.eps0 == pytest.approx(k * eps)
    assert tv <= linked.beta * (1 + 1e-12)
    # of the product's common part only the LDP guarantee is claimed; it must cover the table's own ratio
    assert common_ratio(T, linked.eps0) <= linked.common_ratio * (1 + 1e-12)
    assert linked.common_ratio <= math.exp(k * eps) * (1 + 1e-12)
    # and the parameters price the shuffled product randomizer above its exact divergence
    if T.shape[1] <= 16:
        for n in (2, 3):
            for frac in (0.1, 0.4):
                exact = exact_shuffle_delta(T, n, frac * linked.eps0).delta
                assert blanket_divergence(linked, n, frac * linked.eps0) >= exact - 1e-13, (n, frac)


def test_linked_is_at_least_as_tight_as_the_papers_k_eps0_message():
    vr = VariationRatio.from_ldp(1.0)
    assert vr.linked(1) is vr
    for k in (2, 5):
        linked = vr.linked(k)
        generic = VariationRatio.from_ldp(k * 1.0)
        assert math.exp(linked.eps0) == pytest.approx(generic.p) and linked.beta <= generic.beta
        assert shuffle_epsilon(10_000, 1e-6, params=linked) <= shuffle_epsilon(10_000, 1e-6, params=generic)
    tighter = VariationRatio.from_pq(math.e, 0.1, math.e).linked(3)
    assert tighter.beta == pytest.approx(1 - 0.9**3)
    assert tighter == BlanketDecomposition(eps0=1.0, beta=0.1).linked(3)  # the same product randomizer


def test_linked_poisson_and_bad_k():
    poisson = VariationRatio.from_pq(math.inf, 0.3, 4.0).linked(2)
    assert math.isinf(poisson.p) and poisson.beta == pytest.approx(0.51) and poisson.q == 16.0
    with pytest.raises(PrivacyParameterError, match=r"k must be an integer in \[1, inf\); got 0"):
        VariationRatio.from_ldp(1.0).linked(0)
