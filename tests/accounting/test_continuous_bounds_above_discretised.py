"""Every continuous randomizer's upper bound stays above a discretised lower bound.

A continuous randomizer has no transition matrix to enumerate, but mapping every report to
one of three cells is a post-processing of the shuffled output, so the exact divergence of
the cell histograms (`shuffledp.shuffle_audit.cells_lower_delta`, with the victim on the two
farthest inputs and the others on one input) is a rigorous lower bound on the mechanism's
delta.  The upper bound each randomizer offers (`blanket_divergence` of its
`amplification_parameters`) must lie above it; the lower bound is not vacuous (it exceeds
delta at a deliberately too-small epsilon, and it catches a decomposition with half the
true beta); and every closed-form cell law is checked against the randomizer's own sampler
and, where it goes through special functions, against mpmath.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from shuffledp.accounting.blanket import blanket_divergence, blanket_epsilon
from shuffledp.errors import ArgumentTypeError
from shuffledp.params import BlanketDecomposition
from shuffledp.randomizers import (
    DiscreteRandomizer,
    Laplace,
    MinkowskiResponse,
    PlanarLaplace,
    PrivHS,
    PrivUnit,
    PrivUnitG,
    SquareWave,
    Staircase,
    available_randomizers,
    make_randomizer,
)
from shuffledp.shuffle_audit import (
    _iid_delta_by_ratio,
    cap_cells,
    discretised_lower_delta,
    iid_shuffle_delta,
    lower_bound_cells,
    planar_laplace_cells,
)

#: One factory per family (and per shape the cell map treats differently), eps0 -> randomizer.
FAMILIES = {
    "planar_laplace": lambda e: PlanarLaplace(epsilon=e),
    "laplace_d2": lambda e: Laplace(epsilon=e, dim=2),
    "laplace_d3": lambda e: Laplace(epsilon=e, dim=3),
    "staircase_d1": lambda e: Staircase(epsilon=e, dim=1),
    "staircase_d2_l1": lambda e: Staircase(epsilon=e, dim=2, gamma="l1"),
    "square_wave_d1": lambda e: SquareWave(epsilon=e, dim=1),
    "square_wave_d2": lambda e: SquareWave(epsilon=e, dim=2),
    "privunit_box": lambda e: PrivUnit(epsilon=e, dim=2),
    "privunit_sphere_bhowmick": lambda e: PrivUnit(epsilon=e, dim=3, domain="sphere", calibration="bhowmick"),
    "privunit_g_box": lambda e: PrivUnitG(epsilon=e, dim=2),
    "privunit_g_sphere": lambda e: PrivUnitG(epsilon=e, dim=3, domain="sphere"),
    "privhs_d2": lambda e: PrivHS(epsilon=e, dim=2),
    "privhs_d3": lambda e: PrivHS(epsilon=e, dim=3),
    "minkowski_l2": lambda e: MinkowskiResponse(epsilon=e, dim=2, norm="l2"),
}


def test_every_continuous_registry_entry_has_a_cell_map():
    covered = []
    for name in available_randomizers():
        R = make_randomizer(name, 2.0)
        if isinstance(R, DiscreteRandomizer):
            continue
        assert lower_bound_cells(R), name
        covered.append(name)
    assert set(covered) == {
        "laplace",
        "minkowski",
        "planar_laplace",
        "privhs",
        "privunit",
        "privunit_g",
        "square_wave",
        "staircase",
    }
    with pytest.raises(ArgumentTypeError, match="exact_shuffle_delta"):
        lower_bound_cells(make_randomizer("krr", 2.0, dim=3))


@pytest.mark.parametrize("eps0", [0.5, 2.0, 5.0])
def test_every_continuous_randomizer_is_priced_above_its_discretised_divergence(eps0):
    for family, make in FAMILIES.items():
        R = make(eps0)
        params = R.amplification_parameters()
        for n in (2, 10, 300):
            for frac in (0.05, 0.3, 0.7):
                eps = frac * eps0
                upper, lower = blanket_divergence(params, n, eps), discretised_lower_delta(R, n, eps)
                assert upper >= lower, (
                    f"SOUNDNESS: {family} eps0={eps0} n={n} eps={eps}: upper {upper!r} < lower {lower!r}"
                )


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_discretised_lower_bound_is_not_vacuous(family):
    """At 0.3x the certified epsilon (delta = 1e-3) the true delta exceeds 1e-3; half the beta is caught.

    n = 10 for every eps0, and n = 100 where the certified epsilon is well below eps0 (eps0 <= 2:
    0.06-0.1 at eps0 = 0.5, 0.6-0.8 at eps0 = 2), so a bound claiming too much amplification is caught.
    """
    for eps0 in (0.5, 2.0, 5.0):
        R = FAMILIES[family](eps0)
        params = R.amplification_parameters()
        assert discretised_lower_delta(R, 10, 0.05 * eps0) > 0.0
        for n in (10, 100) if eps0 <= 2.0 else (10,):
            certified = blanket_epsilon(params, n, 1e-3)
            assert discretised_lower_delta(R, n, 0.3 * certified) > 1e-3, (eps0, n, certified)
        # an optimistic decomposition (half the true total variation) falls below the truth somewhere
        understated = BlanketDecomposition(eps0=params.eps0, beta=0.5 * params.beta, common_ratio=params.common_ratio)
        gaps = [
            discretised_lower_delta(R, n, f * eps0) - blanket_divergence(understated, n, f * eps0)
            for n in (2, 10)
            for f in (0.05, 0.3, 0.7)
        ]
        assert max(gaps) > 1e-3, (eps0, gaps)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_cell_laws_match_the_randomizers_own_sampler(family):
    """Monte Carlo with the randomizer's `randomize` and the cell map, on every input the bound uses."""
    rng = np.random.default_rng(20240521)
    trials = 40_000
    for eps0 in (0.5, 5.0):
        R = FAMILIES[family](eps0)
        for cells in lower_bound_cells(R):
            for x, row in [(cells.x0, cells.row0), (cells.x1, cells.row1), *zip(cells.others, cells.others_rows)]:
                Y = R.randomize(np.tile(x, (trials, 1)), rng)
                freq = np.bincount(cells.cell(Y), minlength=row.size) / trials
                tol = 5.0 * np.sqrt(np.maximum(row * (1.0 - row), 1e-4) / trials)
                assert np.all(np.abs(freq - row) <= tol), (eps0, x, freq, row)


