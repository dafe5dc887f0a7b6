"""Every upper bound offered for a randomizer stays above the exact shuffled divergence.

The exact law of the shuffled histogram (`shuffledp.shuffle_audit`) is enumerated over
every victim pair and every multiset of the other users' inputs, for every discrete
randomizer of the registry at small n; the randomizer-specific path
(`shuffle_epsilon(params=R.amplification_parameters())`, `R.shuffle_event(n)`) and every
generic bound at the randomizer's epsilon must lie above it.  The first tests are the
counterexamples that showed the variation-ratio pair with a randomizer's own beta to be
optimistic (docs/which-bound.md).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffledp import shuffle_epsilon
from shuffledp.accounting import VariationRatioAccountant
from shuffledp.accounting.blanket import blanket_divergence, blanket_epsilon
from shuffledp.accounting.variation_ratio import hockey_stick_divergence
from shuffledp.errors import UnprovenBoundError
from shuffledp.params import BlanketDecomposition, VariationRatio
from shuffledp.randomizers import (
    BinaryRandomizedResponse,
    Geometric,
    KRandomizedResponse,
    SubsetExponential,
    UnaryEncoding,
    UnaryRR,
)
from shuffledp.shuffle_audit import exact_shuffle_delta, exact_shuffle_epsilon, iid_shuffle_delta, lump_outputs

# (k, n, eps0, eps, exact delta) found by exact enumeration and confirmed with exact fractions
COUNTEREXAMPLES = [(3, 2, 0.5, 0.35, 0.0284406391850), (6, 2, 1.0, 0.8, 0.0224839), (4, 7, 2.0, 1.8, 0.0166884)]


@pytest.mark.parametrize(("k", "n", "eps0", "eps", "exact"), COUNTEREXAMPLES)
def test_krr_small_counterexamples_are_exact_and_covered(k, n, eps0, eps, exact):
    R = KRandomizedResponse(epsilon=eps0, k=k)
    found = exact_shuffle_delta(R.transition_matrix(), n, eps).delta
    assert found == pytest.approx(exact, rel=1e-5)
    # the randomizer's own parameters now price above the truth, at that delta and at that eps
    assert blanket_divergence(R.amplification_parameters(), n, eps) >= found
    assert shuffle_epsilon(n, found, params=R.amplification_parameters()) >= eps * (1 - 1e-9)


def test_ten_rr_at_one_hundred_users_is_covered():
    """10-RR, n = 100, eps0 = 4, the 99 others on a third input: exact eps at 1e-6 is 3.460 (library gave 3.168)."""
    R = KRandomizedResponse(epsilon=4.0, k=10)
    lumped = lump_outputs(R.transition_matrix()[:3], [[0], [1], [2], list(range(3, 10))])
    assert iid_shuffle_delta(lumped[0], lumped[1], lumped[2], 100, 3.168) == pytest.approx(6.97e-5, rel=1e-3)
    eps = shuffle_epsilon(100, 1e-6, params=R.amplification_parameters())
    assert iid_shuffle_delta(lumped[0], lumped[1], lumped[2], 100, eps) <= 1e-6
    assert eps >= 3.460


def test_own_beta_variation_ratio_is_refused():
    """The two-class pair with beta below tanh(eps0/2) treats the victim's common report as invisible: not proven."""
    own = VariationRatio(p=math.e, beta=0.3, q0=math.e, q1=math.e)
    with pytest.raises(UnprovenBoundError, match="BlanketDecomposition"):
        shuffle_epsilon(1_000, 1e-6, params=own)
    # the generic parameters and the p = infinity Poisson-type parameters stay accepted
    assert shuffle_epsilon(1_000, 1e-6, params=VariationRatio.from_ldp(1.0)) > 0.0
    assert shuffle_epsilon(1_000, 1e-6, params=VariationRatio(p=math.inf, beta=0.5, q0=2.0, q1=2.0)) > 0.0


def _discrete_registry(eps0: float) -> list:
    return [
        BinaryRandomizedResponse(epsilon=eps0),
        KRandomizedResponse(epsilon=eps0, k=3),
        KRandomizedResponse(epsilon=eps0, k=4),
        UnaryEncoding(epsilon=eps0, k=3),
        UnaryEncoding(epsilon=eps0, k=3, variant="optimized"),
        SubsetExponential(epsilon=eps0, k=4, size_in=1, size_out=2),
        Geometric(epsilon=eps0, low=0, high=2),
        Geometric(epsilon=eps0, low=0, high=3),
        UnaryRR(epsilon=eps0, k=2),
    ]


@pytest.mark.parametrize("eps0", [0.5, 1.0, 2.0, 4.0])
def test_every_discrete_randomizer_is_priced_above_its_exact_divergence(eps0):
    for R in _discrete_registry(eps0):
        M = R.transition_matrix()
        params = R.amplification_parameters()
        assert isinstance(params, BlanketDecomposition)
        for n in (2, 3, 4, 5):
            if M.shape[1] >= 8 and n > 4:
                continue
            for frac in (0.05, 0.3, 0.7):
                eps = frac * eps0
                exact = exact_shuffle_delta(M, n, eps).delta
                assert blanket_divergence(params, n, eps) >= exact - 1e-13, (R, n, eps)


