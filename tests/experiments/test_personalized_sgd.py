"""personalized-sgd (E-APES Figure 5) in quick mode: artefacts, the data split, and noise hurting accuracy."""

from __future__ import annotations

import csv

import numpy as np

from shuffledp.experiments import run_experiment
from shuffledp.experiments.personalized_sgd import CLIENTS, COLUMNS, N_TRAIN, REFERENCE, digits_split
from shuffledp.protocols.personalized import TABLE3


def test_digits_split_is_a_partition():
    X, y, X_test, y_test = digits_split(np.random.default_rng(0))
    assert X.shape == (N_TRAIN, 65) and X_test.shape == (1797 - N_TRAIN, 65) and N_TRAIN % CLIENTS == 0
    assert X.min() >= 0.0 and X.max() <= 1.0 and np.all(X[:, -1] == 1.0)
    assert set(np.unique(np.concatenate([y, y_test]))) == set(range(10))
    train_rows = {row.tobytes() for row in X}
    assert sum(row.tobytes() in train_rows for row in X_test) <= 5  # digits holds a few duplicate images, no more


def test_quick_run(tmp_path):
    target = run_experiment("personalized-sgd", tmp_path, quick=True, seed=1, progress=False)
    assert (target / "figure.png").stat().st_size > 0
    summary = (target / "summary.md").read_text()
    assert "Table 2 adapted" in summary and "not a bound" in summary
    with (target / "results.csv").open() as fh:
        reader = csv.DictReader(fh)
        assert reader.fieldnames == COLUMNS
        rows = list(reader)
    assert {r["budgets"] for r in rows} == {*TABLE3, REFERENCE} and len(rows) == 6 * 2
    final = {r["budgets"]: float(r["train_accuracy"]) for r in rows if r["epochs"] == "5"}
    assert final[REFERENCE] > 0.8  # noiseless logistic regression learns digits
    # Gauss 3 clips some clients to eps_0 = 0.01 (noise sd ~ 19 per coordinate): near chance
    assert min(float(r["eps_min"]) for r in rows if r["budgets"] == "gauss3") == 0.01
    assert final["gauss3"] < final[REFERENCE] - 0.3
    for r in rows:
        if r["budgets"] != REFERENCE:
            low, high = TABLE3[r["budgets"]][3:]
            assert low <= float(r["eps_min"]) <= float(r["eps_median"]) <= float(r["eps_max"]) <= high
            assert 0.0 < float(r["eapes_epoch_epsilon"]) < np.inf
