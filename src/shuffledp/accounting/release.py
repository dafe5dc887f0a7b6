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
from typing import Iterator, Union

import numpy as np

from shuffledp.accounting.blanket import BlanketDivergence, blanket_epsilon
from shuffledp.accounting.dominating_pair import DominatingPair, PairDivergence, pair_cells, pair_epsilon
from shuffledp.params import BlanketDecomposition, PoissonReport, VariationRatio, check_release_params

ReleaseParams = Union[VariationRatio, BlanketDecomposition, PoissonReport]


def release_divergence(params: ReleaseParams, n: int, gamma: float, tail: float) -> PairDivergence | BlanketDivergence:
    """Certified divergence bounds (``.upper(eps)``, ``.lower(eps)``) of one release's proven pair."""
    params = check_release_params(params)
    if isinstance(params, (BlanketDecomposition, PoissonReport)):
        return BlanketDivergence(params, n, tail, gamma)
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
    div = BlanketDivergence(params, n, tail / 2.0, gamma)
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


__all__ = ["ReleaseParams", "release_cap", "release_cells", "release_divergence", "release_epsilon"]