@pytest.mark.parametrize(
    "R", [KRandomizedResponse(epsilon=2.0, k=3), UnaryEncoding(epsilon=1.0, k=3), Geometric(epsilon=1.0, low=0, high=2)]
)
def test_every_offered_epsilon_is_above_the_exact_epsilon(R):
    """shuffle_epsilon with the randomizer's parameters, the accountant on its event, and each generic method."""
    M = R.transition_matrix()
    for n in (3, 5):
        delta = 1e-3
        exact = exact_shuffle_epsilon(M, n, delta, rtol=1e-6)
        assert shuffle_epsilon(n, delta, params=R.amplification_parameters()) >= exact
        assert VariationRatioAccountant().compose(R.shuffle_event(n)).get_epsilon(delta) >= exact
        for method in ("variation-ratio", "stronger-clones", "clones"):
            assert shuffle_epsilon(n, delta, eps0=R.epsilon, method=method) >= exact, method


def test_specific_bound_is_at_most_the_generic_bound():
    """A randomizer's own decomposition never prices worse than the generic eps0-LDP (stronger-clone) pair."""
    for eps0 in (0.5, 2.0, 5.0):
        for n in (10, 1_000, 100_000):
            generic = blanket_epsilon(BlanketDecomposition.from_ldp(eps0), n, 1e-6)
            for R in _discrete_registry(eps0):
                assert blanket_epsilon(R.amplification_parameters(), n, 1e-6) <= generic * (1 + 1e-9)


def test_the_harness_catches_an_optimistic_bound():
    """The two-class pair with k-RR's own beta (the old path) and an understated beta both fall below the truth."""
    R = KRandomizedResponse(epsilon=1.0, k=4)
    M = R.transition_matrix()
    honest = R.amplification_parameters()
    p = math.e
    old_pair = VariationRatio(p=p, beta=honest.beta, q0=p, q1=p)
    understated = BlanketDecomposition(eps0=1.0, beta=0.8 * honest.beta, common_ratio=1.0)
    for n in (3, 5):
        exact = [exact_shuffle_delta(M, n, eps).delta for eps in (0.1, 0.3, 0.6)]
        old = [hockey_stick_divergence(old_pair, n, eps)[1] for eps in (0.1, 0.3, 0.6)]
        low = [blanket_divergence(understated, n, eps) for eps in (0.1, 0.3, 0.6)]
        assert max(e - o for e, o in zip(exact, old)) > 1e-4
        assert max(e - b for e, b in zip(exact, low)) > 1e-3


def test_krr_bound_is_exact_for_two_users():
    """For two users the blanket is tight on k-RR: the bound equals the exact worst case."""
    for k, eps0 in ((3, 0.5), (6, 1.0), (10, 3.0)):
        R = KRandomizedResponse(epsilon=eps0, k=k)
        for eps in (0.1 * eps0, 0.5 * eps0):
            exact = exact_shuffle_delta(R.transition_matrix(), 2, eps).delta
            assert blanket_divergence(R.amplification_parameters(), 2, eps) == pytest.approx(exact, rel=1e-9, abs=1e-15)


def _segmented_exact_delta(lam: float, d: int, n_users: int, m: float, eps: float) -> float:
    """Algorithm 2 (one item per user) by exact enumeration: Poisson reports plus Binom(ceil(m), m/ceil(m))
    blanket messages uniform over d items per user; worst over the others' items."""
    import itertools

    from shuffledp.shuffle_audit import _pair_delta as pair_delta
    from shuffledp.shuffle_audit import histogram_law

    c = math.ceil(m)
    blank = np.concatenate(([1.0 - m / c], np.full(d, m / c / d)))  # column 0: no message

    def row(x: int) -> np.ndarray:
        r = np.zeros(d + 1)
        r[0], r[1 + x] = 1.0 - lam, lam
        return r

    base = n_users * (1 + c) + 1
    worst = 0.0
    for others in itertools.combinations_with_replacement(range(d), n_users - 1):
        law = histogram_law(np.array([row(x) for x in others] + [blank] * (n_users * c)), base)
        worst = max(worst, pair_delta(law, row(0), row(1), eps, base))
    return worst


@pytest.mark.parametrize("d", [2, 3])
def test_segmented_items_are_priced_above_algorithm_2(d):
    """The two-count pair of Theorem 2 / Lemma 3 missed the blankets on the other d - 2 items (0.037 < 0.133)."""
    from shuffledp.accounting.segmented import item_event, proposition1_lower

    for lam in (0.3, 0.7, 1.0):
        for n_users in (2, 3):
            for m in (0.5, 1.0, 1.5):
                acc = VariationRatioAccountant().compose(item_event(lam, d, n_users, m))
                for eps in (0.2, 0.7, 1.5, 3.0):
                    exact = _segmented_exact_delta(lam, d, n_users, m, eps)
                    assert acc.get_delta(eps) >= exact - 1e-12, (lam, n_users, m, eps)
                low = proposition1_lower(lam, d, n_users, m, 0.05)  # the true eps at delta = 0.05 is at least this
                below = 50.0 if math.isinf(low) else low * (1 - 1e-6)
                assert low == 0.0 or _segmented_exact_delta(lam, d, n_users, m, below) > 0.05


