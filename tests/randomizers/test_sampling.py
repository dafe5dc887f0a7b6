"""Exact sampling primitives: laws at ordinary scale, and the rare branch tested by conditioning on it."""

import math

import numpy as np
import pytest
from scipy import stats

from shuffledp.randomizers._sampling import TiltedGenerator, bernoulli, geometric_tail, hazard_categorical

GRID = 2.0**53


class ForcedUniforms(np.random.Generator):
    """A generator whose first calls to ``random`` return given constants (then ordinary draws).

    Forcing u to the threshold floor(p 2^53)/2^53 conditions a Bernoulli draw on its
    rare branch (the event u == threshold, of probability 2^-53), which ordinary
    sampling never reaches.
    """

    def __init__(self, seed, forced):
        super().__init__(np.random.PCG64(seed))
        self.forced = list(forced)

    def random(self, size=None, dtype=np.float64, out=None):
        if self.forced:
            return np.full(size, self.forced.pop(0))
        return super().random(size)


def _binom_ok(hits: int, n: int, p: float) -> bool:
    return stats.binomtest(hits, n, p).pvalue > 1e-4


@pytest.mark.parametrize("p", [0.0, 1e-3, 0.3, 0.5, 0.97, 1.0])
def test_bernoulli_ordinary_probabilities(p):
    out = bernoulli(p, 200_000, np.random.default_rng(1))
    assert out.dtype == bool and out.shape == (200_000,)
    if p in (0.0, 1.0):
        assert out.all() == (p == 1.0) and out.any() == (p == 1.0)
    else:
        assert _binom_ok(int(out.sum()), out.size, p)


@pytest.mark.parametrize("p", [3.1e-17, 1e-5, 0.1])
def test_bernoulli_rare_branch_by_conditioning(p):
    """Given u == floor(p 2^53)/2^53, success has probability frac = p 2^53 - floor(p 2^53).

    With P[u < t] = t this gives P[success] = t + 2^-53 frac = p: the part of p below
    the uniform grid is realized, which ``rng.random() < p`` drops (p = 3.1e-17 is
    k-RR's wrong-category probability at eps = 38).
    """
    whole = math.floor(p * GRID)
    frac = p * GRID - whole
    assert 0.0 < frac < 1.0
    n = 100_000
    out = bernoulli(p, n, ForcedUniforms(2, [whole / GRID]))
    assert _binom_ok(int(out.sum()), n, frac)
    # Just below and above the tie the answer is deterministic.
    assert bernoulli(p, n, ForcedUniforms(3, [(whole - 1) / GRID])).all() if whole >= 1 else True
    assert not bernoulli(p, n, ForcedUniforms(4, [(whole + 1) / GRID])).any()


def test_bernoulli_two_levels_below_the_grid():
    """p = 1e-40: two ties (u == 0 twice) lead to a coin of probability p 2^106."""
    p = 1e-40
    frac = p * GRID * GRID
    assert 0.0 < frac < 1.0
    out = bernoulli(p, 100_000, ForcedUniforms(5, [0.0, 0.0]))
    assert _binom_ok(int(out.sum()), out.size, frac)
    assert not bernoulli(p, 100_000, np.random.default_rng(6)).any()


def test_bernoulli_per_element_probabilities():
    p = np.array([[0.1, 0.9], [0.5, 0.0]])
    out = bernoulli(p, (50_000, 2, 2), np.random.default_rng(7))
    np.testing.assert_allclose(out.mean(axis=0), p, atol=0.01)


@pytest.mark.parametrize("p", [1e-30, 5e-324, 0.1, 0.999])
def test_tilted_bernoulli_weights_undo_the_tilt(p):
    """Under a TiltedGenerator, mean(1[success] W) estimates p with relative error ~ 1/sqrt(n)."""
    n = 100_000
    rng = TiltedGenerator(8, n, floor=0.25)
    out = bernoulli(p, n, rng)
    estimate = np.mean(out * np.exp(rng.log_weight))
    tilted = min(max(p, 0.25), 0.75)
    assert _binom_ok(int(out.sum()), n, tilted)
    se = p * math.sqrt((1 - tilted) / (tilted * n))  # one draw: p/p' w.p. p', else 0
    assert abs(estimate - p) <= 5 * se


@pytest.mark.parametrize("rate", [0.01, 0.4, 3.0])
def test_geometric_tail_law(rate):
    n = 100_000
    G = geometric_tail(rate, n, np.random.default_rng(9))
    top = int(min(400, math.ceil(12 / rate)))
    pmf = np.exp(-rate * np.arange(top)) * -math.expm1(-rate)
    pmf[-1] = math.exp(-rate * (top - 1))  # P[G >= top - 1]
    counts = np.bincount(np.minimum(G, top - 1), minlength=top)
    big = pmf * n >= 5
    obs = np.append(counts[big], counts[~big].sum())
    exp = np.append(pmf[big], pmf[~big].sum()) * n
    assert stats.chisquare(obs[exp > 0], exp[exp > 0]).pvalue > 1e-4


def test_geometric_tail_is_untruncated_at_large_rate():
    """rate 40: P[G >= 1] = e^-40 (below 2^-53); conditioned on the first coin, G >= 1 happens."""
    n = 50_000
    rng = ForcedUniforms(10, [0.0])  # u == 0: the tie of a coin of probability e^-40
    frac = math.exp(-40.0) * GRID
    G = geometric_tail(40.0, n, rng)
    assert _binom_ok(int(np.sum(G >= 1)), n, frac)


def test_hazard_categorical_law_and_tiny_category():
    pmf = np.array([1e-30, 0.5, 0.3, 0.2 - 1e-30])
    n = 100_000
    J = hazard_categorical(pmf, n, np.random.default_rng(11))
    assert np.all(J >= 1)  # 1e-30 is not seen directly
    assert stats.chisquare(np.bincount(J, minlength=4)[1:], pmf[1:] / pmf[1:].sum() * n).pvalue > 1e-4
    rng = TiltedGenerator(12, n, floor=0.25)
    J = hazard_categorical(pmf, n, rng)
    W = np.exp(rng.log_weight)
    estimate = np.bincount(J, weights=W, minlength=4) / n
    assert estimate[0] == pytest.approx(1e-30, rel=0.05)
    np.testing.assert_allclose(estimate[1:], pmf[1:], atol=0.02)


def test_tilted_generator_rejects_bad_floor():
    with pytest.raises(ValueError, match="floor"):
        TiltedGenerator(0, 3, floor=0.7)
