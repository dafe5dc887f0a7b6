"""Closed-form amplification bounds: formulas, regimes, validity against the exact worst case."""

import math
from decimal import Decimal, getcontext

import numpy as np
import pytest

from shuffledp.accounting import closed_form as cf
from shuffledp.accounting.bounds import available_methods, shuffle_epsilon
from shuffledp.accounting.params import VariationRatio
from shuffledp.accounting.variation_ratio import hockey_stick_divergence, variation_ratio_epsilon_lower
from shuffledp.errors import PrivacyParameterError, UnprovenBoundError
from shuffledp.params import BlanketDecomposition

GENERIC = [
    cf.erlingsson_epsilon,
    cf.fmt_epsilon,
    cf.pic_eq1_epsilon,
    cf.blanket_hoeffding_epsilon,
    cf.blanket_bennett_epsilon,
]


def test_erlingsson_formula_and_regime():
    assert cf.erlingsson_epsilon(0.25, 10_000, 1e-6) == pytest.approx(
        12 * 0.25 * math.sqrt(math.log(1e6) / 10_000), rel=1e-15
    )
    assert math.isinf(cf.erlingsson_epsilon(0.5, 10_000, 1e-6))  # eps0 < 1/2 is strict
    assert math.isinf(cf.erlingsson_epsilon(0.25, 999, 1e-6))
    assert math.isinf(cf.erlingsson_epsilon(0.25, 10_000, 0.01))
    assert math.isfinite(cf.erlingsson_epsilon(0.4999, 1000, 0.0099))


def test_fmt_regime_boundary():
    n, delta = 10**5, 1e-6
    edge = math.log(n / (16 * math.log(2 / delta)))
    assert math.isfinite(cf.fmt_epsilon(edge * (1 - 1e-12), n, delta))
    assert math.isinf(cf.fmt_epsilon(edge * (1 + 1e-12), n, delta))


def test_pic_eq1_is_fmt_with_the_stronger_clone_probability():
    """Eq. 1 of the PIC paper is FMT's Theorem 3.1 with e^eps0 replaced by (e^eps0 + 1)/2.

    (The clone probability e^-eps0 becomes 2/(e^eps0 + 1).)  An independent evaluation of
    the FMT formula with that substitution must give Eq. 1, and the regimes must match.
    """
    for eps0 in (0.3, 1.0, 2.5, 5.0):
        for n in (5_000, 10**5, 10**7):
            delta = 1e-7
            m = (math.exp(eps0) + 1) / 2
            expected = math.log(1 + math.tanh(eps0 / 2) * (8 * math.sqrt(m * math.log(4 / delta) / n) + 8 * m / n))
            in_regime = math.log(m) <= math.log(n / (16 * math.log(2 / delta)))
            got = cf.pic_eq1_epsilon(eps0, n, delta)
            if in_regime:
                assert got == pytest.approx(expected, rel=1e-13)
            else:
                assert math.isinf(got)


def test_variation_ratio_closed_form_reduces_to_stronger_clone_form_for_generic_parameters():
    """At p = q = e^eps0, beta = tanh(eps0/2): r = 1/(e^eps0 + 1) and the coefficient is beta."""
    for eps0 in (0.5, 2.0, 4.0):
        n, delta = 10**6, 1e-8
        r = 1 / (math.exp(eps0) + 1)
        m = r * (n - 1)
        expected = math.log1p(math.tanh(eps0 / 2) * (math.sqrt(16 * math.log(4 / delta) / m) + 2 / m))
        assert cf.variation_ratio_closed_form(VariationRatio.from_ldp(eps0), n, delta) == pytest.approx(
            expected, rel=1e-12
        )
    assert math.isinf(cf.variation_ratio_closed_form(VariationRatio.from_ldp(4.0), 1000, 1e-6))


def test_variation_ratio_closed_form_handles_poisson_and_extreme_q():
    poisson = VariationRatio(p=math.inf, beta=0.5, q0=4.0, q1=4.0)
    assert math.isfinite(cf.variation_ratio_closed_form(poisson, 10**6, 1e-8))
    # r >= 1/2 (q = 1): the conservative weight c = 0 keeps the coefficient finite and positive
    tight_q = VariationRatio(p=3.0, beta=0.5, q0=1.0, q1=1.0)
    assert 0 < cf.variation_ratio_closed_form(tight_q, 10**6, 1e-8) < math.inf
    assert cf.variation_ratio_closed_form(VariationRatio(p=3.0, beta=0.0, q0=3.0, q1=3.0), 10, 1e-6) == 0.0


@pytest.mark.parametrize("eps0", [0.1, 0.5, 1.0, 2.0, 4.0])
@pytest.mark.parametrize("n", [1_000, 30_000, 10**6])
def test_every_generic_closed_form_is_above_the_attainable_worst_case(eps0, n):
    """Validity: the variation-ratio lower bound is attained by actual eps0-LDP randomizers
    (generic parameters), so no valid upper bound may be smaller."""
    delta = 1e-6
    lower = variation_ratio_epsilon_lower(VariationRatio.from_ldp(eps0), n, delta)
    for bound in GENERIC:
        assert bound(eps0, n, delta) >= lower, bound.__name__
    assert cf.variation_ratio_closed_form(VariationRatio.from_ldp(eps0), n, delta) >= lower