def test_segmented_counterexample_to_the_two_count_pair():
    assert _segmented_exact_delta(0.3, 3, 2, 1.0, 3.0) == pytest.approx(
        0.3 * (2 / 3) ** 2, rel=1e-9
    )  # no blanket on x1
    # the old item_event: lambda d = 0.9 < gamma = 1, priced as lambda' = gamma/d = 1/3 with (p, q) = (inf, 1)
    old = hockey_stick_divergence(VariationRatio(p=math.inf, beta=1 / 3, q0=1.0, q1=1.0), 3, 3.0)[1]
    assert old == pytest.approx((1 / 3) ** 3, rel=1e-6)  # needs both blankets on x0: 0.037 < 0.133


def _rr_row(eps: float, k: int, x: int) -> np.ndarray:
    row = np.full(k, 1.0 / (math.exp(eps) + k - 1))
    row[x] = math.exp(eps) / (math.exp(eps) + k - 1)
    return row


def _personalized_exact_delta(victim: float, others: list[float], k: int, eps: float) -> float:
    """Exact worst divergence when every user runs k-RR (binary RR for k = 2) at its own budget."""
    import itertools

    from shuffledp.shuffle_audit import _pair_delta as pair_delta
    from shuffledp.shuffle_audit import histogram_law

    base = len(others) + 2
    worst = 0.0
    for inputs in itertools.product(range(min(k, 3)), repeat=len(others)):
        rows = np.array([_rr_row(b, k, x) for b, x in zip(others, inputs)]) if others else np.zeros((0, k))
        law = histogram_law(rows, base) if others else (np.zeros(1, dtype=np.int64), np.ones(1))
        worst = max(worst, pair_delta(law, _rr_row(victim, k, 0), _rr_row(victim, k, 1), eps, base))
    return worst


@pytest.mark.parametrize(("family", "k"), [("binary-rr", 2), ("k-rr", 3), ("k-rr", 4)])
def test_personalized_budgets_are_priced_above_the_exact_divergence(family, k):
    from shuffledp.accounting.events import PersonalizedShuffleEvent

    cases = [(1.0, [0.5, 2.0, 2.0]), (2.0, [1.0, 1.0, 3.0, 0.3]), (0.5, [4.0, 4.0]), (3.0, [0.2, 0.2, 0.2])]
    for victim, others in cases:
        event = PersonalizedShuffleEvent.from_budgets(victim, others, family, None if family == "binary-rr" else k)
        acc = VariationRatioAccountant().compose(event)
        for frac in (0.1, 0.4, 0.8):
            eps = frac * victim
            assert acc.get_delta(eps) >= _personalized_exact_delta(victim, others, k, eps) - 1e-12, (
                victim,
                others,
                eps,
            )


def test_personalized_binary_rr_lower_bound_is_below_the_exact_epsilon():
    from shuffledp.accounting.events import PersonalizedShuffleEvent

    for victim, others in ((1.0, [0.5, 2.0, 2.0]), (2.0, [1.0, 1.0, 3.0, 0.3]), (3.0, [0.2, 0.2, 0.2])):
        acc = VariationRatioAccountant().compose(PersonalizedShuffleEvent.from_budgets(victim, others))
        for delta in (1e-3, 0.05):
            low = acc.get_epsilon_lower(delta)
            assert low == 0.0 or _personalized_exact_delta(victim, others, 2, low * (1 - 1e-6)) > delta


@pytest.mark.parametrize("norm", ["linf", "l2"])
def test_minkowski_response_upper_bound_is_above_its_discretised_lower_bound(norm):
    from shuffledp.randomizers import MinkowskiResponse
    from shuffledp.shuffle_audit import minkowski_lower_delta

    for eps0 in (0.5, 2.0, 3.4, 6.0):
        R = MinkowskiResponse(epsilon=eps0, dim=2, norm=norm)
        for n in (2, 10, 200):
            for frac in (0.05, 0.3, 0.7):
                eps = frac * eps0
                assert blanket_divergence(R.amplification_parameters(), n, eps) >= minkowski_lower_delta(R, n, eps)


def test_laplace_upper_bound_is_above_its_discretised_lower_bound():
    """One-dimensional Laplace, reports cut at 0: the two-cell histogram is a post-processing of the output."""
    from shuffledp.randomizers import Laplace

    for eps0 in (0.5, 2.0, 5.0):
        R = Laplace(epsilon=eps0, dim=1)
        tail = 0.5 * math.exp(-1.0 / R.scale)  # P[-1 + noise >= 0]
        row0, row1 = np.array([1 - tail, tail]), np.array([tail, 1 - tail])
        for n in (2, 10, 300):
            for frac in (0.05, 0.3, 0.7):
                eps = frac * eps0
                lower = iid_shuffle_delta(row0, row1, row0, n, eps)
                assert blanket_divergence(R.amplification_parameters(), n, eps) >= lower
