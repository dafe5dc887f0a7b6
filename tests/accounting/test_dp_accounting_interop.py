"""Our PLDs in Google's dp-accounting and back (issue 22, deliverable 3; the optional extra ``shuffledp[interop]``).

(a) ours -> theirs -> ours keeps delta(eps), the mass at infinity and the round-off allowance; another
discretisation interval only rounds losses up; dp-accounting refuses mixed intervals and the re-grid fixes it.
(b) A user's budget: our shuffled round composed 10x with a Gaussian (DP-SGD) in dp-accounting equals the same
composition in our engine.  (c) Poisson-sampled binary RR (alone, and shuffled among 20): our sampled PLD is never
more optimistic than dp-accounting's PLD of the explicit Poisson pair (gamma P + (1 - gamma) Q, Q) and its reverse,
by more than dp-accounting's rounding slack (one grid step per composed round).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

pytest.importorskip("dp_accounting", reason="dp-accounting is the optional extra: pip install 'shuffledp[interop]'")

from dp_accounting import GaussianDpEvent, NeighboringRelation  # noqa: E402
from dp_accounting.pld import PLDAccountant as TheirAccountant  # noqa: E402
from dp_accounting.pld import privacy_loss_distribution as dpa  # noqa: E402

from shuffledp.accounting.events import SampledEvent, SelfComposedEvent, ShuffleEvent  # noqa: E402
from shuffledp.accounting.interop import compose_into_accountant  # noqa: E402
from shuffledp.accounting.pld import PrivacyLossDistribution  # noqa: E402
from shuffledp.accounting.pld_accountant import PLDAccountant  # noqa: E402
from shuffledp.accounting.release import shuffle_pld  # noqa: E402
from shuffledp.errors import PrivacyParameterError  # noqa: E402
from shuffledp.params import VariationRatio  # noqa: E402

EPSILONS = (0.0, 0.05, 0.1, 0.2, 0.5, 1.0)
FLOAT = 1e-13  # float64 noise of a delta (sums of <= 10^5 terms)


@pytest.fixture(scope="module")
def shuffled() -> PrivacyLossDistribution:
    """One shuffled round, n = 10,000 at eps0 = 2, on dp-accounting's default grid 1e-4."""
    return shuffle_pld(10_000, eps0=2.0, step=1e-4)


def _toy() -> PrivacyLossDistribution:
    """A PLD whose mass at infinity and round-off allowance both matter to delta."""
    return PrivacyLossDistribution(
        step=0.01, offset=-20, pmf=np.full(41, (1.0 - 1e-6) / 41), inf_mass=1e-6, roundoff=3e-7
    )


# (a) round trips --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["toy", "shuffled"])
def test_round_trip_keeps_delta(which, shuffled):
    ours = _toy() if which == "toy" else shuffled
    theirs = ours.to_dp_accounting()
    back = PrivacyLossDistribution.from_dp_accounting(theirs)
    assert (back.step, back.offset, back.pmf.size) == (ours.step, ours.offset, ours.pmf.size)
    for eps in EPSILONS:
        assert theirs.get_delta_for_epsilon(eps) == pytest.approx(ours.delta(eps), rel=1e-12, abs=FLOAT)
        assert back.delta(eps) == pytest.approx(ours.delta(eps), rel=1e-12, abs=FLOAT)
    # the roundoff allowance lives on as mass at infinity: delta is never below inf_mass + roundoff
    assert back.inf_mass == pytest.approx(ours.inf_mass + ours.roundoff, rel=1e-12, abs=1e-300)
    for delta in (1e-3, 1e-5):
        if delta > ours.inf_mass + ours.roundoff:
            assert theirs.get_epsilon_for_delta(delta) == pytest.approx(ours.epsilon(delta), rel=1e-6, abs=1e-9)


def test_roundoff_and_infinity_mass_survive_composition():
    """Composed in dp-accounting, the toy's r and a are still charged: delta at a large eps is 1 - (1 - a - r)^k."""
    ours = _toy()
    theirs = ours.to_dp_accounting().self_compose(5)
    expected = 1.0 - (1.0 - ours.inf_mass - ours.roundoff) ** 5
    assert theirs.get_delta_for_epsilon(10.0) >= expected * (1.0 - 1e-9)
    assert ours.compose(5).delta(10.0) >= expected * (1.0 - 1e-9)  # ours charges r additively: >= the same


def test_another_interval_rounds_losses_up(shuffled):
    for h in (3e-4, 2.5e-5):  # coarser, and finer (4 cells per step: exact)
        theirs = shuffled.to_dp_accounting(value_discretization_interval=h)
        for eps in EPSILONS:
            got = theirs.get_delta_for_epsilon(eps)
            assert got >= shuffled.delta(eps) - FLOAT  # never optimistic
            # slack: every loss moved up by less than one new cell
            assert got <= shuffled.delta(eps - h) + 1e-9 * h + FLOAT


