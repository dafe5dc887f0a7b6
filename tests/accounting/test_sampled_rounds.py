"""Sampled shuffled rounds (issue 22): events, never below the exact mechanism, compositions above the exact
composition of the dominating pair, and the one-relation rule."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import signal, stats

from shuffledp.accounting import events as E
from shuffledp.accounting.accountants import VariationRatioAccountant, calibrate
from shuffledp.accounting.dominating_pair import DominatingPair, pair_cells
from shuffledp.accounting.pld_accountant import PLDAccountant
from shuffledp.accounting.subsampling import SampledProfile, sampled_pld
from shuffledp.errors import PrivacyParameterError, UnsupportedEventError
from shuffledp.params import BlanketDecomposition, VariationRatio
from shuffledp.randomizers import BinaryRandomizedResponse


def _sampled(eps0, m, population, scheme="fixed-size", params=None):
    params = params if params is not None else VariationRatio.from_ldp(eps0)
    return E.SampledEvent(E.ShuffleEvent(params, m), m, population, scheme)


# --- the event ------------------------------------------------------------------------------------------


def test_sampled_event_is_frozen_hashable_and_round_trips_through_json():
    ev = _sampled(2.0, 100, 1_000, "poisson")
    assert hash(ev) == hash(_sampled(2.0, 100, 1_000, "poisson"))
    assert E.event_from_json(E.event_to_json(ev)) == ev
    composed = E.SelfComposedEvent(E.ComposedEvent([ev, _sampled(1.0, 50, 1_000, "poisson")]), 3)
    assert E.event_from_json(E.event_to_json(composed)) == composed
    linked = E.SampledEvent(E.LinkedEvent(E.ShuffleEvent(VariationRatio.from_ldp(1.0), 100), 2), 100, 400)
    assert E.event_from_dict(E.event_to_dict(linked)) == linked
    with pytest.raises(AttributeError):
        ev.population = 5  # type: ignore[misc]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sample_size": 0}, r"sample_size must be an integer in \[1, inf\); got 0"),
        ({"sample_size": 2_000}, "sample_size must be at most population=1000"),
        ({"sample_size": 50}, "its event's n must be at most 50, got n=100"),
        ({"scheme": "bernoulli"}, "sampling scheme must be one of fixed-size, poisson, got 'bernoulli'"),
        ({"population": "1000"}, "population"),
    ],
)
def test_sampled_event_refuses_bad_parameters_naming_them(kwargs, message):
    args = {"event": E.ShuffleEvent(VariationRatio.from_ldp(1.0), 100), "sample_size": 100, "population": 1_000}
    args.update(kwargs)
    with pytest.raises(PrivacyParameterError, match=message):
        E.SampledEvent(**args)


def test_sampled_event_samples_only_a_shuffled_release():
    inner = E.ShuffleEvent(VariationRatio.from_ldp(1.0), 10)
    with pytest.raises(PrivacyParameterError, match="SampledEvent samples a shuffled release"):
        E.SampledEvent(E.SelfComposedEvent(inner, 2), 10, 100)


def test_rounds_under_different_relations_are_not_composed():
    poisson, fixed = _sampled(1.0, 100, 1_000, "poisson"), _sampled(1.0, 100, 1_000)
    acc = PLDAccountant().compose(poisson)
    with pytest.raises(UnsupportedEventError, match="different neighbouring relations"):
        acc.compose(fixed)
    assert not PLDAccountant().supports(E.ComposedEvent([poisson, E.ShuffleEvent(VariationRatio.from_ldp(1.0), 100)]))
    assert PLDAccountant().supports(E.ComposedEvent([fixed, E.ShuffleEvent(VariationRatio.from_ldp(1.0), 100)]))


# --- single rounds against the exact mechanism -----------------------------------------------------------


def _count_law(probs_one: np.ndarray) -> np.ndarray:
    """Law of the number of 1-reports of independent reporters (Poisson-binomial), exactly by convolution."""
    law = np.array([1.0])
    for p in probs_one:
        law = np.convolve(law, [1.0 - p, p])
    return law


def _hockey(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    return float(np.sum(np.maximum(p - math.exp(eps) * q, 0.0)))


def _fixed_size_law(victim: int, ones: int, population: int, m: int, p1: float) -> np.ndarray:
    """Exact law of the count of 1-reports when m of `population` users are sampled without replacement
    (the victim with input `victim`, `ones` of the others with input 1) and binary RR with P[1 | 1] = p1."""
    others = population - 1
    law = np.zeros(m + 1)
    # victim sampled (prob m/N): m - 1 others; else m others; i of the sampled others have input 1
    for victim_in, size, weight in ((True, m - 1, m / population), (False, m, 1.0 - m / population)):
        if weight <= 0.0:
            continue
        hyper = stats.hypergeom(others, ones, size)
        for i in range(max(0, size - (others - ones)), min(size, ones) + 1):
            probs = [p1] * i + [1.0 - p1] * (size - i)
            if victim_in:
                probs.append(p1 if victim == 1 else 1.0 - p1)
            sub = _count_law(np.array(probs))
            law[: sub.size] += weight * hyper.pmf(i) * sub
    return law


@pytest.mark.parametrize("population", [2, 5, 8, 12])
@pytest.mark.parametrize("eps0", [0.5, 2.0])
def test_fixed_size_round_is_never_below_the_exact_mechanism(population, eps0):
    """Every sample size 1..N, every assignment of the others (by count), both orders, several epsilons."""
    rr = BinaryRandomizedResponse(epsilon=eps0)
    p1 = math.exp(eps0) / (math.exp(eps0) + 1.0)
    for m in range(1, population + 1):
        for params in (VariationRatio.from_ldp(eps0), rr.amplification_parameters()):
            ev = _sampled(eps0, m, population, params=params)
            acc = VariationRatioAccountant().compose(ev)
            for ones in range(population):
                law0 = _fixed_size_law(0, ones, population, m, p1)
                law1 = _fixed_size_law(1, ones, population, m, p1)
                for eps in (0.0, 0.05, 0.2, 0.6, 1.5):
                    exact = max(_hockey(law0, law1, eps), _hockey(law1, law0, eps))
                    assert acc.get_delta(eps) >= exact - 1e-12, (m, ones, eps, params)


def _poisson_law(victim: int | None, ones: int, population: int, rate: float, p1: float, dummy: int) -> np.ndarray:
    """Every one of the N devices sends a report: sampled (prob rate) its own input's RR, else RR of the dummy
    input; a removed record (victim None) sends only dummies."""

    def one(x):
        return p1 if x == 1 else 1.0 - p1

    probs = [rate * one(1) + (1 - rate) * one(dummy)] * ones
    probs += [rate * one(0) + (1 - rate) * one(dummy)] * (population - 1 - ones)
    probs.append(one(dummy) if victim is None else rate * one(victim) + (1 - rate) * one(dummy))
    return _count_law(np.array(probs))


@pytest.mark.parametrize("population", [3, 7, 12])
def test_poisson_round_is_never_below_the_exact_mechanism(population):
    eps0 = 1.5
    p1 = math.exp(eps0) / (math.exp(eps0) + 1.0)
    for m in range(1, population + 1):
        acc = VariationRatioAccountant().compose(_sampled(eps0, m, population, "poisson"))
        rate = m / population
        for ones in range(population):
            for dummy in (0, 1):
                absent = _poisson_law(None, ones, population, rate, p1, dummy)
                for victim in (0, 1):
                    present = _poisson_law(victim, ones, population, rate, p1, dummy)
                    for eps in (0.0, 0.1, 0.4, 1.0):
                        exact = max(_hockey(present, absent, eps), _hockey(absent, present, eps))
                        assert acc.get_delta(eps) >= exact - 1e-12, (m, ones, dummy, victim, eps)


# --- compositions against the exact composition of the dominating pair -----------------------------------


def _pair_losses(eps0: float, n: int, rate: float) -> tuple[np.ndarray, np.ndarray]:
    """Losses and P-masses of (rate P + (1 - rate) Q, Q) for the generic pair of n reports (both orders
    of a round are dominated by the PLD the accountant builds, so it dominates this pair too)."""
    cells = pair_cells(DominatingPair.clones(eps0, n, stronger=True), 1e-300)
    p, q = (np.concatenate(part) for part in zip(*cells))
    keep = q > 0.0
    mixed = rate * p[keep] + (1.0 - rate) * q[keep]
    return np.log(mixed) - np.log(q[keep]), mixed


def _lower_composed_delta(losses, masses, rounds: int, eps: float, grid: float) -> float:
    """A lower bound on the exact composed delta: losses rounded *down* to a coarse grid (a dominated PLD),
    composed by repeated squaring with FFT convolutions, each charged its round-off (subtracted)."""
    idx = np.floor(losses / grid).astype(np.int64)
    base = int(idx.min())
    pmf = np.bincount(idx - base, weights=masses)
    result, offset, power, power_off, k, err = np.array([1.0]), 0, pmf, base, rounds, 0.0
    while k:
        if k & 1:
            result = signal.fftconvolve(result, power)
            offset += power_off
            err += 1e-13 * result.size
        k >>= 1
        if k:
            power = signal.fftconvolve(power, power)
            power_off *= 2
            err += 1e-13 * power.size
    result = np.maximum(result, 0.0)
    total = (offset + np.arange(result.size)) * grid
    above = total > eps
    return float(np.sum(result[above] * -np.expm1(eps - total[above]))) - err


@pytest.mark.parametrize(("eps0", "rate", "rounds"), [(1.0, 0.2, 80), (4.0, 0.05, 80), (8.0, 0.5, 10)])
def test_composition_is_above_the_exact_composition_of_the_pair(eps0, rate, rounds):
    n, population = 20, round(20 / rate)
    ev = E.SelfComposedEvent(_sampled(eps0, n, population), rounds)
    acc = PLDAccountant().compose(ev)
    losses, masses = _pair_losses(eps0, n, rate)
    for eps in (0.5, 1.0, 2.0, 4.0):
        assert acc.get_delta(eps) >= _lower_composed_delta(losses, masses, rounds, eps, 0.01)


@settings(max_examples=8, deadline=None, derandomize=True)
@given(
    rate=st.floats(min_value=1e-3, max_value=1.0),
    eps0=st.floats(min_value=0.05, max_value=20.0),
    rounds=st.integers(min_value=1, max_value=1_000),
)
def test_sampled_compositions_dominate_the_pair_over_the_ranges(rate, eps0, rounds):
    n = 8
    population = max(n, math.ceil(n / rate))
    rate = n / population
    acc = PLDAccountant().compose(E.SelfComposedEvent(_sampled(eps0, n, population), rounds))
    losses, masses = _pair_losses(eps0, n, rate)
    grid = max(0.01, 0.002 * rounds * eps0 / 10)
    for eps in (0.5, 2.0, 8.0):
        try:
            ours = acc.get_delta(eps)
        except UnsupportedEventError:
            return
        assert ours >= _lower_composed_delta(losses, masses, rounds, eps, grid) - 1e-12


def test_one_round_pld_agrees_with_the_profile():
    prof = SampledProfile(VariationRatio.from_ldp(3.0), 5_000, 1.0, 0.1, "fixed-size", 1e-18)
    pld = sampled_pld(prof, step=None, tail_mass=1e-15, max_bins=10**6)
    for eps in (0.0, 0.05, 0.1, 0.2):
        assert pld.delta(eps) >= prof.upper(eps) * (1 - 1e-9)
        assert pld.delta(eps) <= prof.upper(eps) + 1e-4 * prof.upper(0.0)


def test_calibrate_accepts_sampled_rounds():
    def make(e):
        return E.SelfComposedEvent(_sampled(e, 10_000, 50_000), 80)

    eps0 = calibrate(make, 1.0, 0.01 / 50_000, accountant=PLDAccountant(), bracket=(0.1, 20.0))
    assert PLDAccountant().compose(make(eps0)).get_epsilon(0.01 / 50_000) <= 1.0
    assert eps0 > 4.0  # the unsampled rounds allow about 1.7


def test_specific_blanket_decomposition_is_sampled_too():
    rr = BlanketDecomposition(eps0=2.0, beta=math.expm1(2.0) / (math.exp(2.0) + 9), common_ratio=1.0)
    specific = PLDAccountant().compose(_sampled(2.0, 1_000, 5_000, params=rr), 10).get_epsilon(1e-6)
    generic = PLDAccountant().compose(_sampled(2.0, 1_000, 5_000), 10).get_epsilon(1e-6)
    assert specific <= generic


@pytest.mark.parametrize("call", ["composed_local_epsilon", "composed_shuffle_epsilon"])
def test_a_sample_larger_than_the_population_names_the_caller_s_argument(call):
    import shuffledp.accounting as acc

    args = (1.0, 10_000, 2e-7, 80) if call == "composed_local_epsilon" else (10_000, 2e-7, 80)
    kwargs = {} if call == "composed_local_epsilon" else {"eps0": 1.0}
    with pytest.raises(
        PrivacyParameterError, match=r"n \(the sample size\) must be at most population=5000, got n=10000"
    ):
        getattr(acc, call)(*args, population=5_000, **kwargs)
