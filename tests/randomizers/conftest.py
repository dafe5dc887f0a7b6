"""Shared checks for tests of discrete randomizers (transition matrices and sampling)."""

from collections.abc import Callable

import numpy as np
import pytest
from scipy import stats


def _max_total_variation(P: np.ndarray) -> float:
    """Largest total-variation distance between two rows of a transition matrix."""
    P = np.asarray(P, dtype=np.float64)
    return float(max(0.5 * np.abs(P - row).sum(axis=1).max() for row in P))


def _chi2_pvalue(observed_columns: np.ndarray, probabilities: np.ndarray) -> float:
    """Chi-square goodness of fit of sampled column indices to one transition-matrix row.

    Columns expected fewer than 5 times are pooled into one cell; a sample in a
    column of probability 0 gives p-value 0.
    """
    observed = np.bincount(observed_columns, minlength=len(probabilities)).astype(np.float64)
    expected = probabilities * len(observed_columns)
    if np.any(observed[probabilities == 0] > 0):
        return 0.0
    big = expected >= 5
    obs = np.append(observed[big], observed[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    keep = exp > 0
    return float(stats.chisquare(obs[keep], exp[keep] * obs[keep].sum() / exp[keep].sum()).pvalue)


@pytest.fixture
def max_tv() -> Callable[[np.ndarray], float]:
    return _max_total_variation


@pytest.fixture
def chi2_pvalue() -> Callable[[np.ndarray, np.ndarray], float]:
    return _chi2_pvalue


def _check_box_input_contract(make: Callable, dim: int = 2) -> None:
    """Input validation shared by randomizers on [-1,1]^dim built as ``make(epsilon)``.

    Out-of-domain rows raise DomainError naming the row unless clip=True, which
    must equal randomizing the clipped input; NaN cannot be clipped; epsilon must
    be finite and > 0; a wrong number of columns raises ShapeError.
    """
    from shuffledp.errors import DomainError, PrivacyParameterError, ShapeError

    R = make(1.0)
    X = np.zeros((3, dim))
    X[1, 0] = 1.5
    X[2, -1] = -4.0
    with pytest.raises(DomainError, match=r"X\[1\].*\[-1, 1\]\^" + str(dim)):
        R.randomize(X, np.random.default_rng(0))
    clipped = R.randomize(X, np.random.default_rng(1), clip=True)
    np.testing.assert_array_equal(clipped, R.randomize(np.clip(X, -1.0, 1.0), np.random.default_rng(1)))
    nan_row = np.zeros((2, dim))
    nan_row[0, 0] = np.nan
    with pytest.raises(DomainError):
        R.randomize(nan_row, np.random.default_rng(0), clip=True)
    for eps in (0.0, -1.0, float("nan"), float("inf"), "x", None):
        with pytest.raises(PrivacyParameterError, match="epsilon"):
            make(eps)
    with pytest.raises(ShapeError, match=rf"\(n, {dim}\)"):
        R.randomize(np.zeros((4, dim + 1)))
    with pytest.raises(ShapeError):
        R.randomize(np.zeros((2, dim, 1)))


@pytest.fixture
def check_box_input_contract() -> Callable:
    return _check_box_input_contract


def _assert_unbiased(R, x, seed: int, n: int = 100_000) -> None:
    """Mean of n per-report estimates for the input x lies within 4 standard errors of x."""
    x = np.asarray(x, dtype=np.float64)
    est = R.estimate(R.randomize(np.tile(x, (n, 1)), np.random.default_rng(seed)))
    se = est.std(axis=0, ddof=1) / np.sqrt(n)
    assert np.all(np.abs(est.mean(axis=0) - x) <= 4 * se), (est.mean(axis=0), x, se)


@pytest.fixture
def assert_unbiased() -> Callable:
    return _assert_unbiased