def test_mismatched_intervals_are_refused_then_regridded(shuffled):
    gauss = dpa.from_gaussian_mechanism(8.0, value_discretization_interval=3e-4)
    with pytest.raises(ValueError, match="Discretization intervals are different"):
        shuffled.to_dp_accounting().compose(gauss)
    composed = shuffled.to_dp_accounting(value_discretization_interval=3e-4).compose(gauss)
    assert composed.get_epsilon_for_delta(1e-6) > shuffled.epsilon(1e-6)
    # ours refuses too, and the step= of from_dp_accounting moves theirs onto our grid
    with pytest.raises(PrivacyParameterError, match="share one loss step"):
        PrivacyLossDistribution.compose_all([(shuffled, 1), (PrivacyLossDistribution.from_dp_accounting(gauss), 1)])
    with pytest.raises(PrivacyParameterError, match="coarser interval"):
        shuffled.to_dp_accounting(value_discretization_interval=1e-12)
    moved = PrivacyLossDistribution.from_dp_accounting(gauss, step=shuffled.step)
    for eps in EPSILONS:
        assert moved.delta(eps) >= gauss.get_delta_for_epsilon(eps) - FLOAT


def test_asymmetric_pld_needs_a_direction():
    sub = dpa.from_gaussian_mechanism(1.0, value_discretization_interval=1e-3, sampling_prob=0.1)
    with pytest.raises(PrivacyParameterError, match="asymmetric"):
        PrivacyLossDistribution.from_dp_accounting(sub)
    with pytest.raises(PrivacyParameterError, match="direction"):
        PrivacyLossDistribution.from_dp_accounting(sub, direction="both")
    remove = PrivacyLossDistribution.from_dp_accounting(sub, direction="remove")
    add = PrivacyLossDistribution.from_dp_accounting(sub, direction="add")
    for eps in EPSILONS:
        mine = max(remove.delta(eps), add.delta(eps))
        assert mine == pytest.approx(sub.get_delta_for_epsilon(eps), rel=1e-9, abs=FLOAT)
    # and back: ours as "remove" with an explicit "add" is asymmetric in theirs, priced by the larger
    again = remove.to_dp_accounting(add=add)
    assert again.get_delta_for_epsilon(0.5) == pytest.approx(sub.get_delta_for_epsilon(0.5), rel=1e-9)


def test_optimistic_pld_is_refused():
    optimistic = dpa.from_gaussian_mechanism(2.0, value_discretization_interval=1e-3, pessimistic_estimate=False)
    with pytest.raises(PrivacyParameterError, match="optimistic"):
        PrivacyLossDistribution.from_dp_accounting(optimistic)


# (b) a user's budget: shuffled rounds and DP-SGD ------------------------------------------------------------


def test_shuffled_rounds_with_gaussian_compose_alike(shuffled):
    """10 shuffled rounds (substitution) and 10 Gaussian steps (REPLACE_ONE), composed in each library."""
    gauss = dpa.from_gaussian_mechanism(
        20.0, value_discretization_interval=1e-4, neighboring_relation=NeighboringRelation.REPLACE_ONE
    )
    theirs = shuffled.to_dp_accounting().compose(gauss).self_compose(10)
    ours = PrivacyLossDistribution.compose_all(
        [(shuffled, 10), (PrivacyLossDistribution.from_dp_accounting(gauss), 10)]
    )
    # the same convolution: ours is theirs plus our charged FFT round-off allowance (about 1e-11 here)
    assert 0.0 < ours.roundoff < 1e-9
    for eps in (0.0, 0.5, 1.0, 1.5):
        assert theirs.get_delta_for_epsilon(eps) == pytest.approx(ours.delta(eps) - ours.roundoff, abs=FLOAT)
    for delta in (1e-5, 1e-6, 1e-8):
        e_theirs, e_ours = theirs.get_epsilon_for_delta(delta), ours.epsilon(delta)
        assert e_theirs - 1e-9 <= e_ours <= e_theirs + 1e-4  # within one grid step, ours never below
    # the Gaussian matters and so do the shuffled rounds
    assert ours.epsilon(1e-6) > shuffled.compose(10).epsilon(1e-6) + 0.05


def test_their_accountant_takes_our_rounds(shuffled):
    """dp_accounting.pld.PLDAccountant: 10 Gaussian steps as one event, then our 10 shuffled rounds."""
    acc = TheirAccountant(NeighboringRelation.REPLACE_ONE, value_discretization_interval=1e-4)
    acc.compose(GaussianDpEvent(20.0), 10)
    compose_into_accountant(acc, shuffled, count=10)
    # theirs composes k Gaussian steps as one Gaussian of sd sigma / sqrt(k): the same here
    one_gauss = dpa.from_gaussian_mechanism(
        20.0 / math.sqrt(10), value_discretization_interval=1e-4, neighboring_relation=NeighboringRelation.REPLACE_ONE
    )
    ours = PrivacyLossDistribution.compose_all(
        [(shuffled, 10), (PrivacyLossDistribution.from_dp_accounting(one_gauss), 1)]
    )
    for delta in (1e-6, 1e-8):
        assert acc.get_epsilon(delta) - 1e-9 <= ours.epsilon(delta) <= acc.get_epsilon(delta) + 1e-4
    for eps in (0.5, 1.0):
        assert acc.get_delta(eps) == pytest.approx(ours.delta(eps) - ours.roundoff, abs=FLOAT)
    with pytest.raises(PrivacyParameterError, match="PLDAccountant"):
        compose_into_accountant(object(), shuffled)
    # a different grid is re-gridded (rounded up), not refused
    coarse = TheirAccountant(NeighboringRelation.REPLACE_ONE, value_discretization_interval=1e-3)
    assert compose_into_accountant(coarse, shuffled).get_epsilon(1e-6) >= shuffled.epsilon(1e-6) - 1e-12


