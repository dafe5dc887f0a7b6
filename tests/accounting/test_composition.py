"""Composition: group/basic/advanced theorems and tight PLD composition of shuffled rounds."""

import math

import numpy as np
import pytest
from scipy import stats

from shuffledp.accounting import SelfComposedEvent, ShuffleEvent, VariationRatioAccountant
from shuffledp.accounting import composition as cp
from shuffledp.accounting.blanket import blanket_epsilon
from shuffledp.accounting.params import VariationRatio
from shuffledp.accounting.variation_ratio import variation_ratio_epsilon
from shuffledp.errors import PrivacyParameterError
from shuffledp.params import BlanketDecomposition

#: The PIC paper's federated-learning experiment: 80 rounds, 10,000 users per round,
#: global delta 0.01 / 50,000 (§7.3, Tables 5-6).
FL_ROUNDS, FL_USERS, FL_DELTA = 80, 10_000, 0.01 / 50_000


def test_group_basic_advanced_formulas():
    assert cp.group_composition(0.3, 1e-6, 1) == (0.3, pytest.approx(math.exp(0.3) * 1e-6))
    eps, delta = cp.group_composition(0.3, 1e-6, 4)
    assert eps == pytest.approx(1.2) and delta == pytest.approx(4 * math.exp(1.2) * 1e-6)
    assert cp.basic_composition(0.2, 1e-7, 10) == (pytest.approx(2.0), pytest.approx(1e-6))
    eps, delta = cp.advanced_composition(0.01, 1e-8, 1000, 1e-6)
    assert eps == pytest.approx(math.sqrt(2000 * math.log(1e6)) * 0.01 + 1000 * 0.01 * math.expm1(0.01))
    assert delta == pytest.approx(1000 * 1e-8 + 1e-6)
    assert eps < cp.basic_composition(0.01, 1e-8, 1000)[0]  # the regime where advanced pays off


def test_composition_bad_input():
    with pytest.raises(PrivacyParameterError):
        cp.group_composition(0.3, 1e-6, 0)
    with pytest.raises(PrivacyParameterError):
        cp.basic_composition(-0.1, 1e-6, 3)
    with pytest.raises(PrivacyParameterError):
        cp.advanced_composition(0.1, 1e-6, 3, 0.0)
    with pytest.raises(PrivacyParameterError, match="composition method"):
        cp.composed_shuffle_epsilon(1000, 1e-6, 3, eps0=1.0, method="magic")
    with pytest.raises(PrivacyParameterError):
        cp.tight_composition_epsilon(1000, 1e-6, 0, eps0=1.0)
    with pytest.raises(PrivacyParameterError):
        cp.shuffle_pld(1000, 1.0, step=1.0)


