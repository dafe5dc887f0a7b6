"""pic-fl-incentives (PIC §7.3, Tables 5-6): per-user gradients, the round's pieces, its privacy ledger, quick mode."""

import csv
import itertools
import json
import math

import numpy as np
import pytest

from shuffledp.accounting import PLDAccountant
from shuffledp.accounting.bounds import shuffle_epsilon
from shuffledp.accounting.composition import basic_composition, composed_local_epsilon, composed_shuffle_epsilon
from shuffledp.errors import DataError, DomainError
from shuffledp.experiments import pic_fl_incentives as fl
from shuffledp.experiments.pic_common import LDP, NON_PRIVATE, PIC
from shuffledp.randomizers.registry import make_randomizer
from shuffledp.tasks import exact_shapley

JAX_REASON = "needs JAX and optax, the optional extra shuffledp[fl]: pip install 'shuffledp[fl]'"


def test_per_user_gradients_equal_a_loop_of_single_sample_gradients():
    pytest.importorskip("jax", reason=JAX_REASON)
    pytest.importorskip("optax", reason=JAX_REASON)
    from shuffledp.experiments.fl_model import make_cnn

    rng = np.random.default_rng(0)
    model = make_cnn((8, 8), rng)
    X = rng.random((5, 8, 8)).astype(np.float32)
    y = np.array([0, 3, 3, 9, 1])
    G = np.asarray(model.per_user_gradients(model.initial, X, y))
    loop = np.stack([np.asarray(model.mean_gradient(model.initial, X[i : i + 1], y[i : i + 1])) for i in range(5)])
    assert G.shape == (5, model.dim)
    np.testing.assert_allclose(G, loop, rtol=1e-5, atol=1e-7)
    assert not np.allclose(G[0], G[1])  # one gradient per user, not the batch's


def test_per_user_gradient_matches_a_central_finite_difference():
    pytest.importorskip("jax", reason=JAX_REASON)
    pytest.importorskip("optax", reason=JAX_REASON)
    from shuffledp.experiments.fl_model import make_cnn

    rng = np.random.default_rng(1)
    model = make_cnn((8, 8), rng)
    X, y = rng.random((2, 8, 8)).astype(np.float32), np.array([4, 7])
    G = np.asarray(model.per_user_gradients(model.initial, X, y))
    h = 1e-2
    for j in (0, model.dim // 2, model.dim - 15):  # a filter weight of each convolution and a dense weight
        e = np.zeros(model.dim, dtype=np.float32)
        e[j] = h
        for i in range(2):
            fd = (
                float(model.loss(model.initial + e, X[i : i + 1], y[i : i + 1]))
                - float(model.loss(model.initial - e, X[i : i + 1], y[i : i + 1]))
            ) / (2 * h)
            assert G[i, j] == pytest.approx(fd, rel=0.02, abs=2e-4)


def test_user_coordinates_give_each_user_k_distinct_sorted_indices():
    coords = fl.user_coordinates(50, 20, 6, np.random.default_rng(0))
    assert coords.shape == (50, 6)
    assert np.all(np.diff(coords, axis=1) > 0) and coords.min() >= 0 and coords.max() < 20
    assert len({tuple(row) for row in coords.tolist()}) > 40  # each user its own draw, not one shared set


def test_user_coordinates_are_uniform_and_independent_across_users():
    # the draw sees only (n_users, dim, k, rng): no data.  Each coordinate is covered with probability k/d
    # and two users share a coordinate as often as independent draws do: k^2/d per pair on average.
    n, d, k = 4000, 10, 3
    coords = fl.user_coordinates(n, d, k, np.random.default_rng(1))
    covered = np.zeros((n, d), dtype=bool)
    np.put_along_axis(covered, coords, True, axis=1)
    freq = covered.mean(axis=0)
    assert np.all(np.abs(freq - k / d) < 5 * np.sqrt(k / d * (1 - k / d) / n))
    shared = (covered[0::2] & covered[1::2]).sum(axis=1)  # disjoint pairs of users
    assert abs(shared.mean() - k * k / d) < 5 * shared.std() / np.sqrt(len(shared))


def test_user_coordinates_refuse_k_above_the_dimension_quoting_it():
    with pytest.raises(DomainError, match=r"k must be an integer in \[1, dim=4\], got 5"):
        fl.user_coordinates(3, 4, 5, np.random.default_rng(0))


def test_aggregate_scales_the_sum_of_each_coordinates_reports_by_d_over_k_s():
    # d = 4, k = 2, s = 2: d / (k s) = 1; coordinate 1 is covered by both users, coordinate 2 by none
    est = fl.aggregate(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[0, 1], [1, 3]]), 4)
    np.testing.assert_array_equal(est, [1.0, 5.0, 0.0, 4.0])


