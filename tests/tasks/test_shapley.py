"""Shapley values of gradient reports for the cosine utility (PIC §7.3, full version Appendix E)."""

import itertools
import math
import re
from pathlib import Path

import numpy as np
import pytest

from shuffledp.errors import DomainError, ShapeError
from shuffledp.tasks import (
    ShapleyTask,
    cosine_utility,
    exact_shapley,
    order_shapley,
    permutation_shapley,
    shapley_error,
    shapley_values,
)
from shuffledp.tasks import shapley as shapley_module

R2 = 1 / math.sqrt(2)


def _brute_force(G, v):
    """The textbook definition, one coalition at a time (independent of the module's doubling)."""
    G, v = np.asarray(G, float), np.asarray(v, float)
    s = len(G)

    def U(S):
        total = G[list(S)].sum(axis=0) if S else np.zeros(G.shape[1])
        norm = np.linalg.norm(total) * np.linalg.norm(v)
        return float(total @ v / norm) if norm > 0 else 0.0

    phi = np.zeros(s)
    for i in range(s):
        others = [j for j in range(s) if j != i]
        for k in range(s):
            w = math.factorial(k) * math.factorial(s - k - 1) / math.factorial(s)
            for S in itertools.combinations(others, k):
                phi[i] += w * (U(S + (i,)) - U(S))
    return phi


def test_hand_computed_two_orthogonal_users():
    # U(1) = 1, U(2) = 0, U(12) = 1/sqrt 2:  phi_1 = (1 + 1/sqrt2)/2, phi_2 = (0 + 1/sqrt2 - 1)/2
    phi = exact_shapley([[1.0, 0.0], [0.0, 1.0]], [1.0, 0.0])
    assert phi == pytest.approx([(1 + R2) / 2, (R2 - 1) / 2], abs=1e-15)


def test_hand_computed_opposite_users_cancel_to_zero_utility():
    # U(1) = 1, U(2) = -1, U(12) = 0 (zero sum): phi_1 = (1 + 1)/2, phi_2 = (-1 - 1)/2
    assert exact_shapley([[2.0, 0.0], [-2.0, 0.0]], [1.0, 0.0]) == pytest.approx([1.0, -1.0], abs=1e-15)


def test_hand_computed_three_users():
    """g = (1,0), (0,2), (1,1), v = (1,1): U(i) = 1/sqrt2, 1/sqrt2, 1; U(12) = U(13) = 3/sqrt10,
    U(23) = 4/sqrt20, U(123) = 5/sqrt26; phi_1 = U1/3 + (U12-U2)/6 + (U13-U3)/6 + (U123-U23)/3."""
    U1, U2, U3 = R2, R2, 1.0
    U12, U13, U23, U123 = 3 / math.sqrt(10), 3 / math.sqrt(10), 4 / math.sqrt(20), 5 / math.sqrt(26)
    phi1 = U1 / 3 + (U12 - U2) / 6 + (U13 - U3) / 6 + (U123 - U23) / 3
    phi2 = U2 / 3 + (U12 - U1) / 6 + (U23 - U3) / 6 + (U123 - U13) / 3
    phi3 = U3 / 3 + (U13 - U1) / 6 + (U23 - U2) / 6 + (U123 - U12) / 3
    got = shapley_values([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]], [1.0, 1.0])
    assert got.method == "exact" and got.n_permutations == 0
    assert got.values == pytest.approx([phi1, phi2, phi3], abs=1e-14)


def test_single_user_gets_its_cosine():
    assert exact_shapley([[3.0, 4.0]], [1.0, 0.0]) == pytest.approx([0.6])


@pytest.mark.parametrize("s, D", [(4, 2), (6, 3), (7, 40), (8, 5)])
def test_exact_matches_the_definition_and_the_axioms(s, D):
    rng = np.random.default_rng(s * 100 + D)
    G, v = rng.normal(size=(s, D)), rng.normal(size=D)
    phi = exact_shapley(G, v)
    assert phi == pytest.approx(_brute_force(G, v), abs=1e-12)
    assert phi.sum() == pytest.approx(float(cosine_utility(G.sum(axis=0)[None], v)[0]), abs=1e-12)  # efficiency


def test_null_and_symmetric_users():
    rng = np.random.default_rng(3)
    g = rng.normal(size=(3, 4))
    G = np.vstack([g, np.zeros(4), g[1]])  # user 3 adds nothing; users 1 and 4 are identical
    phi = exact_shapley(G, rng.normal(size=4))
    assert phi[3] == pytest.approx(0.0, abs=1e-15)
    assert phi[1] == pytest.approx(phi[4], abs=1e-15)


