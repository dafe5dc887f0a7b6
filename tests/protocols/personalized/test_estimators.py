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
    for name, lo, hi in [
        ("uniform1", 0.05, 1),
        ("uniform2", 0.01, 2),
        ("gauss1", 0.05, 1),
        ("gauss2", 0.01, 2),
        ("gauss3", 0.01, 2),
    ]:
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
    with pytest.raises(DataError, match="0 and 1, got 2 at index 1"):
        personalized_frequency(np.array([0, 2]), np.ones(2), rng)
    with pytest.raises(DataError, match="got nan at index 0"):
        personalized_frequency(np.array([np.nan, 1.0]), np.ones(2), rng)


def test_empty_string_and_rng_none_input():
    rng = np.random.default_rng(0)
    for run in (
        lambda: personalized_average(np.zeros(0), np.zeros(0), 0.0, 1.0, rng),
        lambda: personalized_frequency(np.zeros(0, int), np.zeros(0), rng),
    ):
        with pytest.raises(ShapeError, match="budgets must hold at least one user"):
            run()
    with pytest.raises(DataError, match="data must be numbers"):
        personalized_average(np.array(["0.5", "0.25"]), np.ones(2), 0.0, 1.0, rng)
    assert personalized_average(np.full(10, 0.5), np.ones(10), 0.0, 1.0, None).reports.size == 10
    assert personalized_frequency(np.zeros(10, int), np.ones(10), None).reports.size == 10


def test_delta_and_distinct_budgets_are_checked_before_randomizing():
    from shuffledp.accounting.personalized import MAX_DISTINCT_BUDGETS

    class Spent(np.random.Generator):  # any draw would mean the refusal came after randomizing
        def __getattribute__(self, name):
            raise AssertionError(f"rng.{name} used before the refusal")

    spent = Spent(np.random.PCG64(0))
    budgets = np.linspace(0.1, 1.0, MAX_DISTINCT_BUDGETS + 1)
    with pytest.raises(PrivacyParameterError, match="distinct values"):
        personalized_frequency(np.zeros(budgets.size, int), budgets, spent, delta=1e-6)
    with pytest.raises(PrivacyParameterError, match="pick their budgets from a grid"):  # laplace: no rounding advice
        personalized_average(np.zeros(budgets.size), budgets, 0.0, 1.0, spent, delta=1e-6)
    with pytest.raises(PrivacyParameterError, match="delta"):
        personalized_frequency(np.zeros(3, int), np.ones(3), spent, delta=1.5)
    for delta in (1e-310, "1e-3"):  # what the accountant refuses is refused up front too
        with pytest.raises(PrivacyParameterError, match="delta"):
            personalized_frequency(np.zeros(3, int), np.ones(3), spent, delta=delta)


def test_one_user_gets_eapes_inf():
    run = personalized_frequency(np.array([1]), np.array([1.0]), np.random.default_rng(0), delta=1e-3)
    assert run.budgets.tolist() == [1.0] and run.eapes.tolist() == [np.inf] and run.upper[0] <= 1.0


def test_range_ends_must_be_numbers_not_strings():
    rng = np.random.default_rng(0)
    with pytest.raises(PrivacyParameterError, match="low must be a number; got '0'"):
        personalized_average(np.full(4, 0.5), np.ones(4), "0", 1.0, rng)
    with pytest.raises(PrivacyParameterError, match="high must be a number"):
        personalized_average(np.full(4, 0.5), np.ones(4), 0.0, True, rng)