def test_aggregate_is_unbiased_for_the_mean_gradient_over_every_coordinate_draw():
    # hand case: two users' full gradients in d = 4, k = 2: averaging over all 6 x 6 equally likely draws
    g = np.array([[0.5, -1.0, 2.0, 0.0], [1.5, 3.0, -2.0, 4.0]])
    subsets = list(itertools.combinations(range(4), 2))
    total = np.zeros(4)
    for c0, c1 in itertools.product(subsets, subsets):
        coords = np.array([c0, c1])
        total += fl.aggregate(np.take_along_axis(g, coords, axis=1), coords, 4)
    np.testing.assert_allclose(total / len(subsets) ** 2, g.mean(axis=0), rtol=1e-12)


def test_clip_values_clips_each_value_not_the_norm():
    G = np.array([[3e-4, -1e-5, 0.0], [-2.0, 1.5e-4, -1.5e-4]])
    np.testing.assert_array_equal(
        fl.clip_values(G, 1.5e-4), np.array([[1.5e-4, -1e-5, 0.0], [-1.5e-4, 1.5e-4, -1.5e-4]])
    )


def test_sanitize_puts_values_on_the_unit_cube_and_back_unbiased():
    c = fl.CLIP
    values = np.tile(np.array([c, -c / 2, 0.0, c / 4, -c, c / 3]), (20_000, 1))
    R = make_randomizer("laplace", 8.0, dim=6)
    est = fl.sanitize(values, R, c, np.random.default_rng(2))
    se = est.std(axis=0) / np.sqrt(len(est))
    assert np.all(np.abs(est.mean(axis=0) - values[0]) < 5 * se)
    assert np.array_equal(fl.sanitize(values, None, c, np.random.default_rng(2)), values)


def test_shapley_error_equals_exact_values_on_each_users_sparse_gradient():
    rng = np.random.default_rng(3)
    d = 12
    coords = fl.user_coordinates(6, d, 3, rng)
    true, est = rng.normal(size=(6, 3)), rng.normal(size=(6, 3))
    v = rng.normal(size=d)
    expected = np.mean(
        np.abs(exact_shapley(fl.scatter(est, coords, d), v) - exact_shapley(fl.scatter(true, coords, d), v))
    )
    assert fl.shapley_errors(true, est, coords, v, seed=0)[fl.SHAPLEY_ERROR] == pytest.approx(expected, rel=1e-9)
    assert fl.shapley_errors(true, true, coords, v, seed=0)[fl.SHAPLEY_ERROR] == 0.0


def test_shapley_error_is_the_papers_mean_absolute_difference_on_a_hand_computed_case():
    """Two users, one coordinate each, v = (1, 1).  True g = (1, 0), (0, 1): U(1) = U(2) = 1/sqrt2, U(12) = 1, so
    Shapley = (1/2, 1/2).  Estimates (1, 0), (0, -1): U(1) = 1/sqrt2, U(2) = -1/sqrt2, U(12) = 0, so Shapley^ =
    (1/sqrt2, -1/sqrt2).  §7.3: sum_i |Shapley^_i - Shapley_i| / |S| = ((1/sqrt2 - 1/2) + (1/sqrt2 + 1/2)) / 2."""
    coords = np.array([[0], [1]])
    got = fl.shapley_errors(np.array([[1.0], [1.0]]), np.array([[1.0], [-1.0]]), coords, np.array([1.0, 1.0]), 0)
    assert got[fl.SHAPLEY_ERROR] == pytest.approx(1 / np.sqrt(2), rel=1e-12)
    assert fl.SHAPLEY_ERROR == "shapley_mean_abs_error" and fl.SHAPLEY_ERROR in fl.METRICS  # named for what it is
    assert got[fl.SHAPLEY_ESTIMATOR_SPREAD] == got[fl.SHAPLEY_VALUE_SPREAD] == 0.0  # exact values: no estimator