def test_zero_validation_gradient_gives_zero_values():
    assert np.all(exact_shapley(np.ones((3, 2)), [0.0, 0.0]) == 0.0)
    assert np.all(permutation_shapley(np.ones((3, 2)), [0.0, 0.0], 5, np.random.default_rng(0)).values == 0.0)


@pytest.mark.parametrize("s", [3, 7, 10])
def test_permutation_estimator_is_unbiased(s):
    """Over 60 seeds the mean estimate lies within 4.5 standard errors of the exact values
    (Bonferroni over s users), and each seed's 95% interval covers the exact value ~95% of the time."""
    rng = np.random.default_rng(40 + s)
    G, v = rng.normal(size=(s, 6)), rng.normal(size=6)
    G[0] *= 3.0  # unequal users
    exact = exact_shapley(G, v)
    runs = [permutation_shapley(G, v, 48, np.random.default_rng(seed)) for seed in range(60)]
    est = np.array([r.values for r in runs])
    se_across = est.std(axis=0, ddof=1) / math.sqrt(len(runs))
    assert np.all(np.abs(est.mean(axis=0) - exact) <= 4.5 * se_across + 1e-12)
    covered = np.mean([np.abs(r.values - exact) <= 1.96 * r.stderr + 1e-12 for r in runs])
    assert 0.88 <= covered <= 1.0
    assert np.allclose(est.sum(axis=1), est.sum(axis=1)[0])  # every order sums to U(N)


def test_estimator_converges_to_the_exact_values():
    rng = np.random.default_rng(8)
    G, v = rng.normal(size=(9, 5)), rng.normal(size=5)
    est = permutation_shapley(G, v, 20_000, np.random.default_rng(1))
    assert np.max(np.abs(est.values - exact_shapley(G, v))) < 5 * est.stderr.max()
    assert est.stderr.max() < 0.01


def test_estimator_in_column_and_order_blocks_matches_one_block(monkeypatch):
    rng = np.random.default_rng(5)
    G, v = rng.normal(size=(30, 12)), rng.normal(size=12)
    one = permutation_shapley(G, v, 40, np.random.default_rng(2))
    monkeypatch.setattr(shapley_module, "_BLOCK_ELEMENTS", 50)  # 1 order per block, 1 column per chunk
    blocks = permutation_shapley(G, v, 40, np.random.default_rng(2))
    assert blocks.values == pytest.approx(one.values, abs=1e-12)


def test_high_dimensional_gradients_are_reduced_to_their_span():
    rng = np.random.default_rng(6)
    G, v = rng.normal(size=(5, 4000)), rng.normal(size=4000)
    assert exact_shapley(G, v) == pytest.approx(_brute_force(G, v), abs=1e-12)


@pytest.mark.parametrize("method", ["exact", "permutation"])
def test_permutation_equivariance(method):
    rng = np.random.default_rng(11)
    G, v = rng.normal(size=(9, 4)), rng.normal(size=4)
    base = shapley_values(G, v, method=method, n_permutations=30, rng=np.random.default_rng(0)).values
    for _ in range(5):
        pi = rng.permutation(9)
        permuted = shapley_values(G[pi], v, method=method, n_permutations=30, rng=np.random.default_rng(0)).values
        assert np.array_equal(permuted, base[pi])


def test_task_is_a_function_of_the_multiset_of_reports():
    rng = np.random.default_rng(12)
    G, v = rng.normal(size=(20, 3)), rng.normal(size=3)
    task = ShapleyTask(validation=v, n_permutations=16, seed=7)
    out = task(G)
    assert out.method == "permutation" and len(out) == 20
    pi = rng.permutation(20)
    assert np.array_equal(task(G[pi]).values, out.values[pi])
    assert np.frombuffer(out.user_output(4), "<f8")[0] == out.values[4]
    with pytest.raises(ShapeError, match=r"i must be a report index in \[0, 20\)"):
        out.user_output(20)


