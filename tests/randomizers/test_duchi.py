"""PrivHS: Duchi, Jordan & Wainwright's l-infinity mechanism (PIC full version, Appendix B)."""

import itertools
import math

import numpy as np
import pytest

from shuffledp.audit import exact_epsilon
from shuffledp.randomizers.duchi import PrivHS

POINTS = [(-1.0, -1.0), (1.0, 1.0), (1.0, -1.0), (0.0, 0.0), (0.3, -0.7)]


def _vertices(dim: int) -> np.ndarray:
    return np.array(list(itertools.product([-1.0, 1.0], repeat=dim)))


def _vertex_transition(eps: float, dim: int, ties: str = "negative") -> np.ndarray:
    """P[v, s] from the mechanism's definition, by brute force over {-1, 1}^d.

    ``ties="negative"``: our rule (positive half e^eps times as likely as the rest);
    ``ties="both"``: the papers' even-d reading, ties in both halves with pi = e^eps/(e^eps+1).
    """
    S = _vertices(dim)
    dot = S @ S.T  # dot[v, s] = <s, v>
    if ties == "negative":
        weight = np.where(dot > 0, math.exp(eps), 1.0)
        return weight / weight.sum(axis=1, keepdims=True)
    pi = math.exp(eps) / (math.exp(eps) + 1)
    upper, lower = dot >= 0, dot <= 0
    return pi * upper / upper.sum(axis=1, keepdims=True) + (1 - pi) * lower / lower.sum(axis=1, keepdims=True)


def _output_law(x: np.ndarray, eps: float) -> np.ndarray:
    """P(s | x) = sum_v P(v | x) P[v, s], with P(v | x) = prod_j (1 + v_j x_j)/2."""
    V = _vertices(len(x))
    rounding = np.prod((1 + V * x) / 2, axis=1)
    return rounding @ _vertex_transition(eps, len(x))


@pytest.mark.parametrize("x", [(0.3, -0.5), (0.3, -0.5, 0.9), (0.2, -0.4, 0.6, -1.0), (1.0,)])
@pytest.mark.parametrize("eps", [0.5, 3.0])
def test_reports_follow_the_mechanism(x, eps, chi2_pvalue):
    x = np.array(x)
    R = PrivHS(eps, dim=len(x))
    Z = R.randomize(np.tile(x, (100_000, 1)), np.random.default_rng(2))
    assert np.allclose(np.abs(Z), R.bound)
    index = ((Z > 0) * (1 << np.arange(len(x))[::-1])).sum(axis=1)  # same order as _vertices
    assert chi2_pvalue(index, _output_law(x, eps)) > 1e-3


@pytest.mark.parametrize("dim", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_exactly_eps_ldp_and_unbiased_on_vertices(dim, eps):
    P = _vertex_transition(eps, dim)
    assert exact_epsilon(P) == pytest.approx(eps, rel=1e-9)
    R = PrivHS(eps, dim)
    V = _vertices(dim)
    K = (V[:, None, :] == V[None, :, :]).sum(axis=2)
    np.testing.assert_allclose(R.output_probability(K), P, rtol=1e-12)
    # E[z | v] = B sum_s s P(s | v) = v; the rounding step then gives E[z | x] = x everywhere.
    np.testing.assert_allclose(R.bound * P @ V, V, atol=1e-12)


@pytest.mark.parametrize("dim", [1, 3, 5, 7])
def test_odd_dimension_is_duchi_et_al_unchanged(dim):
    eps = 1.3
    c_d = 2 ** (dim - 1) / math.comb(dim - 1, (dim - 1) // 2)
    assert PrivHS(eps, dim).bound == pytest.approx(c_d * (math.exp(eps) + 1) / (math.exp(eps) - 1))
    np.testing.assert_allclose(_vertex_transition(eps, dim), _vertex_transition(eps, dim, ties="both"))


@pytest.mark.parametrize("dim", [2, 4, 6])
def test_papers_even_dimension_reading_is_not_eps_ldp(dim):
    """Why we deviate: ties in both halves give ratio 1 + e^eps (see duchi.py)."""
    eps = 1.0
    P = _vertex_transition(eps, dim, ties="both")
    assert exact_epsilon(P) == pytest.approx(math.log1p(math.exp(eps)))
    c_d = (2 ** (dim - 1) + math.comb(dim, dim // 2) / 2) / math.comb(dim - 1, dim // 2)
    B = c_d * (math.exp(eps) + 1) / (math.exp(eps) - 1)
    V = _vertices(dim)
    np.testing.assert_allclose(B * P @ V, V, atol=1e-12)  # it is the reading the papers' C_d unbiases


@pytest.mark.parametrize("eps", [0.5, 4.0])
@pytest.mark.parametrize("x", POINTS)
def test_estimate_is_unbiased(eps, x, assert_unbiased):
    assert_unbiased(PrivHS(eps), x, seed=3)


@pytest.mark.parametrize("x", [(1.0, -1.0, 1.0, 1.0), (0.0, 0.5, -0.5, 0.0)])
def test_estimate_is_unbiased_in_four_dimensions(x, assert_unbiased):
    assert_unbiased(PrivHS(1.0, dim=4), x, seed=4)


@pytest.mark.parametrize("dim", [1, 2, 3, 4, 6])
@pytest.mark.parametrize("eps", [0.3, 2.0])
def test_beta_is_the_exact_max_total_variation(dim, eps, max_tv):
    params = PrivHS(eps, dim).amplification_parameters()
    brute = max_tv(_vertex_transition(eps, dim))
    assert brute * (1 - 1e-12) <= params.beta <= brute * (1 + 1e-8)  # (odd d: capped at float tanh(eps/2))
    # eps0 = eps; of the common part only the eps-LDP guarantee is claimed (ratio e^eps)
    assert math.exp(params.eps0) == pytest.approx(math.exp(eps)) and params.common_ratio == pytest.approx(math.exp(eps))
    rng = np.random.default_rng(dim)
    for _ in range(20):  # interior inputs never exceed the vertex maximum
        x0, x1 = rng.uniform(-1, 1, (2, dim))
        assert 0.5 * np.abs(_output_law(x0, eps) - _output_law(x1, eps)).sum() <= params.beta
    if dim % 2 == 0:
        assert params.beta < math.tanh(eps / 2)


def test_input_validation(check_box_input_contract):
    check_box_input_contract(PrivHS)
    check_box_input_contract(lambda eps: PrivHS(eps, dim=3), dim=3)