def test_shapley_levels_measure_no_information_and_the_estimators_own_spread():
    rng = np.random.default_rng(8)
    s, d = 40, 30  # s above the exact limit: the estimator, two independent sets of orders
    coords = fl.user_coordinates(s, d, 3, rng)
    true, v = rng.normal(size=(s, 3)), rng.normal(size=d)
    perfect = fl.shapley_errors(true, true, coords, v, seed=4)
    assert perfect[fl.SHAPLEY_ERROR] == perfect[fl.SHAPLEY_ESTIMATOR_SPREAD] == 0.0  # the same orders for both
    assert perfect[fl.SHAPLEY_NO_INFORMATION] > 0.0  # other users' (exact) gradients score like noise
    assert 0.0 < perfect[fl.SHAPLEY_VALUE_SPREAD] < perfect[fl.SHAPLEY_NO_INFORMATION]
    noisy = fl.shapley_errors(true, true + rng.normal(size=true.shape), coords, v, seed=4)
    assert 0.0 < noisy[fl.SHAPLEY_ESTIMATOR_SPREAD] < noisy[fl.SHAPLEY_ERROR]


def _claim_rows(values, rounds, spread=0.0):
    """Rows of a run: (eps, model, randomizer, metric) -> mean, each round's value mean +- spread (alternating)."""
    return [
        {"epsilon": e, "model": m, "randomizer": lab, "local_epsilon": 1.0, "round": r + 1, "metric": metric,
         "value": value + (spread if r % 2 else -spread)}
        for (e, m, lab, metric), value in values.items()
        for r in range(rounds)
    ]  # fmt: skip


def _cells(shapley, accuracy=0.1):
    """Minkowski and Laplace at eps 1: PIC far better on gradient error; Shapley errors (LDP, PIC) as given."""
    out = {}
    for lab, (ldp, pic) in shapley.items():
        for m, g, sh in ((LDP, 100.0, ldp), (PIC, 10.0 if lab == "Minkowski" else 20.0, pic)):
            out.update({(1.0, m, lab, "gradient_l2_error"): g, (1.0, m, lab, fl.SHAPLEY_ERROR): sh,
                        (1.0, m, lab, "test_accuracy"): accuracy})  # fmt: skip
    return out


def test_quick_mode_accuracy_claims_are_not_testable_in_quick_mode():
    rows = _claim_rows(_cells({"Minkowski": (3e-3, 2e-3), "Laplace": (3e-3, 2.5e-3)}), fl.ROUNDS_QUICK, 1e-5)
    assert fl.quick_run(rows)
    beats, gradient, shapley, accuracy = fl.claims(rows, test_size=150)
    assert accuracy.verdict == "not testable" and accuracy.ours.startswith("not testable in quick mode (20 of 80")
    assert "chance 10%" in accuracy.ours
    assert beats.verdict == "held" and "final accuracy not testable in quick mode" in beats.ours  # not "partly"
    assert gradient.verdict == shapley.verdict == "held"


def test_shapley_claim_is_read_only_beyond_the_noise_floor():
    within = _claim_rows(_cells({"Minkowski": (3.0e-3, 2.70e-3), "Laplace": (3.0e-3, 2.72e-3)}), fl.ROUNDS, 1e-4)
    beats, _, shapley, accuracy = fl.claims(within, test_size=150)
    assert shapley.verdict == "not testable" and "within the noise floor" in shapley.ours
    assert accuracy.verdict == "not testable"  # full mode: equal accuracies, within the test set's noise
    assert "PIC better in 4 of the 4" in beats.ours and "2 of 6 within it" in beats.ours  # the accuracy cells
    beyond = _claim_rows(_cells({"Minkowski": (3.0e-3, 2.2e-3), "Laplace": (3.0e-3, 2.7e-3)}), fl.ROUNDS, 1e-4)
    assert fl.claims(beyond, test_size=150)[2].verdict == "held"
    worse = _claim_rows(_cells({"Minkowski": (3.0e-3, 2.7e-3), "Laplace": (3.0e-3, 2.2e-3)}), fl.ROUNDS, 1e-4)
    assert fl.claims(worse, test_size=150)[2].verdict == "not"