def theorem1_pair(params: VariationRatio, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Dense pmfs of (P, Q) of Theorem 1 by enumerating C, A and the victim's indicators."""
    p, beta, q = params.p, params.beta, params.q
    w_same, w_other = beta * p / (p - 1), beta / (p - 1)
    rho = 2 * w_same / q
    P, Q = np.zeros((n + 2, n + 2)), np.zeros((n + 2, n + 2))
    for c in range(n):
        for a in range(c + 1):
            w = stats.binom.pmf(c, n - 1, rho) * stats.binom.pmf(a, c, 0.5)
            for (d1, d2), wd in (((1, 0), w_same), ((0, 1), w_other), ((0, 0), 1 - w_same - w_other)):
                P[a + d1, c - a + d2] += w * wd
                Q[a + d2, c - a + d1] += w * wd
    return P.ravel(), Q.ravel()


def three_class_pair(params: BlanketDecomposition, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Dense pmfs of the counts (h0, h1, hc) of the three-class pair (`shuffledp.accounting.blanket`).

    The victim takes label 0, 1 or c with probabilities (e r, r, a) on x0 and (r, e r, a) on x1;
    each of the n - 1 others takes 0, 1, c with probabilities (r, r, kappa) and otherwise none,
    with r = beta/(e - 1), a = 1 - beta/tanh(eps0/2), kappa = a/common_ratio.  Built by
    convolving one user at a time.
    """
    e = math.exp(params.eps0)
    r = params.beta / (e - 1)
    a = 1 - params.beta / math.tanh(params.eps0 / 2)
    kappa = a / params.common_ratio
    others = np.zeros((n + 1, n + 1, n + 1))
    others[0, 0, 0] = 1.0
    for _ in range(n - 1):
        new = (1 - 2 * r - kappa) * others
        new[1:, :, :] += r * others[:-1, :, :]
        new[:, 1:, :] += r * others[:, :-1, :]
        new[:, :, 1:] += kappa * others[:, :, :-1]
        others = new

    def victim(w0: float, w1: float) -> np.ndarray:
        out = np.zeros_like(others)
        out[1:, :, :] += w0 * others[:-1, :, :]
        out[:, 1:, :] += w1 * others[:, :-1, :]
        out[:, :, 1:] += a * others[:, :, :-1]
        return out.ravel()

    return victim(e * r, r), victim(r, e * r)


def exact_delta(P: np.ndarray, Q: np.ndarray, eps: float) -> float:
    return float(np.sum(np.maximum(P - math.exp(eps) * Q, 0.0)))


@pytest.mark.parametrize(
    "params",
    [
        VariationRatio.from_ldp(1.0),
        VariationRatio(
            p=math.exp(2.0), beta=math.tanh(1.0), q0=10.0, q1=10.0
        ),  # others' blanket thinner than the victim's
        BlanketDecomposition(eps0=2.0, beta=0.5),  # a randomizer's own beta: the three-class pair
        BlanketDecomposition(eps0=2.0, beta=0.5, common_ratio=1.0),  # its common part fully covered (k-RR-like)
    ],
)
def test_pld_of_one_round_dominates_and_is_close(params):
    n = 40
    P, Q = three_class_pair(params, n) if isinstance(params, BlanketDecomposition) else theorem1_pair(params, n)
    pld = cp.shuffle_pld(n, params=params, step=1e-4)
    for eps in (0.0, 0.1, 0.4, 0.8):
        exact = exact_delta(P, Q, eps)
        assert exact <= pld.delta(eps) <= exact_delta(P, Q, eps - 1e-4) + 1e-12  # losses rounded up by <= step


def test_two_fold_composition_matches_brute_force():
    params, n, step = VariationRatio.from_ldp(1.5), 12, 1e-4
    P, Q = theorem1_pair(params, n)
    P2, Q2 = np.outer(P, P).ravel(), np.outer(Q, Q).ravel()
    pld2 = cp.shuffle_pld(n, params=params, step=step).compose(2)
    for eps in (0.2, 0.7, 1.5, 2.2):
        exact = exact_delta(P2, Q2, eps)
        assert exact <= pld2.delta(eps) <= exact_delta(P2, Q2, eps - 2 * step) + 1e-12
    target = 1e-4
    eps_tight = pld2.epsilon(target)
    assert exact_delta(P2, Q2, eps_tight) <= target
    assert exact_delta(P2, Q2, eps_tight - 3 * step) > target


def test_fft_roundoff_allowance_covers_the_error():
    pld = cp.shuffle_pld(2_000, 2.0, step=1e-3)
    composed = pld.compose(3)
    exact = np.convolve(np.convolve(pld.pmf, pld.pmf), pld.pmf)
    assert composed.pmf.size == exact.size
    assert np.sum(np.abs(composed.pmf - exact)) <= composed.roundoff
    assert composed.roundoff < 1e-12


@pytest.mark.parametrize("eps0,n", [(0.5, 10_000), (2.0, 5_000), (6.0, 10_000)])
def test_single_round_equals_the_variation_ratio_bound(eps0, n):
    delta = 1e-6
    pld = cp.shuffle_pld(n, eps0)
    tight = cp.tight_composition_epsilon(n, delta, 1, eps0=eps0)
    ub = variation_ratio_epsilon(VariationRatio.from_ldp(eps0), n, delta)
    assert ub * (1 - 1e-6) <= tight <= ub + 2 * pld.step


def test_tight_composition_grows_with_the_number_of_rounds():
    values = [cp.tight_composition_epsilon(5_000, 1e-6, k, eps0=1.0) for k in (1, 2, 5, 20)]
    assert all(b > a for a, b in zip(values, values[1:]))
    assert values[-1] < 20 * values[0]


@pytest.mark.parametrize("eps0", [0.5, 1.0, 2.0, 4.0, 5.0])
def test_80_rounds_of_federated_learning_tight_beats_advanced_and_basic(eps0):
    tight = cp.composed_shuffle_epsilon(FL_USERS, FL_DELTA, FL_ROUNDS, eps0=eps0, method="tight")
    advanced = cp.composed_shuffle_epsilon(FL_USERS, FL_DELTA, FL_ROUNDS, eps0=eps0, method="advanced")
    basic = cp.composed_shuffle_epsilon(FL_USERS, FL_DELTA, FL_ROUNDS, eps0=eps0, method="basic")
    assert tight <= min(advanced, basic)
    per_round = variation_ratio_epsilon(VariationRatio.from_ldp(eps0), FL_USERS, FL_DELTA / FL_ROUNDS)
    if per_round * math.expm1(per_round) * FL_ROUNDS < per_round * math.sqrt(FL_ROUNDS):
        # advanced composition pays off only while k eps (e^eps - 1) stays below sqrt(k) eps
        assert advanced <= basic
    # tight composition must still be a valid bound: at least the single-round guarantee
    assert tight >= variation_ratio_epsilon(VariationRatio.from_ldp(eps0), FL_USERS, FL_DELTA)


@pytest.mark.parametrize("method", cp.COMPOSITION_METHODS)
def test_composed_local_epsilon_round_trips(method):
    n, delta, k, target = 5_000, 1e-6, 5, 0.8
    eps0 = cp.composed_local_epsilon(target, n, delta, k, method=method)
    reached = cp.composed_shuffle_epsilon(n, delta, k, eps0=eps0, method=method)
    assert reached <= target
    assert reached >= target * (1 - 1e-5)


def test_composed_local_epsilon_orders_the_methods_and_accepts_a_randomizer_family():
    n, delta, k, target = 5_000, 1e-6, 5, 0.8
    budgets = {m: cp.composed_local_epsilon(target, n, delta, k, method=m) for m in cp.COMPOSITION_METHODS}
    assert budgets["tight"] > budgets["advanced"] and budgets["tight"] > budgets["basic"]
    tighter = lambda e: BlanketDecomposition(eps0=e, beta=0.5 * math.tanh(e / 2))  # noqa: E731
    assert cp.composed_local_epsilon(target, n, delta, k, family=tighter) > budgets["tight"]


def test_composed_local_epsilon_bad_input():
    with pytest.raises(PrivacyParameterError, match="unknown composition method 'magic'"):
        cp.composed_local_epsilon(1.0, 1000, 1e-6, 3, method="magic")
    with pytest.raises(PrivacyParameterError, match="min_epsilon must be < max_epsilon"):
        cp.composed_local_epsilon(1.0, 1000, 1e-6, 3, min_epsilon=3.0, max_epsilon=2.0)
    with pytest.raises(PrivacyParameterError, match="rounds must be"):
        cp.composed_local_epsilon(1.0, 1000, 1e-6, 0)
    with pytest.raises(PrivacyParameterError, match=r"no local epsilon .* over rounds=80 of"):
        cp.composed_local_epsilon(1e-3, 10, 1e-6, 80)


def test_pld_epsilon_with_losses_of_hundreds_is_finite_and_warning_free():
    """80 rounds at eps0 = 10: composed losses reach ~800, where e^-loss underflows and e^eps overflows."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        total = cp.tight_composition_epsilon(FL_USERS, FL_DELTA, FL_ROUNDS, eps0=10.0)
    assert math.isfinite(total)
    # same eps0 on both sides (a comparison against basic at eps0 = 20 could not fail)
    basic = cp.composed_shuffle_epsilon(FL_USERS, FL_DELTA, FL_ROUNDS, eps0=10.0, method="basic")
    single = variation_ratio_epsilon(VariationRatio.from_ldp(10.0), FL_USERS, FL_DELTA)
    assert single <= total <= min(basic, FL_ROUNDS * 10.0 * (1 + 1e-12))


def test_fl_composition_experiment_quick_run(tmp_path, monkeypatch):
    import csv

    from shuffledp.experiments import fl_composition, run_experiment

    monkeypatch.setattr(fl_composition, "EPS0_QUICK", (1.0, 4.0))
    target = run_experiment("fl-composition", tmp_path, quick=True, progress=False)
    rows = list(csv.DictReader((target / "results.csv").open()))
    assert list(rows[0]) == fl_composition.COLUMNS
    totals = {
        (r["composition"], float(r["eps0"])): float(r["total_epsilon"])
        for r in rows
        if r["analysis"] == "total-epsilon"
    }
    assert set(totals) == {(m, e) for m in cp.COMPOSITION_METHODS for e in (1.0, 4.0)}
    for e in (1.0, 4.0):
        assert totals[("tight", e)] < min(totals[("advanced", e)], totals[("basic", e)])
    budgets = [r for r in rows if r["analysis"] == "local-budget"]
    assert {(r["composition"], float(r["total_epsilon"])) for r in budgets} == {
        (m, t) for m in cp.COMPOSITION_METHODS for t in (1.0, 3.0)
    }
    for r in budgets:
        reached = cp.composed_shuffle_epsilon(
            FL_USERS, FL_DELTA, FL_ROUNDS, eps0=float(r["eps0"]), method=r["composition"]
        )
        assert reached <= float(r["total_epsilon"])
    summary = (target / "summary.md").read_text()
    assert "| tight |" in summary and "paper (§7.3, PIC model)" in summary
    assert (target / "figure.png").stat().st_size > 10_000


def test_one_round_of_tight_composition_is_the_single_round_bound_exactly():
    own = BlanketDecomposition(eps0=0.5, beta=0.1)
    assert cp.tight_composition_epsilon(75_511, 1.3e-6, 1, params=own) == blanket_epsilon(own, 75_511, 1.3e-6)
    vr = VariationRatio.from_ldp(0.5)
    assert cp.tight_composition_epsilon(75_511, 1.3e-6, 1, params=vr) == variation_ratio_epsilon(vr, 75_511, 1.3e-6)
    assert cp.composed_shuffle_epsilon(53, 2e-8, 1, eps0=0.034) <= cp.composed_shuffle_epsilon(
        53, 2e-8, 1, eps0=0.034, method="basic"
    )


def test_tight_composition_never_exceeds_rounds_times_log_p():
    # n = 8 reports at eps0 = 2: the PLD's grid bias used to give 6.0009 > 3 * log p = 6
    assert cp.tight_composition_epsilon(8, 0.01, 3, eps0=2.0) <= 3 * math.nextafter(2.0, math.inf)
    assert cp.composed_shuffle_epsilon(8, 0.01, 3, eps0=2.0, method="best") <= 6.0 + 1e-12


def test_advanced_composition_is_capped_by_basic():
    assert cp.advanced_composition(0.2, 1e-7, 1, 1e-6)[0] == pytest.approx(0.2)
    for rounds in (1, 3):
        advanced = cp.composed_shuffle_epsilon(10_000, 1e-6, rounds, eps0=2.0, method="advanced")
        assert advanced <= cp.composed_shuffle_epsilon(10_000, 1e-6, rounds, eps0=2.0, method="basic")


def test_best_composition_names_its_method_and_explains_failures():
    best = cp.best_composed_epsilon(10_000, 2e-7, 80, eps0=2.0)
    assert best.method == "tight" and best.epsilon == min(best.candidates.values())
    assert best.candidates["tight"] < best.candidates["advanced"] <= best.candidates["basic"]
    # p = infinity, no blanket covers the victim: the PLD has mass at infinite loss >= delta
    poisson = VariationRatio(p=math.inf, beta=0.5, q0=1.01, q1=1.01)
    with pytest.raises(cp.CompositionError, match="infinite loss"):
        cp.tight_composition_epsilon(10, 1e-6, 3, params=poisson)
    with pytest.raises(cp.CompositionError, match="no composition method"):
        cp.best_composed_epsilon(10, 1e-6, 3, params=poisson)


@pytest.mark.parametrize(
    "params",
    [
        VariationRatio(p=math.inf, beta=0.6, q0=3.0, q1=3.0),  # w_none = 0.4 > 0; E[C] ~ 1.2e5: blocks of 11 totals
        VariationRatio.from_ldp(2.0),  # w_none = 0; E[C] ~ 7e4: blocks of 7 totals
    ],
)
def test_blocked_pld_dominates_the_exact_cells_and_stays_close(monkeypatch, params):
    from shuffledp.accounting import dominating_pair as dp

    n, delta = 300_000, 1e-7
    blocked = cp.shuffle_pld(n, params=params, step=1e-4)
    composed_blocked = cp.tight_composition_epsilon(n, delta, 3, params=params, step=1e-4)
    monkeypatch.setattr(dp, "PLD_BLOCK_RTOL", 0.0)  # every total on its own
    exact = cp.shuffle_pld(n, params=params, step=1e-4)
    composed_exact = cp.tight_composition_epsilon(n, delta, 3, params=params, step=1e-4)
    for eps in (0.0, 0.005, 0.01, 0.02):
        assert exact.delta(eps) <= blocked.delta(eps) * (1 + 1e-9) + 1e-15
    assert composed_exact <= composed_blocked <= composed_exact * 1.01


def test_basic_composition_refuses_a_share_of_delta_below_the_smallest_priced():
    """Each of 3 rounds at 1e-300 / 3 would be priced below the floor where round-off can still be charged."""
    rounds = SelfComposedEvent(ShuffleEvent(VariationRatio.from_ldp(1.0), 2), 3)
    with pytest.raises(PrivacyParameterError, match=r"delta / rounds must be a number in \[1e-300, 1\); got"):
        VariationRatioAccountant().compose(rounds).get_epsilon(1e-300)
    with pytest.raises(PrivacyParameterError, match=r"delta / rounds must be a number in \[1e-300, 1\); got"):
        cp.composed_local_epsilon(0.01, 2, 1e-300, 3, method="basic")
    assert VariationRatioAccountant().compose(rounds).get_epsilon(3e-300) <= 3.0 * (1 + 1e-12)