# (c) Poisson-sampled binary RR against dp-accounting's explicit pair ---------------------------------------


def _rr_counts(eps0: float, n: int, ones: int) -> tuple[np.ndarray, np.ndarray]:
    """Laws of the count of ones of n shuffled binary-RR bits, the victim on input 1 (P) and on 0 (Q), ``ones``
    of the other n - 1 on input 1."""
    p = math.exp(eps0) / (1.0 + math.exp(eps0))
    others = np.convolve(
        stats.binom.pmf(np.arange(ones + 1), ones, p), stats.binom.pmf(np.arange(n - ones), n - 1 - ones, 1 - p)
    )
    on1 = np.append(0.0, others) * p + np.append(others, 0.0) * (1 - p)
    on0 = np.append(0.0, others) * (1 - p) + np.append(others, 0.0) * p
    return on1, on0


def _their_poisson_pld(p_law: np.ndarray, q_law: np.ndarray, gamma: float, h: float):
    """dp-accounting's PLD of Poisson sampling at gamma of the explicit pair (P, Q), Q the victim's dummy report:
    remove (gamma P + (1 - gamma) Q, Q) and add (Q, gamma P + (1 - gamma) Q)."""
    mix = gamma * p_law + (1.0 - gamma) * q_law
    with np.errstate(divide="ignore"):
        log_q = {k: float(v) for k, v in enumerate(np.log(q_law))}
        log_mix = {k: float(v) for k, v in enumerate(np.log(mix))}
    return dpa.from_two_probability_mass_functions(log_q, log_mix, value_discretization_interval=h, symmetric=False)


def _ours(eps0: float, n: int, gamma: float, rounds: int, h: float) -> PLDAccountant:
    population = round(n / gamma)
    event = SampledEvent(ShuffleEvent(VariationRatio.from_ldp(eps0), n), n, population, "poisson")
    assert event.rate == pytest.approx(gamma)
    return PLDAccountant(step=h).compose(SelfComposedEvent(event, rounds) if rounds > 1 else event)


CASES = [(eps0, gamma) for eps0 in (0.5, 1.0, 3.0) for gamma in (0.01, 0.1, 0.5)]


@pytest.mark.parametrize(("eps0", "gamma"), CASES)
def test_poisson_binary_rr_never_more_optimistic_than_dp_accounting(eps0, gamma):
    """One user (n = 1: the shuffle is the report itself), one round and 10 rounds; our grid 1e-3, theirs 1e-4."""
    h = 1e-4
    on1, on0 = _rr_counts(eps0, 1, 0)
    for rounds in (1, 10):
        ours = _ours(eps0, 1, gamma, rounds, 1e-3)
        theirs = _their_poisson_pld(on1, on0, gamma, h)
        if rounds > 1:
            theirs = theirs.self_compose(rounds)
        slack = rounds * h  # theirs rounds every loss up by < h: the truth at eps is >= theirs at eps + rounds h
        for eps in np.linspace(0.0, rounds * math.log1p(gamma * math.expm1(eps0)), 9):
            assert ours.get_delta(float(eps)) >= theirs.get_delta_for_epsilon(float(eps) + slack) - FLOAT
        for delta in (1e-2, 1e-4, 1e-6):
            assert ours.get_epsilon(delta) >= theirs.get_epsilon_for_delta(delta) - slack - 1e-9


@pytest.mark.parametrize(("eps0", "gamma"), [(1.0, 0.1), (3.0, 0.2)])
def test_poisson_shuffled_binary_rr_never_more_optimistic_than_dp_accounting(eps0, gamma):
    """n = 20 shuffled bits: the exact count-of-ones pair for several inputs of the others, against our bound (the
    worst case over all of them)."""
    n, h = 20, 1e-5
    ours = _ours(eps0, n, gamma, 1, 1e-3)
    for ones in (0, n // 2, n - 1):
        theirs = _their_poisson_pld(*_rr_counts(eps0, n, ones), gamma, h)
        for eps in (0.0, 0.02, 0.05, 0.1, 0.2):
            assert ours.get_delta(eps) >= theirs.get_delta_for_epsilon(eps + h) - FLOAT
        for delta in (1e-3, 1e-6):
            assert ours.get_epsilon(delta) >= theirs.get_epsilon_for_delta(delta) - h - 1e-9