def test_scaled_split_and_sample_keep_the_papers_fractions():
    assert fl.scaled_split(1797) == (1497, 150, 150)
    assert fl.sample_size(1497) == 299
    assert fl.scaled_split(60_000) == fl.PAPER_SPLIT and fl.sample_size(50_000) == fl.PAPER_SAMPLE


def test_round_ledger_spends_the_global_budget_by_the_accountant():
    target, s, population, rounds = 1.0, 40, 200, 3
    b = fl.round_budgets(target, s, population, rounds)
    assert b.delta == 0.01 / population
    # printed beside: plain composition of the rounds, no credit for the sampling, spends exactly the target
    assert basic_composition(b.ldp_plain, 0.0, rounds)[0] == pytest.approx(target)
    # PIC model: the secret-sample shuffled rounds compose to the target (and no more) by the same accountant
    spent = composed_shuffle_epsilon(s, b.delta, rounds, eps0=b.pic, population=population)
    assert target * 0.98 <= spent <= target
    assert b.pic > b.ldp > b.ldp_plain


def test_ldp_budget_credits_the_secret_sample_as_the_pic_budget_does():
    target, s, population, rounds = 1.0, 40, 200, 3
    b = fl.round_budgets(target, s, population, rounds)
    # the LDP model's rounds (a sampled user's one report, un-shuffled) compose to the target by the PLD accountant
    spent = PLDAccountant().compose(fl.ldp_round_event(b.ldp, s, population, rounds)).get_epsilon(b.delta)
    assert target * 0.98 <= spent <= target
    # an un-shuffled report is a shuffle of n = 1: the plain eps0-LDP curve, that of randomized response,
    # delta(eps) = (e^eps0 - e^eps) / (1 + e^eps0)
    plain = math.log(math.exp(b.ldp) - b.delta * (1 + math.exp(b.ldp)))
    assert shuffle_epsilon(1, b.delta, b.ldp) == pytest.approx(plain, rel=1e-6)
    # rate s/N = 1/5: the same event as composed_local_epsilon's sampled round of one report among 5 users
    assert b.ldp == pytest.approx(composed_local_epsilon(target, 1, b.delta, rounds, population=5), rel=1e-3)
    # the rounds are sampled (a user reports in 1/5 of them), so the budget exceeds the plain eps / rounds
    assert b.ldp > b.ldp_plain == target / rounds


def test_quick_mode_writes_the_four_files_with_the_documented_columns(tmp_path, monkeypatch):
    pytest.importorskip("jax", reason=JAX_REASON)
    pytest.importorskip("optax", reason=JAX_REASON)
    from shuffledp.experiments.runner import run_experiment

    load = fl._load

    def tiny(rng):  # 40 users (s = 8: exact Shapley values), 10 validation and 10 test images
        data = load(rng)
        parts = ((X[:n], y[:n]) for (X, y), n in zip((data.train, data.validation, data.test), (40, 10, 10)))
        return fl._Data(data.name, *parts, source=data.source)

    monkeypatch.setattr(fl, "_load", tiny)
    monkeypatch.setattr(fl, "RANDOMIZERS", (("Minkowski", "minkowski"), ("Laplace", "laplace")))
    monkeypatch.setattr(fl, "ROUNDS", 2)
    monkeypatch.setattr(fl, "ROUNDS_QUICK", 2)
    target = run_experiment(fl.NAME, tmp_path, quick=True, seed=1, progress=False)
    assert {p.name for p in target.iterdir()} >= {"results.csv", "figure.png", "summary.md", "meta.json"}
    with (target / "results.csv").open() as fh:
        reader = csv.DictReader(fh)
        rows = list(reader)
    assert reader.fieldnames == fl.COLUMNS
    trained = [r for r in rows if r["model"] != fl.PAPER_SCALE]
    assert {r["metric"] for r in trained} == {*fl.METRICS, *fl.SHAPLEY_LEVELS, "clipped_share"}
    assert {r["round"] for r in trained} == {"1", "2"}
    references = {(NON_PRIVATE, label) for label in (NON_PRIVATE, fl.PAPER_COVERAGE, fl.ALL_COORDINATES)}
    assert {(r["model"], r["randomizer"]) for r in trained} == references | {
        (m, lab) for m in (LDP, PIC) for lab in ("Minkowski", "Laplace")
    }
    paper_scale = [r for r in rows if r["model"] == fl.PAPER_SCALE]  # one single-report error per target x randomizer
    assert len(paper_scale) == len(fl.TARGETS) * 2 and {r["metric"] for r in paper_scale} == {"single_report_l2_error"}
    meta = json.loads((target / "meta.json").read_text())
    assert meta["parameters"]["users_per_round"] == 8 and meta["parameters"]["rounds"] == 2
    assert meta["parameters"]["install"] == "pip install 'shuffledp[fl]'"
    assert "each sampled user draws its own k coordinates" in meta["parameters"]["coordinates"]
    d = meta["parameters"]["model_dim"]
    assert meta["parameters"]["non_private_references"] == {
        label: {"kept_coordinates": k, "reports_per_coordinate": 8 * k / d}
        for label, k in fl.reference_ks(d, 8).items()
    }
    summary = (target / "summary.md").read_text()
    assert "4-6" in summary and "0.2-0.75" in summary and "substitute for MNIST" in summary
    # the paragraph on Minkowski's rank names exactly the randomizers its printed single-report errors put below it
    rank = next(line for line in summary.splitlines() if line.startswith("**Minkowski Response's rank**"))
    for e in fl.TARGETS:
        errors = {r["randomizer"]: float(r["value"]) for r in paper_scale if float(r["epsilon"]) == e}
        below = [lab for lab in errors if errors[lab] < errors["Minkowski"]]
        said = rank.split(f"at eps = {e:g} (budget")[1].split(";")[0]
        assert all(f"{lab}'s" in said for lab in below) and ("is the lowest" in said) == (not below)
    assert "needs a large local epsilon" not in summary


