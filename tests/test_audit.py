"""The audit tools themselves."""

import math

import numpy as np
import pytest
from scipy import stats

from shuffledp.audit import exact_audit, exact_epsilon, exact_epsilon_log, extreme_pair, sampler_audit
from shuffledp.errors import AuditError, ShapeError
from shuffledp.randomizers._sampling import bernoulli
from shuffledp.randomizers.categorical import KRandomizedResponse
from shuffledp.randomizers.domains import Box, Categorical, L2Ball
from shuffledp.randomizers.geometric import Geometric
from shuffledp.randomizers.unary import UnaryEncoding


def test_exact_epsilon_of_randomized_response_matrix():
    e = math.exp(1.3)
    k = 4
    P = (np.ones((k, k)) + (e - 1) * np.eye(k)) / (e + k - 1)
    assert exact_epsilon(P) == pytest.approx(1.3, abs=1e-12)


def test_exact_epsilon_is_infinite_when_an_output_is_impossible_for_one_input():
    assert exact_epsilon(np.array([[0.5, 0.5, 0.0], [0.4, 0.4, 0.2]])) == math.inf


def test_exact_epsilon_ignores_outputs_impossible_for_all_inputs():
    assert exact_epsilon(np.array([[0.5, 0.5, 0.0], [0.25, 0.75, 0.0]])) == pytest.approx(math.log(2))


def test_extreme_pairs():
    a, b = extreme_pair(Box(3))
    assert a.tolist() == [-1, -1, -1] and b.tolist() == [1, 1, 1]
    a, b = extreme_pair(L2Ball(2, 2.0))
    assert np.linalg.norm(a - b) == pytest.approx(4.0)
    with pytest.raises(TypeError, match="x0 and x1"):
        extreme_pair(Categorical(3))


# ----------------------------------------------------------------------------- sampler audit


def test_exact_epsilon_log_matches_and_survives_underflow():
    e = math.exp(1.3)
    P = (np.ones((3, 3)) + (e - 1) * np.eye(3)) / (e + 2)
    assert exact_epsilon_log(np.log(P)) == pytest.approx(exact_epsilon(P), abs=1e-14)
    L = np.array([[0.0, -800.0], [-750.0, -1e-300]])  # exp() of these underflows to 0
    assert exact_epsilon(np.exp(L)) == math.inf
    assert exact_epsilon_log(L) == pytest.approx(800.0)
    assert exact_epsilon_log(np.array([[0.0, -np.inf], [-1.0, -2.0]])) == math.inf


@pytest.mark.parametrize("bad", [np.zeros(3), np.zeros((1, 3)), np.zeros((2, 2, 2))])
def test_exact_epsilon_refuses_a_matrix_without_two_input_rows(bad):
    with pytest.raises(ShapeError, match=r"2-d with >= 2 rows .*got shape"):
        exact_epsilon(bad)


class _WrongRareProbability(KRandomizedResponse):
    """Draws its rare branch through the exact primitive, with 1.5 times the right probability."""

    def _randomize(self, X, rng):
        moved = np.flatnonzero(bernoulli(1.5 * self._p_move, len(X), rng))
        Y = X.copy()
        Y[moved] = (X[moved] + rng.integers(1, self.k, size=moved.size)) % self.k
        return Y


class _SkewedOtherCategory(KRandomizedResponse):
    """Right rare probability, but the other category is not uniform (never x + k - 1)."""

    def _randomize(self, X, rng):
        moved = np.flatnonzero(bernoulli(self._p_move, len(X), rng))
        Y = X.copy()
        Y[moved] = (X[moved] + rng.integers(1, self.k - 1, size=moved.size)) % self.k
        return Y


@pytest.mark.parametrize("eps", [38.0, 74.0])
def test_sampler_audit_sees_errors_at_the_scale_of_e_minus_eps(eps):
    """Both errors live in events of probability ~e^-eps, invisible to the plain test."""
    for cls in (_WrongRareProbability, _SkewedOtherCategory):
        result = sampler_audit(cls(eps, 4), n_samples=20_000)
        assert result.plain_pvalue > 0.01  # the plain chi-square cannot see them...
        assert result.tilted_pvalue < 1e-6 and not result.passed  # ...the tilted one does
        with pytest.raises(AuditError, match=r"KRandomizedResponse|epsilon="):
            exact_audit(cls(eps, 4), n_samples=20_000)


def test_sampler_audit_fails_closed_on_cells_it_never_saw():
    class Deterministic(KRandomizedResponse):
        def _randomize(self, X, rng):
            return X.copy()

    result = sampler_audit(Deterministic(38.0, 3), n_samples=5_000)
    assert result.unreached == 6 and not result.passed  # 2 other categories x 3 inputs
    assert "6 cells never drawn" in result.explain()


@pytest.mark.parametrize(
    "make",
    [
        lambda: KRandomizedResponse(38.0, 3),
        lambda: Geometric(40.0, 0, 2),
        lambda: Geometric(2.0, 0, 3),  # lumped tails: weights vary within a cell (Wald test)
        lambda: UnaryEncoding(30.0, 3, "optimized"),
        lambda: UnaryEncoding(1.0, 8, "optimized"),  # 256 cells; the input's discarded coin
    ],
)
def test_sampler_audit_p_values_are_calibrated(make):
    """Under a correct sampler the tilted and plain p-values are ~uniform (the tests keep their level)."""
    R = make()
    runs = [sampler_audit(R, n_samples=3_000, seed=s, max_rows=2) for s in range(40)]
    # At large eps the plain test often has a single cell (p = 1): only informative runs are kept.
    for pvalues in ([r.tilted_pvalue for r in runs], [r.plain_pvalue for r in runs if r.plain_pvalue < 0.999]):
        if len(pvalues) >= 10:
            assert stats.kstest(pvalues, "uniform").pvalue > 1e-3
    assert all(r.passed for r in runs)
