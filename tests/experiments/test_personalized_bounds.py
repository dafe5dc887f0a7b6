"""personalized-bounds (E-APES Figure 4) in quick mode: artefacts and the orderings that must hold."""

from __future__ import annotations

import csv
import itertools

import numpy as np

from shuffledp.accounting.personalized import personalized_shuffle_epsilon, personalized_shuffle_epsilon_lower
from shuffledp.experiments import run_experiment
from shuffledp.experiments.personalized_bounds import COLUMNS, _equal_budget_gap, _largest_lower


def test_quick_run(tmp_path):
    target = run_experiment("personalized-bounds", tmp_path, quick=True, seed=2, progress=False)
    with (target / "results.csv").open() as fh:
        reader = csv.DictReader(fh)
        assert reader.fieldnames == COLUMNS
        rows = list(reader)
    assert len(rows) == 10 and (target / "figure.png").exists()
    for r in rows:
        lower, upper, weakest, victim = (float(r[k]) for k in ("lower", "upper", "weakest_budget", "victim_eps"))
        assert 0 < lower <= upper <= victim
        assert (r["eapes_below_lower"] == "True") == (float(r["eapes"]) < lower)
    summary = (target / "summary.md").read_text()
    assert "E-APES below our rigorous lower bound" in summary and "steps of 100" in summary


def test_lower_is_the_largest_over_the_tried_inputs():
    others = np.array([0.3, 0.5, 0.8, 1.1, 1.4, 2.0, 0.7])
    lower, label = _largest_lower(0.9, others, 1e-3, np.random.default_rng(0))
    ones = np.argsort(others)[:3]  # "lowest 50% budgets 1" (int(0.5 * 7) = 3 users)
    bits = np.isin(np.arange(others.size), ones)
    assert lower >= personalized_shuffle_epsilon_lower(0.9, others, 1e-3)
    assert lower >= personalized_shuffle_epsilon_lower(0.9, others, 1e-3, others_inputs=bits)
    assert isinstance(label, str)


def test_equal_budget_sweep_is_the_exact_worst_case():
    """With equal budgets, sweeping k covers every assignment up to order: compare with all 2^(n-1)."""
    eps, n = 1.5, 9
    others, delta = np.full(n - 1, eps), 1.0 / n
    exact = max(
        personalized_shuffle_epsilon_lower(eps, others, delta, others_inputs=bits)
        for bits in itertools.product((0, 1), repeat=n - 1)
    )
    _, _, _, _, gap = _equal_budget_gap(eps, n, 1)
    assert abs(personalized_shuffle_epsilon(eps, others, delta) / exact - 1.0 - gap) < 1e-9


def test_figure_x_ticks_are_decades_only():
    # 1000 2000 5000 10000 ran together in the narrow panels: only powers of ten are labelled
    from shuffledp.experiments.personalized_bounds import _figure
    from shuffledp.protocols.personalized import TABLE3

    rows = [
        dict(distribution=name, n=n, eapes=0.1, upper=0.02, lower=0.01, weakest_budget=0.05)
        for name in TABLE3
        for n in (1_000, 10_000)
    ]
    fig = _figure(rows)
    for ax in fig.axes[: len(TABLE3)]:
        low, high = ax.get_xlim()
        ticks = [t for t in ax.xaxis.get_majorticklocs() if low <= t <= high]
        assert ticks and all(np.isclose(np.log10(t), round(np.log10(t))) for t in ticks), ticks
    import matplotlib.pyplot as plt

    plt.close(fig)


def _bound_rows(power: float, eapes_scale: float, gauss2_scale: float) -> list[dict]:
    """Rows with upper = n^-power, lower = 0.9 upper, E-APES = eapes_scale * upper; Gauss 2's bounds scaled."""
    from shuffledp.protocols.personalized import TABLE3

    rows = []
    for name in TABLE3:
        for n in (1_000, 100_000):
            scale = gauss2_scale if name == "gauss2" else 1.0
            upper = scale * n**-power
            eapes = eapes_scale * upper
            rows.append(dict(distribution=name, n=n, eapes=eapes, upper=upper, lower=0.9 * upper,
                             eapes_below_lower=eapes < 0.9 * upper))  # fmt: skip
    return rows


def test_claims_hold_for_a_valid_eapes_at_the_sqrt_n_rate_alike_for_uniform2_and_gauss2():
    from shuffledp.experiments.personalized_bounds import claims

    found = claims(_bound_rows(power=0.5, eapes_scale=2.0, gauss2_scale=1.05))
    assert [c.verdict for c in found] == ["held", "held", "held"]
    assert found[0].ours == "E-APES below our lower bound at 0 of 10 points"
    assert "upper bound: -0.50 to -0.50" in found[1].ours


def test_claims_fail_for_eapes_below_the_lower_bound_a_slower_rate_and_gauss2_apart():
    from shuffledp.experiments.personalized_bounds import claims

    found = claims(_bound_rows(power=0.3, eapes_scale=0.5, gauss2_scale=1.5))
    assert [c.verdict for c in found] == ["not", "partly", "not"]
    assert found[0].ours == "E-APES below our lower bound at 10 of 10 points; by up to 44.4%"
    assert "upper +50.0% (n = 100,000)" in found[2].ours