def test_too_few_images_are_refused_naming_the_minimum(tmp_path, monkeypatch, mnist_files):
    # 20 images: 16 users, s = 3, 2 test images -- no experiment to run
    mnist_files(tmp_path / "mnist", n=20)
    monkeypatch.setenv("SHUFFLEDP_DATA", str(tmp_path))
    with pytest.raises(DataError, match=r"train-images-idx3-ubyte.*needs at least 114 images.*got 20 \(16 training"):
        fl._load(np.random.default_rng(0))
    assert fl.scaled_split(fl.min_images()) == fl.checked_split(fl.min_images(), "x")
    assert min(fl.scaled_split(fl.min_images() - 1)[1:]) < fl.MIN_HELD_OUT


def test_a_run_on_mnist_files_describes_mnist_and_the_stride_it_used(tmp_path, monkeypatch, mnist_files):
    pytest.importorskip("jax", reason=JAX_REASON)
    pytest.importorskip("optax", reason=JAX_REASON)
    from shuffledp.experiments.runner import run_experiment

    mnist_files(tmp_path / "mnist", n=120)  # 100 users, s = 20, 10 validation and 10 test images
    monkeypatch.setenv("SHUFFLEDP_DATA", str(tmp_path))
    monkeypatch.setattr(fl, "RANDOMIZERS", (("Minkowski", "minkowski"), ("Laplace", "laplace")))
    monkeypatch.setattr(fl, "ROUNDS", 2)
    monkeypatch.setattr(fl, "ROUNDS_QUICK", 2)
    target = run_experiment(fl.NAME, tmp_path / "out", quick=True, seed=1, progress=False)
    with (target / "results.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert {r["dataset"] for r in rows if r["model"] != fl.PAPER_SCALE} == {"mnist"}
    p = json.loads((target / "meta.json").read_text())["parameters"]
    assert str(tmp_path / "mnist" / "train-images-idx3-ubyte") in p["data_files"] and p["model_stride"] == 2
    summary = (target / "summary.md").read_text()
    assert "Data: MNIST, from the IDX files" in summary and "stride 2 in both convolutions, as in the paper" in summary
    assert f"d = {p['model_dim']:,} parameters (the paper reports d = 4,292)" in summary
    assert "digits" not in summary and "stride 1" not in summary


def _rank_table(paper_scale_errors, gradient_errors):
    """Minkowski and PrivUnit: single-report errors at the paper's scale and PIC gradient errors, eps 1 and 3."""
    t = {}
    for e, (single, gradient) in enumerate(zip(paper_scale_errors, gradient_errors), start=1):
        for lab, value in single.items():
            t[(float(2 * e - 1), fl.PAPER_SCALE, lab, "single_report_l2_error")] = value
        for lab, value in gradient.items():
            t[(float(2 * e - 1), PIC, lab, "gradient_l2_error")] = value
    return t


@pytest.mark.parametrize(
    "single, gradient, verdict",
    [
        ([{"Minkowski": 3.34, "PrivUnit": 3.14}, {"Minkowski": 1.9, "PrivUnit": 2.1}], [{"Minkowski": 9, "PrivUnit": 8}] * 2,
         "size of the budget alone does not explain"),
        ([{"Minkowski": 3.0, "PrivUnit": 3.1}] * 2, [{"Minkowski": 9, "PrivUnit": 8}] * 2,
         "leads by single-report error at the paper's budgets but not by gradient error in our runs"),
        ([{"Minkowski": 3.0, "PrivUnit": 3.1}] * 2, [{"Minkowski": 7, "PrivUnit": 8}] * 2, "leads at both scales"),
    ],
)  # fmt: skip
def test_minkowski_rank_text_follows_the_printed_errors(monkeypatch, single, gradient, verdict):
    monkeypatch.setattr(fl, "RANDOMIZERS", (("Minkowski", "minkowski"), ("PrivUnit", "privunit")))
    budgets = {e: fl.RoundBudgets(e, 1e-7, 80, 10, 50, e / 80, 0.1, 4.0 + e) for e in (1.0, 3.0)}
    text = fl._paper_scale_rank(_rank_table(single, gradient), budgets)
    assert verdict in text.rsplit(";", 1)[1]
    behind = [e for e, row in zip((1, 3), single) if row["PrivUnit"] < row["Minkowski"]]
    for e in (1, 3):
        part = text.split(f"at eps = {e} (budget {4 + e:g})")[1].split(";")[0]
        assert ("above PrivUnit's" in part) == (e in behind) and ("is the lowest" in part) == (e not in behind)


def _with_accuracy(cells, accuracy):
    """``cells`` with final accuracies (model, randomizer) -> value at eps 1."""
    return {**cells, **{(1.0, m, lab, "test_accuracy"): v for (m, lab), v in accuracy.items()}}


def test_pic_beats_ldp_claim_lists_worse_cells_within_the_floor_and_sets_aside_chance_level_accuracy():
    # Minkowski: PIC's Shapley error a little above LDP's (within the floor); final accuracies 12% vs 2%, a
    # difference beyond the floor of 150 test images between two models at chance level; Laplace 50% vs 10%
    cells = _cells({"Minkowski": (3.0e-3, 3.01e-3), "Laplace": (3.0e-3, 2.5e-3)})
    accuracy = {(PIC, "Minkowski"): 0.12, (LDP, "Minkowski"): 0.02, (PIC, "Laplace"): 0.5, (LDP, "Laplace"): 0.1}
    beats, *_, best = fl.claims(_claim_rows(_with_accuracy(cells, accuracy), fl.ROUNDS, 1e-4), test_size=150)
    assert "PIC better in 4 of the 4" in beats.ours and beats.verdict == "held"
    assert "PIC worse in 1 of those (eps = 1 Minkowski shapley_mean_abs_error: PIC 0.00301, LDP 0.003)" in beats.ours
    assert "1 accuracy cells set aside, both models at or below chance level (14.9% on 150 test images)" in beats.ours
    assert "eps = 1 Minkowski test_accuracy: PIC 12.0%, LDP 2.0%" in beats.ours
    assert best.verdict == "not" and "Minkowski 0.12 (at chance level)" in best.ours


def test_minkowski_accuracy_claim_is_not_testable_when_the_best_model_is_at_chance_level():
    cells = _cells({"Minkowski": (3.0e-3, 2.5e-3), "Laplace": (3.0e-3, 2.5e-3)})
    accuracy = {(PIC, "Minkowski"): 0.03, (LDP, "Minkowski"): 0.1, (PIC, "Laplace"): 0.14, (LDP, "Laplace"): 0.1}
    best = fl.claims(_claim_rows(_with_accuracy(cells, accuracy), fl.ROUNDS), test_size=150)[3]
    assert "beyond the noise floor" in best.ours  # 11 points apart: a difference, but between two chance models
    assert best.verdict == "not testable" and "every PIC model at chance level" in best.ours
