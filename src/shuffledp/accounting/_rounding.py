"""Directed-rounding rules shared by every numerical bound (DESIGN.md: "an upper bound is an upper bound").

An upper bound on epsilon is rounded toward a larger epsilon and every quantity it
rests on toward the pessimistic side: a divergence computed in float64 is charged
`rel_slack` times the sum of the magnitudes of its terms, neglected probability
mass is added to it, and epsilons are snapped *up* to a fixed grid.  A lower bound
does everything the other way.  The constants here are the only safety margins of the
engine (`shuffledp.accounting.dominating_pair`); they are tested against exact
integer and high-precision arithmetic in ``tests/accounting``.

It is also the one place the accounting reads its ranges and tolerances from: the count
limit `N_MAX`, the local-epsilon range [`EPS0_MIN`, `EPS0_MAX`] (defined in the bottom
layer, `shuffledp.params`, so that randomizers check it without importing the accounting),
the default relative precision `DEFAULT_RTOL` of a returned epsilon and that of an
inverse, `ROUND_TRIP_RTOL`.
"""

from __future__ import annotations

import math

from shuffledp._util.validation import COUNT_MAX, EPSILON_MIN, Interval
from shuffledp.params import EPS0_MAX, EPS0_MIN, EPS0_RANGE

#: Smallest delta the numerical bounds accept: below it the neglected masses and
#: float64 underflow (smallest normal 2.2e-308) can no longer be charged reliably.
DELTA_MIN = 1e-300
#: The deltas the numerical bounds accept, [`DELTA_MIN`, 1) (as written in errors and --help).
DELTA_RANGE = Interval(DELTA_MIN, 1.0, high_open=True)
#: Largest epsilon ever searched: e^eps stays finite in float64 (e^709.78 overflows).
EPS_CEILING = 700.0
#: The epsilons at which a delta is evaluated, [0, `EPS_CEILING`].
EPS_RANGE = Interval(0.0, EPS_CEILING)
#: Low end of every local-epsilon search of an inverse (its ``min_epsilon`` default).
SEARCH_MIN_EPSILON = 1e-3
#: Top of the local-epsilon search of one round (`shuffledp.accounting.local_epsilon`'s ``max_epsilon`` default):
#: above it the shuffled epsilon is close to eps0 itself for any practical n.
SEARCH_MAX_EPSILON = 50.0
#: Top of the per-round local-epsilon search over composed rounds (`composed_local_epsilon`'s ``max_epsilon``).
COMPOSED_SEARCH_MAX_EPSILON = 20.0
#: Largest noise epsilon of a metric protocol (Geo-Shuffle's eps_geo, SGDL-Shuffle's eps): the noise parameter
#: e^-eps is then 3.7e-44, so a report is noiseless with probability 1 - 1e-43 (a guarantee of e^100 per unit
#: distance is none), and e^-2 eps stays a normal float64.  Beyond about 745, e^-eps is 0 in float64.
NOISE_EPSILON_MAX = 100.0
#: The noise epsilons of the metric protocols, [2^-52, `NOISE_EPSILON_MAX`].
NOISE_EPSILON_RANGE = Interval(EPSILON_MIN, NOISE_EPSILON_MAX)
#: Smallest SGDL-Shuffle epsilon its shuffled accounting takes with n >= 2 users: SGDL(1/n, e^-eps)'s pmf is the
#: paper's series, whose terms number about 45 / (2 eps) (20 million at eps = 1.47e-6, the limit of
#: `shuffledp.accounting.metric.sgdl`; checked by tests/cli/test_cli_metric.py).
SGDL_EPSILON_MIN = 1.5e-6
#: SGDL-Shuffle's epsilons at the command line, [`SGDL_EPSILON_MIN`, `NOISE_EPSILON_MAX`].
SGDL_EPSILON_RANGE = Interval(SGDL_EPSILON_MIN, NOISE_EPSILON_MAX)
#: Smallest RR parameter p of the RR-Shuffle functions: p/2 and ln p stay normal floats far from underflow, and the
#: local epsilon ln((2 - p)/p) reaches about 691.5; a smaller p adds nothing usable.
RR_MIN_P = 1e-300
#: RR-Shuffle's randomization probabilities p, [`RR_MIN_P`, 1) (as written in errors and --help).
RR_P_RANGE = Interval(RR_MIN_P, 1.0, high_open=True)
#: Largest distance over which a metric maximum is taken (one pmf ratio per unit of distance).
MAX_DISTANCE = 10_000
#: Relative error allowed on a computed log-odds log(alpha / (1 - alpha)) (math.log / log1p
#: of an argument good to a few ulps): rounded outward before A = alpha (1 - e^(eps - L)).
LOG_ODDS_SLACK = 1e-15
#: Largest number of reports: counts up to 2^53 are exact in float64 (the bottom layer's count limit).
N_MAX = COUNT_MAX
#: The counts of reports accepted, [1, `N_MAX`].
N_RANGE = Interval(1, N_MAX, integer=True)
#: Default relative precision of a returned epsilon (the grid exp(k log(1 + rtol)) it is snapped to).
DEFAULT_RTOL = 1e-7
#: Relative accuracy of an inverse: the returned eps0 amplifies to within this fraction below the
#: target (for families whose amplified epsilon is continuous in eps0); as fine as the bounds resolve.
ROUND_TRIP_RTOL = DEFAULT_RTOL
#: Unit round-off of float64.
UNIT_ROUNDOFF = 2.0**-53


