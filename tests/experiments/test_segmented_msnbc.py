"""segmented-msnbc: which data it runs on (the UCI file when present, else the named MSNBC-like stand-in)."""

from __future__ import annotations

import numpy as np
import pytest

from shuffledp.datasets.setvalued import MSNBC_LIKE_NAME
from shuffledp.errors import DataError
from shuffledp.experiments import get_experiment
from shuffledp.experiments.segmented_common import OURS_OPT, SETTINGS
from shuffledp.experiments.segmented_msnbc import NAME, S, data_source, least_error_claim


def test_falls_back_to_the_named_msnbc_like_generator(monkeypatch, tmp_path):
    monkeypatch.setenv("SHUFFLEDP_DATA", str(tmp_path))  # no msnbc/ folder here
    dataset, make_items = data_source()
    assert dataset == MSNBC_LIKE_NAME
    sets = make_items(300, 4, np.random.default_rng(0))
    assert sets.shape == (300, 4) and sets.max() < 17
    assert get_experiment(NAME).paper.startswith("segmented paper")


def test_reads_the_uci_file_when_present(monkeypatch, tmp_path):
    folder = tmp_path / "msnbc"
    folder.mkdir()
    rng = np.random.default_rng(1)
    sessions = [" ".join(map(str, rng.integers(1, 18, size=rng.integers(1, 9)))) for _ in range(400)]
    names = " ".join(f"c{j}" for j in range(17))
    (folder / "msnbc990928.seq").write_text(f"% categories\n\n{names}\n\n% Sequences:\n\n" + "\n".join(sessions) + "\n")
    monkeypatch.setenv("SHUFFLEDP_DATA", str(tmp_path))
    dataset, make_items = data_source(min_sessions=400)
    assert dataset.startswith("msnbc (") and "msnbc990928.seq" in dataset
    sets = make_items(300, 4, np.random.default_rng(2))
    assert sets.shape == (300, 4)
    # every sampled user's set holds items of one of the generated sessions (padding adds the rest)
    held = [set(int(v) - 1 for v in line.split()) for line in sessions]
    assert all(any(len(h) and (h <= set(row) or set(row) <= h) for h in held) for row in sets.tolist())


def _write_msnbc(root, sessions, n_categories=17):
    folder = root / "msnbc"
    folder.mkdir()
    names = " ".join(f"c{j}" for j in range(n_categories))
    path = folder / "msnbc990928.seq"
    path.write_text(f"% categories\n{names}\n% Sequences:\n" + "\n".join(sessions) + "\n")
    return path


def test_a_malformed_file_is_an_error_not_the_stand_in(monkeypatch, tmp_path):
    _write_msnbc(tmp_path, ["1 2", "3 x 4", "5"])
    monkeypatch.setenv("SHUFFLEDP_DATA", str(tmp_path))
    with pytest.raises(DataError, match="msnbc990928.seq:5: a session must list category numbers, got '3 x 4'"):
        data_source(min_sessions=1)


@pytest.mark.parametrize("n_categories", [3, 20])
def test_the_file_must_name_17_categories(monkeypatch, tmp_path, n_categories):
    _write_msnbc(tmp_path, ["1 2", "3"], n_categories)
    monkeypatch.setenv("SHUFFLEDP_DATA", str(tmp_path))
    with pytest.raises(
        DataError, match=f"msnbc990928.seq: segmented-msnbc needs the 17 MSNBC categories .*names {n_categories}$"
    ):
        data_source(min_sessions=1)


def test_a_file_with_too_few_sessions_says_how_many_are_needed(monkeypatch, tmp_path):
    _write_msnbc(tmp_path, ["1 2"] * 120)
    monkeypatch.setenv("SHUFFLEDP_DATA", str(tmp_path))
    with pytest.raises(
        DataError,
        match="msnbc990928.seq: segmented-msnbc draws up to n = 50,000 sessions without replacement, the file holds 120",
    ):
        data_source()
    _, make_items = data_source(min_sessions=100)
    with pytest.raises(DataError, match="n = 121 sessions requested, the file holds 120"):
        make_items(121, 4, np.random.default_rng(0))


@pytest.mark.parametrize(("least_at_50000", "verdict"), [(0.1, "held"), (0.5, "partly"), (4.0, "not")])
def test_least_error_claim_checks_the_papers_one_thirtieth(least_at_50000, verdict):
    """Least MSE 3.0 at n = 5,000: 0.1 is 1/30 (held), 0.5 is 1/6 (falls, by another factor), 4.0 rises (not)."""
    rows = [
        {"n": n, "s": S, "setting": st, "method": OURS_OPT, "m": 1.0, "mse": mse + k}
        for n, mse in ((5_000, 3.0), (50_000, least_at_50000))
        for k, st in enumerate(SETTINGS)
    ]
    claim = least_error_claim(rows, MSNBC_LIKE_NAME)
    assert claim.verdict == verdict and MSNBC_LIKE_NAME in claim.ours
