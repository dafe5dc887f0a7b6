"""personalized-estimation (E-APES Figures 6-7) in quick mode: raised budgets are certified and help."""

from __future__ import annotations

import csv

import numpy as np

from shuffledp.accounting.personalized import personalized_shuffle_epsilons
from shuffledp.experiments import run_experiment
from shuffledp.experiments.personalized_estimation import COLUMNS, amplified_factor
from shuffledp.protocols.personalized import group_budgets


def test_amplified_factor_is_certified_and_maximal():
    targets = group_budgets(2000, 0.54, 0.37, 0.1, 0.5, 1.0, np.random.default_rng(0))
    lam = amplified_factor(targets, 1e-4, "binary-rr")
    values, upper = personalized_shuffle_epsilons(targets * lam, 1e-4, rtol=1e-5)
    assert lam > 1 and np.all(upper <= values / lam)
    values, upper = personalized_shuffle_epsilons(targets * lam * 1.01, 1e-4, rtol=1e-5)
    assert np.any(upper > values / (lam * 1.01))


def test_quick_run(tmp_path):
    target = run_experiment("personalized-estimation", tmp_path, quick=True, seed=3, progress=False)
    with (target / "results.csv").open() as fh:
        reader = csv.DictReader(fh)
        assert reader.fieldnames == COLUMNS
        rows = list(reader)
    assert len(rows) == 32
    for r in rows:
        if r["budgets"] == "shuffle":
            ldp = next(q for q in rows if q["budgets"] == "ldp" and all(q[k] == r[k] for k in ("task", "f_c", "eps_c")))
            assert float(r["mae"]) < float(ldp["mae"])  # larger local budgets, less noise
