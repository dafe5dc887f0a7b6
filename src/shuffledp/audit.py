"""Privacy audits of local randomizers.

* :func:`exact_epsilon` — for discrete randomizers, the exact worst-case
  log-likelihood ratio read off their transition matrix.
* :func:`audit_continuous` — for any randomizer that can be sampled, a
  statistically valid Monte-Carlo *lower bound* on the epsilon it really
  provides: outputs of two inputs are histogrammed over a fixed partition of
  the output space (chosen from an independent pilot sample), each cell's
  probability gets a Clopper–Pearson interval (Bonferroni-corrected over all
  cells and both directions), and the largest ratio of a lower confidence
  limit to an upper one is the bound.  With probability >= 1 - alpha the true
  epsilon is at least the reported value, so a correct mechanism must report a
  value below its claim, and a broken one is caught when the sample is large
  enough to see its excess.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from shuffledp.randomizers.base import DiscreteRandomizer, LocalRandomizer
from shuffledp.randomizers.domains import Box, L2Ball


def exact_epsilon(P: np.ndarray) -> float:
    """Exact epsilon of a randomizer with transition matrix ``P[input, output]``.

    Returns ``max_{j, i, i'} log(P[i, j] / P[i', j])``; ``math.inf`` when some
    output is possible for one input and impossible for another.
    """
    P = np.asarray(P, dtype=np.float64)
    if P.ndim != 2 or P.shape[0] < 2:
        raise ValueError(f"transition matrix must be 2-d with >= 2 rows, got shape {P.shape}")
    col_max = P.max(axis=0)
    col_min = P.min(axis=0)
    used = col_max > 0
    if np.any(col_min[used] == 0):
        return math.inf
    return float(np.max(np.log(col_max[used]) - np.log(col_min[used])))


def exact_audit(randomizer: DiscreteRandomizer) -> float:
    """Exact epsilon of a discrete randomizer from its own transition matrix."""
    return exact_epsilon(randomizer.transition_matrix())


@dataclass(frozen=True)
class AuditResult:
    """Outcome of a Monte-Carlo audit."""

    epsilon_lower: float  # valid lower bound on the true epsilon, w.p. >= 1 - alpha
    epsilon_point: float  # plug-in estimate over well-populated cells (for reading only)
    claimed: float
    n_samples: int
    cells: int
    alpha: float

    @property
    def passed(self) -> bool:
        """True when the data do not refute the claimed epsilon."""
        return self.epsilon_lower <= self.claimed


def extreme_pair(domain: Any) -> tuple[np.ndarray, np.ndarray]:
    """Two inputs at maximal distance: opposite corners of a box, antipodes of a ball."""
    if isinstance(domain, Box):
        return np.full(domain.dim, domain.low), np.full(domain.dim, domain.high)
    if isinstance(domain, L2Ball):
        e = np.zeros(domain.dim)
        e[0] = domain.radius
        return -e, e
    raise TypeError(f"no default extreme pair for the domain {domain.describe()}; pass x0 and x1")


def _cell_index(Y: np.ndarray, edges: list[np.ndarray]) -> np.ndarray:
    idx = [np.searchsorted(e, Y[:, k], side="right") for k, e in enumerate(edges)]
    shape = tuple(len(e) + 1 for e in edges)
    return np.ravel_multi_index(idx, shape), int(np.prod(shape))


def _as_matrix(Y: np.ndarray, coords: int) -> np.ndarray:
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y[:, None]
    return Y[:, :coords]


def audit_continuous(
    randomizer: LocalRandomizer,
    x0: Any = None,
    x1: Any = None,
    *,
    n_samples: int = 400_000,
    bins_per_dim: int = 16,
    coords: int = 2,
    alpha: float = 1e-3,
    rng: np.random.Generator | None = None,
) -> AuditResult:
    """Monte-Carlo lower bound on the epsilon of ``randomizer`` between ``x0`` and ``x1``.

    Outputs are projected on their first ``coords`` coordinates (post-processing,
    so the bound stays valid) and binned on a grid whose edges are quantiles
    of an independent pilot sample.
    """
    rng = np.random.default_rng(0) if rng is None else rng
    if x0 is None or x1 is None:
        x0, x1 = extreme_pair(randomizer.domain)
    x0, x1 = np.atleast_1d(np.asarray(x0, dtype=np.float64)), np.atleast_1d(np.asarray(x1, dtype=np.float64))

    def sample(x: np.ndarray, n: int) -> np.ndarray:
        return _as_matrix(randomizer.randomize(np.tile(x, (n, 1)), rng), coords)

    pilot = np.vstack([sample(x0, 20_000), sample(x1, 20_000)])
    qs = np.linspace(0, 1, bins_per_dim + 1)[1:-1]
    edges = [np.unique(np.quantile(pilot[:, k], qs)) for k in range(pilot.shape[1])]
    cells0, n_cells = _cell_index(sample(x0, n_samples), edges)
    cells1, _ = _cell_index(sample(x1, n_samples), edges)
    c0 = np.bincount(cells0, minlength=n_cells)
    c1 = np.bincount(cells1, minlength=n_cells)
    a = alpha / (2 * n_cells)  # Bonferroni over cells and both directions; one-sided limits
    n = n_samples

    def lower(k: np.ndarray) -> np.ndarray:
        return np.where(k > 0, stats.beta.ppf(a, np.maximum(k, 1), n - k + 1), 0.0)

    def upper(k: np.ndarray) -> np.ndarray:
        return np.where(k < n, stats.beta.ppf(1 - a, k + 1, np.maximum(n - k, 1)), 1.0)

    lo0, hi0, lo1, hi1 = lower(c0), upper(c0), lower(c1), upper(c1)
    with np.errstate(divide="ignore"):
        ratios = np.concatenate([np.log(lo0) - np.log(hi1), np.log(lo1) - np.log(hi0)])
    eps_lower = float(max(0.0, np.nanmax(ratios)))
    well = (c0 >= 100) & (c1 >= 100)
    point = float(np.max(np.abs(np.log(c0[well]) - np.log(c1[well])))) if well.any() else math.nan
    return AuditResult(eps_lower, point, randomizer.epsilon, n_samples, n_cells, alpha)