def test_auto_is_exact_up_to_the_limit_the_readme_states_and_estimates_above():
    """One number: README's "exact by enumeration up to s = N", the auto switch and the FL experiment's meta."""
    from shuffledp.experiments.pic_fl_incentives import SHAPLEY_METHOD

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    stated = re.findall(r"exact by enumeration up to s = (\d+)", " ".join(readme.split()))
    assert stated == [str(shapley_module.EXACT_MAX_PLAYERS)]
    limit = int(stated[0])
    rng = np.random.default_rng(13)
    assert shapley_values(rng.normal(size=(limit, 2)), [1.0, 0.0]).method == "exact"
    assert shapley_values(rng.normal(size=(limit + 1, 2)), [1.0, 0.0], rng=rng).method == "permutation"
    assert SHAPLEY_METHOD.startswith(f"exact for s <= {limit},")


def test_bad_input_is_refused_with_named_errors():
    with pytest.raises(ShapeError, match="gradients"):
        exact_shapley([1.0, 2.0], [1.0, 0.0])
    with pytest.raises(ShapeError, match=r"validation must be a vector of length 2"):
        exact_shapley([[1.0, 2.0]], [1.0, 0.0, 0.0])
    with pytest.raises(DomainError, match=r"gradients\[1\]"):
        exact_shapley([[1.0, 2.0], [np.nan, 0.0]], [1.0, 0.0])
    with pytest.raises(DomainError, match="validation must hold finite"):
        exact_shapley([[1.0, 2.0]], [np.inf, 0.0])
    with pytest.raises(DomainError, match=r"s must be at most 16, got s=17.*method='permutation'"):
        exact_shapley(np.ones((17, 2)), [1.0, 0.0])
    with pytest.raises(DomainError, match="n_permutations must be an integer >= 1, got 0"):
        permutation_shapley(np.ones((3, 2)), [1.0, 0.0], 0)
    with pytest.raises(DomainError, match="method must be 'auto', 'exact' or 'permutation', got 'shap'"):
        shapley_values(np.ones((3, 2)), [1.0, 0.0], method="shap")


def test_shapley_error_is_the_mean_absolute_difference():
    assert shapley_error([0.5, -0.25, 0.25], [0.25, 0.25, 0.25]) == pytest.approx(0.25)
    assert math.isnan(shapley_error([], []))
    with pytest.raises(ShapeError, match="same length"):
        shapley_error([0.1, 0.2], [0.1])


def _scatter(values, coords, dim):
    """(s, dim) gradients, zero off each user's coordinates."""
    out = np.zeros((len(values), dim))
    np.put_along_axis(out, np.asarray(coords), np.asarray(values, float), axis=1)
    return out


def test_order_shapley_is_defined_once_with_the_other_shapley_code():
    from shuffledp.experiments import pic_fl_incentives

    assert order_shapley.__module__ == "shuffledp.tasks.shapley"
    assert pic_fl_incentives.order_shapley is order_shapley  # the experiment uses it, keeps no copy
    assert "order_shapley" not in pic_fl_incentives.__all__


def test_order_shapley_refuses_orders_of_another_group_size_quoting_the_shape():
    with pytest.raises(ShapeError, match=r"shape \(T, 2\), got shape \(1, 3\)"):
        order_shapley([[1.0, 0.0], [0.0, 1.0]], [1.0, 0.0], [[0, 1, 2]])


def test_order_shapley_over_all_orders_equals_exact_shapley_for_overlapping_sparse_gradients():
    rng = np.random.default_rng(4)
    coords = np.array([[0, 1], [1, 2], [0, 1], [3, 4], [2, 5]])  # users 0-2 share coordinates: Gram cross terms
    values = rng.normal(size=(5, 2))
    values[2] = -values[0]  # users 0 and 2 cancel: a zero coalition sum, U = 0 there
    G, v = _scatter(values, coords, 6), rng.normal(size=6)
    orders = np.array(list(itertools.permutations(range(5))))
    np.testing.assert_allclose(order_shapley(G, v, orders), exact_shapley(G, v), rtol=1e-10, atol=1e-12)


def test_order_shapley_over_sampled_orders_is_unbiased():
    rng = np.random.default_rng(5)
    coords = np.sort(np.argsort(rng.random((9, 8)), axis=1)[:, :3], axis=1)  # 3 of 8 coordinates per user
    G, v = _scatter(rng.normal(size=(9, 3)), coords, 8), rng.normal(size=8)
    orders = rng.permuted(np.broadcast_to(np.arange(9), (20, 9)), axis=1)
    runs = np.array([order_shapley(G, v, rng.permuted(orders, axis=1)) for _ in range(200)])
    se = runs.std(axis=0) / np.sqrt(len(runs))
    assert np.all(np.abs(runs.mean(axis=0) - exact_shapley(G, v)) < 5 * se + 1e-12)
