"""Algorithms 2-3 (issue 10): unbiasedness by simulation, budgets, guarantees, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffledp.errors import DataError, PrivacyParameterError, ShapeError
from shuffledp.protocols.personalized import group_budgets, personalized_average, personalized_frequency, table3_budgets


def test_average_is_unbiased():
    rng = np.random.default_rng(1)
    n, reps = 500, 400
    budgets = group_budgets(n, 0.54, 0.37, 0.1, 0.5, 1.0, rng)
    x = np.clip(rng.normal(50, 10, n), 20, 80)
    est = np.array([personalized_average(x, budgets, 20.0, 80.0, rng).estimate for _ in range(reps)])
    sd = math.sqrt(np.sum(2 * (60.0 / budgets) ** 2)) / n  # Var Lap(b) = 2 b^2
    z = (est.mean() - x.mean()) / (sd / math.sqrt(reps))
    assert abs(z) < 4.0
    assert 0.8 < est.std() / sd < 1.2


def test_frequency_is_unbiased_under_random_budget_assignment():
    rng = np.random.default_rng(2)
    n, reps = 2000, 400
    x = (np.arange(n) < 0.3 * n).astype(int)
    est = []
    for _ in range(reps):
        budgets = table3_budgets("uniform2", n, rng)  # assigned independently of the data
        est.append(personalized_frequency(x, budgets, rng).estimate)
    est = np.asarray(est)
    assert abs(est.mean() - 0.3) / (est.std() / math.sqrt(reps)) < 4.0


def test_guarantees_side_by_side():
    rng = np.random.default_rng(3)
    budgets = np.ceil(table3_budgets("gauss1", 3000, rng) * 10) / 10  # rounded up: conservative
    run = personalized_frequency((rng.random(3000) < 0.5).astype(int), budgets, rng, delta=1 / 3000)
    assert run.budgets.size == run.upper.size == run.eapes.size
    assert np.all(run.upper <= run.budgets * (1 + 1e-12))
    assert np.all(run.eapes > 0)


def test_table3():
    rng = np.random.default_rng(0)
    for name, lo, hi in [("uniform1", 0.05, 1), ("uniform2", 0.01, 2), ("gauss1", 0.05, 1), ("gauss2", 0.01, 2), ("gauss3", 0.01, 2)]:
        b = table3_budgets(name, 20_000, rng)
        assert b.min() >= lo and b.max() <= hi
    g3 = table3_budgets("gauss3", 100_000, rng)
    inner = g3[(g3 > 0.01) & (g3 < 2)]
    assert abs(np.mean(g3 == 2.0) - 0.0228) < 0.003  # P[N(1, 0.5) > 2] (sd 0.5)
    assert abs(inner.mean() - 1.0) < 0.01
    with pytest.raises(PrivacyParameterError, match="distribution"):
        table3_budgets("gauss4", 10, rng)


def test_bad_input():
    rng = np.random.default_rng(0)
    with pytest.raises(ShapeError, match="one value per budget"):
        personalized_frequency(np.zeros(3, int), np.ones(4), rng)
    with pytest.raises(PrivacyParameterError, match="budgets"):
        personalized_average(np.zeros(2), np.array([1.0, 0.0]), 0.0, 1.0, rng)
    with pytest.raises(DataError, match="data must lie"):
        personalized_average(np.array([0.5, 2.0]), np.ones(2), 0.0, 1.0, rng)
    with pytest.raises(DataError, match="0 and 1"):
        personalized_frequency(np.array([0, 2]), np.ones(2), rng)