def test_closed_forms_through_special_functions_match_mpmath():
    """Planar Laplace (iti0k0, k0), PrivUnit (betainc) and PrivUnitG (ndtr) to 1e-13, well inside CELL_ERROR."""
    with mpmath.workdps(30):  # local precision: a global setting would leak into other modules' tests
        for eps0 in (0.5, 5.0):
            R = PlanarLaplace(epsilon=eps0)
            ep = mpmath.mpf(R.geo_epsilon)

            def inside(s, ep=ep):  # P(|N_1| <= s), N_1 with density (e'^2/pi) |u| K_1(e'|u|)
                return 2 * mpmath.quad(lambda u: ep**2 / mpmath.pi * u * mpmath.besselk(1, ep * u), [0, s])

            c, h = math.sqrt(0.5), mpmath.sqrt(2)
            cells = planar_laplace_cells(R, cut=c)
            low0, high0 = (1 + inside(h - c)) / 2, (1 - inside(h + c)) / 2
            assert abs(cells.row0[0] - float(low0)) < 1e-13 and abs(cells.row0[1] - float(high0)) < 1e-13
            assert abs(cells.others_rows[1][0] - float((1 - inside(c)) / 2)) < 1e-13

            for U in (PrivUnit(epsilon=eps0, dim=2), PrivUnit(epsilon=eps0, dim=4, domain="sphere")):
                a, P = mpmath.mpf(U.sphere_dim - 1) / 2, U.params
                q = mpmath.betainc(a, a, 0, (1 - mpmath.mpf(P.gamma)) / 2, regularized=True)
                other = (1 - mpmath.mpf(P.p)) * q / (1 - q)
                assert abs(cap_cells(U).row0[1] - float(other)) < 1e-13
            G = PrivUnitG(epsilon=eps0, dim=2)
            q = mpmath.ncdf(-mpmath.mpf(G.params.gamma))
            assert abs(cap_cells(G).others_rows[1][0] - float(q)) < 1e-13
            assert abs(cap_cells(G).row0[1] - float((1 - mpmath.mpf(G.params.p)) * q / (1 - q))) < 1e-13


def test_ratio_form_of_the_iid_divergence_matches_the_merge():
    rng = np.random.default_rng(7)
    for n in (1, 2, 10, 300):
        for k in (2, 3):
            r0, r1, q = rng.dirichlet(np.ones(k), 3)
            for eps in (0.0, 0.3, 2.0):
                assert _iid_delta_by_ratio(r0, r1, q, n, eps) == pytest.approx(
                    iid_shuffle_delta(r0, r1, q, n, eps), rel=1e-12, abs=1e-15
                )