@pytest.mark.parametrize("eps0", [0.5, 1.0, 3.0])
def test_blanket_deltas_dominate_the_exact_worst_case_divergence(eps0):
    """delta_B(eps) of the privacy blanket must be >= the hockey-stick divergence of the
    attainable worst-case pair at every eps (both are functions of eps, not just one point)."""
    n = 20_000
    vr = VariationRatio.from_ldp(eps0)
    for eps in np.linspace(0.02, eps0 * 0.95, 9):
        exact_low, _ = hockey_stick_divergence(vr, n, float(eps))
        assert cf.blanket_hoeffding_delta(eps, eps0, n) >= exact_low
        assert cf.blanket_bennett_delta(eps, eps0, n) >= exact_low


@pytest.mark.parametrize(
    "func,delta_of",
    [
        (cf.blanket_hoeffding_epsilon, cf.blanket_hoeffding_delta),
        (cf.blanket_bennett_epsilon, cf.blanket_bennett_delta),
    ],
)
def test_blanket_epsilon_is_certified_and_minimal(func, delta_of):
    eps0, n, delta = 1.0, 50_000, 1e-7
    eps = func(eps0, n, delta)
    assert 0 < eps < eps0
    assert delta_of(eps, eps0, n) <= delta
    assert delta_of(eps * (1 - 1e-7), eps0, n) > delta  # the first certified eps, to rtol
    assert math.isinf(func(4.0, 1000, 1e-6))  # nothing certified below eps0


def test_phi_series_is_a_lower_bound_and_accurate():
    getcontext().prec = 60
    for u in (1e-8, 1e-5, 3e-4, 9.9e-4, 2e-3, 0.5, 3.0):
        exact = (1 + Decimal(u)) * (1 + Decimal(u)).ln() - Decimal(u)
        got = Decimal(float(cf._phi(np.array([u]))[0]))
        assert got <= exact * (1 + Decimal(1e-12))
        assert abs(got - exact) <= exact * Decimal(1e-9)


@pytest.mark.parametrize("eps0", [0.3, 2.0])
def test_bounds_do_not_increase_with_n(eps0):
    ns = [2_000, 5_000, 20_000, 10**5, 10**6]
    for bound in GENERIC:
        values = [bound(eps0, n, 1e-6) for n in ns]
        assert all(b <= a for a, b in zip(values, values[1:])), (bound.__name__, values)


@pytest.mark.parametrize(
    "bad", [dict(eps0=0.0), dict(eps0=-1.0), dict(n=0), dict(delta=0.0), dict(delta=1.0), dict(eps0=math.nan)]
)
def test_bad_input_raises(bad):
    args = dict(eps0=1.0, n=1000, delta=1e-6) | bad
    for bound in GENERIC:
        with pytest.raises(PrivacyParameterError):
            bound(args["eps0"], args["n"], args["delta"])


def test_registered_and_dispatched():
    upper = available_methods("upper")
    for name in (
        "erlingsson",
        "blanket-hoeffding",
        "blanket-bennett",
        "fmt-closed-form",
        "pic-eq1",
        "variation-ratio-closed-form",
    ):
        assert upper[name].kind == "upper"
    assert shuffle_epsilon(10**5, 1e-6, eps0=1.0, method="pic-eq1") == cf.pic_eq1_epsilon(1.0, 10**5, 1e-6)
    laplace_like = BlanketDecomposition(eps0=1.0, beta=1 - math.exp(-0.5))
    # a population of 1-LDP randomizers: the generic bound applies at eps0
    assert shuffle_epsilon(10**5, 1e-6, params=laplace_like, method="fmt-closed-form") == cf.fmt_epsilon(
        1.0, 10**5, 1e-6
    )
    others_weaker = VariationRatio(p=math.e, beta=math.tanh(0.5), q0=5.0, q1=5.0)  # q > p: not one LDP population
    with pytest.raises(PrivacyParameterError, match="eps0-LDP populations"):
        shuffle_epsilon(10**5, 1e-6, params=others_weaker, method="fmt-closed-form")
    # the closed form reads (p, beta, q): a decomposition is relaxed to the generic eps0-LDP parameters
    closed = shuffle_epsilon(10**5, 1e-6, params=laplace_like, method="variation-ratio-closed-form")
    assert closed == cf.variation_ratio_closed_form(VariationRatio.from_ldp(1.0), 10**5, 1e-6)
    assert closed >= shuffle_epsilon(10**5, 1e-6, params=laplace_like, method="variation-ratio")
    # the own-beta variation-ratio parameters are refused by the closed form too, not priced
    own = VariationRatio(p=math.e, beta=1 - math.exp(-0.5), q0=math.e, q1=math.e)
    with pytest.raises(UnprovenBoundError, match="BlanketDecomposition"):
        shuffle_epsilon(10**5, 1e-6, params=own, method="variation-ratio-closed-form")
