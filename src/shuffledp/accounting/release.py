"""The dominating pair a single shuffled release is priced with, chosen by what its parameters prove.

* `VariationRatio` — the two-count pair of the segmented paper's Theorem 1, accepted only
  where it is proven: the generic eps0-LDP parameters (beta = tanh(eps0/2), q >= p: the
  stronger-clone pair, which dominates every eps0-LDP randomizer, docs/which-bound.md) and
  p = infinity (the Poisson-type randomizers of Lemma 3, whose uninformative mass sends
  no message).  A randomizer's own beta below tanh(eps0/2) with finite p is refused
  (`UnprovenBoundError`): the pair treats the victim's common report as invisible, which
  fails for k-RR.
* `BlanketDecomposition` and `PoissonReport` — the three-class pairs of `shuffledp.accounting.blanket`.

Every accountant goes through `release_divergence`, `release_epsilon`, `release_cap` and
`release_cells`, so no path prices a release with an unproven pair.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from functools import lru_cache

import numpy as np

from shuffledp._util.validation import check_positive_int, check_probability
from shuffledp.accounting._checks import resolve_params
from shuffledp.accounting.blanket import BlanketDivergence, blanket_epsilon
from shuffledp.accounting.dominating_pair import DominatingPair, PairDivergence, pair_cells, pair_epsilon
from shuffledp.accounting.pld import ENUM_TAIL, MAX_BINS, PrivacyLossDistribution, pld_from_cells
from shuffledp.errors import PrivacyParameterError
from shuffledp.params import BlanketDecomposition, PoissonReport, VariationRatio, check_release_params

ReleaseParams = VariationRatio | BlanketDecomposition | PoissonReport


def bound_name(params: ReleaseParams) -> str:
    """Which proven pair prices a release with these parameters (for ledgers and reports).

    Examples
    --------
    >>> bound_name(VariationRatio.from_ldp(1.0))
    'stronger-clone pair (generic eps0-LDP)'
    >>> bound_name(BlanketDecomposition(eps0=1.0, beta=0.2, common_ratio=1.0))
    'three-class decomposition (own beta 0.2, common ratio 1)'
    """
    params = check_release_params(params)
    if isinstance(params, PoissonReport):
        return "three-class pair of the Poisson report"
    if isinstance(params, VariationRatio):
        return "variation-ratio pair (p = inf)" if math.isinf(params.p) else "stronger-clone pair (generic eps0-LDP)"
    if params.common_mass <= 0.0:
        return "stronger-clone pair (generic eps0-LDP)"
    return f"three-class decomposition (own beta {params.beta:.4g}, common ratio {params.common_ratio:.4g})"


@lru_cache(maxsize=256)
def _blanket_divergence(
    params: BlanketDecomposition | PoissonReport, n: int, tail: float, gamma: float
) -> BlanketDivergence:
    """`BlanketDivergence`, memoised: its blocks cost far more than an evaluation, and searches
    (an epsilon at a delta, group privacy's ladder, the segmented optimizer) ask for the same one again."""
    return BlanketDivergence(params, n, tail, gamma)


def release_divergence(params: ReleaseParams, n: int, gamma: float, tail: float) -> PairDivergence | BlanketDivergence:
    """Certified divergence bounds (``.upper(eps)``, ``.lower(eps)``) of one release's proven pair."""
    params = check_release_params(params)
    if isinstance(params, (BlanketDecomposition, PoissonReport)):
        return _blanket_divergence(params, n, tail, gamma)
    return PairDivergence(DominatingPair.from_params(params, n, gamma), tail)


def release_epsilon(params: ReleaseParams, n: int, delta: float, gamma: float, rtol: float) -> float:
    """Upper bound on the release's epsilon at ``delta`` (its proven pair, snapped up to the rtol grid)."""
    params = check_release_params(params)
    if isinstance(params, (BlanketDecomposition, PoissonReport)):
        return blanket_epsilon(params, n, delta, gamma=gamma, rtol=rtol)
    return pair_epsilon(DominatingPair.from_params(params, n, gamma), delta, rtol, upper=True)


def release_cap(params: ReleaseParams, n: int, gamma: float) -> float:
    """An epsilon the release certifies with delta = 0 (its local epsilon, rounded up)."""
    params = check_release_params(params)
    if isinstance(params, BlanketDecomposition):
        return math.nextafter(params.eps0, math.inf)
    if isinstance(params, PoissonReport):
        return math.inf
    return DominatingPair.from_params(params, n, gamma).eps_cap


def release_cells(params: ReleaseParams, n: int, gamma: float, tail: float) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(P-mass, Q-mass) cells of the release's proven pair for its privacy-loss distribution.

    For a decomposition, the pair is a mixture over blocks of common counts whose block is
    revealed (the same law under both inputs), each block replaced by its dominating
    representative (`shuffledp.accounting.blanket`): the cells of each representative,
    scaled by the block's mass.  Returns (StopIteration.value) the neglected P-mass.
    """
    params = check_release_params(params)
    if isinstance(params, VariationRatio):
        return (yield from pair_cells(DominatingPair.from_params(params, n, gamma), tail))
    div = _blanket_divergence(params, n, tail / 2.0, gamma)
    neglected = div.tail
    for weight, block in div.upper_blocks:
        cells = pair_cells(block.pair, tail / 2.0)
        while True:
            try:
                p_mass, q_mass = next(cells)
            except StopIteration as stop:
                neglected += weight * stop.value
                break
            yield weight * p_mass, weight * q_mass
    return neglected


def shuffle_pld(
    n: int,
    eps0: float | None = None,
    params: ReleaseParams | None = None,
    *,
    step: float | None = None,
    tail_mass: float = 1e-15,
    max_bins: int = MAX_BINS,
    gamma: float = 1.0,
) -> PrivacyLossDistribution:
    """Pessimistic PLD of one shuffled round (the proven pair of its parameters: `release_cells`).

    ``step`` is the loss grid; ``None`` picks 1/1000 of the standard deviation of the
    loss (clipped to [1e-8, 1e-3]), so that the rounding bias (at most one step per
    round) stays a small fraction of any composed epsilon, but never so fine that the
    loss range needs more than ``max_bins`` bins.  Every loss is rounded up to the grid;
    losses above the point where at most ``tail_mass`` of P lies are moved to +infinity
    and the lowest losses holding at most ``tail_mass`` are raised (both only increase
    delta).  The pair is symmetric under swapping its coordinates, so D(P||Q) = D(Q||P)
    and this one PLD covers both directions.

    Parameters
    ----------
    n : int, >= 1
    eps0 : float, in [1e-6, 700], optional
    params : VariationRatio or BlanketDecomposition or PoissonReport, optional
        Exactly one of ``eps0`` / ``params``.
    step : float, in [1e-8, 0.1], or None
    tail_mass : float, in (0, 1)
    max_bins : int, >= 1
    gamma : float, in [0, 1]
        Blanket-slot probability (segmented Theorem 2).

    Returns
    -------
    PrivacyLossDistribution

    Raises
    ------
    PrivacyParameterError
        For an argument out of range, or an explicit ``step`` needing more than ``max_bins`` bins.

    References
    ----------
    segmented-multimessage-shuffle.txt §3.3 Theorem 1; Meiser and Mohammadi, CCS 2018
    (pessimistic discretisation; not in /work/shared/papers).

    Examples
    --------
    >>> pld = shuffle_pld(1000, eps0=1.0)
    >>> round(float(pld.epsilon(1e-6)), 3), pld.inf_mass < 1e-14
    (0.149, True)
    """
    n = check_positive_int(n, "n")
    max_bins = check_positive_int(max_bins, "max_bins")
    params = resolve_params(eps0, params)
    if step is not None:
        step = float(step)
        if not (math.isfinite(step) and 1e-8 <= step <= 0.1):
            raise PrivacyParameterError(f"step must lie in [1e-8, 0.1], got {step!r}")
    tail_mass = check_probability(tail_mass, "tail_mass")
    cells = release_cells(params, n, gamma, ENUM_TAIL)
    return pld_from_cells(cells, step=step, tail_mass=tail_mass, max_bins=max_bins)


__all__ = [
    "ReleaseParams",
    "bound_name",
    "release_cap",
    "release_cells",
    "release_divergence",
    "release_epsilon",
    "shuffle_pld",
]