def rel_slack(size: float) -> float:
    """Relative error allowed for each summed term when binomials have up to ``size`` trials.

    Boost's betainc and binomial pmf (behind scipy) measured against exact integer
    arithmetic and mpmath: <= 1e-13 relative up to 2e5 trials, <= 4.3e-13 at 1e6 and
    4e6 trials (see the tests).  The allowance, 2e-12 * max(1, sqrt(size / 1e4)), is
    >= 50x those errors and grows with the problem size; float64 pairwise sums add < 1e-14.

    Parameters
    ----------
    size : float, >= 0
        Number of binomial trials.

    Returns
    -------
    float

    Examples
    --------
    >>> rel_slack(100), rel_slack(1e6)
    (2e-12, 2e-11)
    """
    return 2e-12 * max(1.0, math.sqrt(size / 1e4))


def grid_step(rtol: float) -> float:
    """Spacing h = log(1 + rtol) of the epsilon grid exp(k h), k integer.

    Parameters
    ----------
    rtol : float, in [1e-12, 1e-2]

    Returns
    -------
    float

    Examples
    --------
    >>> import math
    >>> math.isclose(math.exp(grid_step(1e-3)), 1.001)
    True
    """
    return math.log1p(rtol)


def tail_budget(delta: float, rtol: float) -> float:
    """Probability mass that may be neglected (and charged) when enumerating for ``delta``.

    A fraction rtol/100 of delta, so the charge moves epsilon by far less than rtol;
    never below 1e-305, where float64 stops holding probabilities to full precision.

    Parameters
    ----------
    delta : float, in [1e-300, 1)
    rtol : float, in [1e-12, 1e-2]

    Returns
    -------
    float

    Examples
    --------
    >>> round(tail_budget(1e-6, 1e-7) / 1e-15, 9), tail_budget(1e-300, 1e-7)
    (1.0, 1e-305)
    """
    return max(delta * rtol * 1e-2, 1e-305)


def floor_positive(value: float, delta: float) -> float:
    """A strictly positive stand-in for a divergence that may be 0, for logarithms.

    max(value, 1e-12 delta, 5e-324).

    Parameters
    ----------
    value : float, >= 0
    delta : float, in (0, 1)

    Returns
    -------
    float, > 0

    Examples
    --------
    >>> floor_positive(0.5, 1e-6), floor_positive(0.0, 1.0)
    (0.5, 1e-12)
    """
    return max(value, delta * 1e-12, 5e-324)


__all__ = [
    "COMPOSED_SEARCH_MAX_EPSILON",
    "DEFAULT_RTOL",
    "DELTA_MIN",
    "DELTA_RANGE",
    "EPS0_MAX",
    "EPS0_MIN",
    "EPS0_RANGE",
    "EPS_CEILING",
    "EPS_RANGE",
    "LOG_ODDS_SLACK",
    "MAX_DISTANCE",
    "N_MAX",
    "NOISE_EPSILON_MAX",
    "NOISE_EPSILON_RANGE",
    "N_RANGE",
    "ROUND_TRIP_RTOL",
    "RR_MIN_P",
    "RR_P_RANGE",
    "SEARCH_MAX_EPSILON",
    "SEARCH_MIN_EPSILON",
    "SGDL_EPSILON_MIN",
    "SGDL_EPSILON_RANGE",
    "UNIT_ROUNDOFF",
    "floor_positive",
    "grid_step",
    "rel_slack",
    "tail_budget",
]
