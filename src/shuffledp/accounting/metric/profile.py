"""Per-distance guarantees of the metric protocols: for each distance d, the smallest certified epsilon(d) with which
every pair of datasets at Manhattan distance <= d meets Definition 4 with one delta, and the distance up to which a
target epsilon (e.g. a theorem's value) holds.

Definition 4 asks P[M(X) in S] <= e^(eps d(X, X')) P[M(X') in S] + delta for every pair; the uniform epsilon is the
largest per-pair need.  For location privacy the pairs that matter are nearby ones: a smaller epsilon holds for every
pair up to a radius, and eps_geo (or the certified uniform epsilon) for all.  `metric_profile` states that curve.

How each protocol's curve is certified (the same analyses as the uniform epsilons):

* RR-Shuffle: the block-cover search of `_rr_pairs` restricted to sum distances D <= d (the pair at D = d among all
  n k bits is exact and attained; every smaller D is covered); distance d >= sum distance D, so the constraint only
  relaxes.
* Geo-Shuffle and SGDL-Shuffle: where the pairs fit, the exhaustive enumeration on the clamped laws (exact);
  otherwise Proposition 3 with the conditioned noise T at each sum distance D (delta_1 + Pr[H] D_{e^(eps D)}(T + D
  || T); T's law by direct convolution or tilted FFT powers, as for the single certified epsilon), whose running
  maximum is valid up to d, capped by the single certified epsilon (or the per-report bound eps_geo, resp. eps_u,
  where that is all the certificate gives), which holds at every distance and beyond the curve.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from shuffledp._util.validation import check_epsilon, check_positive_int
from shuffledp.accounting._checks import check_delta, check_n
from shuffledp.accounting.metric._common import (
    MAX_CONVOLUTION_WORK,
    MAX_SHIFT_CELLS,
    MAX_TILTED_SUPPORT,
    check_noise_epsilon,
    convolution_work,
)
from shuffledp.accounting.metric._common import certified_shift_profile as _certified_shift_profile
from shuffledp.accounting.metric._exhaustive import cached_profile, exhaustive_applies, multiset_count
from shuffledp.accounting.metric.geo_shuffle import (
    _NOISE_LOG_CONCAVE,
    _geo_shuffle_noise_law,
    geo_shuffle_c,
    geo_shuffle_certificate,
    geo_shuffle_epsilon_paper,
)
from shuffledp.accounting.metric.rr_shuffle import (
    _COVER_MIN_Q0,
    check_rr_p,
    rr_certified_search,
    rr_local,
    rr_search_refusal,
    rr_shuffle_certificate,
    rr_shuffle_epsilon_paper,
)
from shuffledp.accounting.metric.sgdl_shuffle import (
    _sgdl_shuffle_noise_law,
    sgdl_shuffle_c,
    sgdl_shuffle_certificate,
    sgdl_shuffle_report_epsilon,
)
from shuffledp.errors import PrivacyParameterError, ValidityConditionError

#: The protocols `metric_profile` knows.
PROFILE_PROTOCOLS = ("rr-shuffle", "geo-shuffle", "sgdl-shuffle")
#: Largest n k `metric_profile` takes (its distances are 64-bit integers).
MAX_PROFILE_DISTANCE = 2**63 - 1
#: Distances evaluated by RR-Shuffle's profile (a geometric grid; each point is one certified search).
RR_PROFILE_POINTS = 10


@dataclass(frozen=True)
class DistanceProfile:
    """epsilon(d) for d in ``distances``: every pair of datasets at distance <= d is (epsilon(d), delta)-d_X-private.

    ``epsilons`` is non-decreasing; between two listed distances the value at the larger one holds (it is the
    maximum over every smaller distance); beyond the last one, ``uniform`` (valid for every pair).  ``exact`` says
    the values are the exact needs (exhaustive enumeration), not upper bounds.  ``theorem`` is the paper's value
    (Theorem 4.1 for Geo-Shuffle, 3.1 for RR-Shuffle, 5.1 for SGDL-Shuffle; None where undefined) and
    ``theorem_holds_up_to`` the largest listed distance at which the certified curve is at most it (0: nowhere)."""

    protocol: str
    delta: float
    distances: np.ndarray
    epsilons: np.ndarray
    uniform: float
    exact: bool
    source: str
    theorem: float | None = None
    theorem_name: str = ""
    theorem_holds_up_to: int = 0
    inputs: dict = field(default_factory=dict)

    def epsilon_at(self, distance: int) -> float:
        """The certified epsilon for every pair at distance <= ``distance``."""
        d = check_positive_int(distance, "distance")
        i = int(np.searchsorted(self.distances, d, side="left"))
        return float(self.epsilons[i]) if i < self.distances.size else self.uniform

    def reach(self, target_epsilon: float) -> int:
        """The largest listed distance up to which ``target_epsilon`` holds (0 if none; the last distance if all)."""
        target = check_epsilon(target_epsilon, "target_epsilon")
        ok = np.flatnonzero(self.epsilons <= target)
        if ok.size == 0:
            return 0
        # the curve is non-decreasing: the holding distances are a prefix
        return int(self.distances[ok[-1]])


def _grid(top: int, points: int) -> np.ndarray:
    grid = np.unique(np.round(np.geomspace(1, top, num=min(points, top))).astype(np.int64))
    return grid[grid >= 1]


def _silent(message: str) -> None:
    """The default ``progress`` of `metric_profile`: says nothing."""


def _rr_profile(
    delta: float, p: float, k: int, n: int, note: Callable[[str], None]
) -> tuple[np.ndarray, np.ndarray, float, str]:
    total = n * k
    local = rr_local(p)
    refusal = rr_search_refusal(p, total, exhaustive_ok=True)
    if refusal is not None:  # the same limits as the single epsilon: the local bound at every distance
        return np.array([total]), np.array([local]), local, f"not attempted: {refusal}: the local bound ln((2 - p)/p)"
    if rr_search_refusal(p, total, exhaustive_ok=False) is not None:  # p too small for the covers of one distance
        note(f"the uniform value: every pair of sums among {total} bits (direct convolutions)")
        single = rr_shuffle_certificate(delta, p, k, n)
        return (
            np.array([total]),
            np.array([single.epsilon]),
            single.epsilon,
            f"{single.reason}; the covers of a single distance need p >= {2 * _COVER_MIN_Q0:g}: the uniform value",
        )
    grid = _grid(total, RR_PROFILE_POINTS)
    # every pair at distance <= d is a pair: the uniform value (exact, one world) caps the covers of a distance d
    note(f"the uniform value: every pair of sums among {total} bits")
    uniform = min(rr_certified_search(delta, p, total).epsilon, local)
    eps = np.empty(grid.size)
    for i, d in enumerate(grid[:-1]):
        note(f"block covers of every pair of sums at distance <= {d} ({i + 1} of {grid.size - 1})")
        eps[i] = min(rr_certified_search(delta, p, total, int(d)).epsilon, uniform)
    eps[-1] = uniform
    return grid, np.maximum.accumulate(eps), uniform, "block covers of every pair of sums at distance <= d"


def _padded_profile(
    kind: str, epsilon: float, delta: float, n: int, k: int, c: int, fallback: float, note: Callable[[str], None]
):
    """(distances, epsilons, uniform, exact, source) of Geo-Shuffle (``kind="geo"``) or SGDL-Shuffle.

    Beyond the exhaustive enumeration: the single certified epsilon (``uniform``: `geo_shuffle_certificate` /
    `sgdl_shuffle_certificate`, or their per-report fallback; valid at every distance) and, where T's law is within
    `shift_law`'s limits (direct convolution up to `MAX_CONVOLUTION_WORK`, tilted FFT powers up to
    `MAX_TILTED_SUPPORT` outcomes: the law the certificate uses), Proposition 3 at every sum distance D = 1..top
    (`certified_shift_profile`), capped by ``uniform``: the curve never ends above the single value."""
    if exhaustive_applies(n, k, c, delta):
        note(f"every pair of the {multiset_count(n, k)} datasets (multisets) on the clamped laws")
        by_distance, _ = cached_profile(kind, epsilon, delta, n, k, c)
        eps = np.minimum(np.maximum.accumulate(by_distance), fallback)
        return np.arange(1, n * k + 1), eps, float(eps[-1]), True, "exact: every pair of datasets"
    certificate = geo_shuffle_certificate if kind == "geo" else sgdl_shuffle_certificate
    note(f"the single certified epsilon (every sum distance 1..{n * k})")
    single = certificate(epsilon, delta, n, k)
    uniform, beyond = single.epsilon, f"the single epsilon ({single.reason})"
    size = 2 * n * c + 1
    if convolution_work(c, n) > MAX_CONVOLUTION_WORK and size > MAX_TILTED_SUPPORT:
        return (
            np.array([n * k]),
            np.array([uniform]),
            uniform,
            False,
            f"conditioned noise of 2 n c + 1 = {size} outcomes beyond both of its methods' limits: {beyond}",
        )
    top = min(n * k, 2 * n * c)  # beyond 2 n c the conditioned noises' supports part: no shift bound
    if not (kind == "geo" and _NOISE_LOG_CONCAVE):  # T not known log-concave: every distance solved, cells capped
        top = int(min(top, max(1, MAX_SHIFT_CELLS // size)))
    note(f"the curve: Proposition 3 at sum distances up to {top} over T's {size} outcomes")
    if kind == "geo":
        law, inside = _geo_shuffle_noise_law(epsilon, c, n, top)
        budget = (delta - (1.0 - inside)) / inside
    else:
        law, delta_1 = _sgdl_shuffle_noise_law(epsilon, c, n, top)
        budget = delta - delta_1
    if not budget > 0.0:
        return np.array([n * k]), np.array([uniform]), uniform, False, f"no delta left after the truncation: {beyond}"
    distances, eps = _certified_shift_profile(law, budget, top)
    eps = np.minimum(eps, uniform)
    source = f"Proposition 3 with the conditioned noise at every sum distance <= {top}"
    if top < n * k:  # the listed distances end at n k: beyond the curve, the single value (valid for every pair)
        distances, eps = np.append(distances, n * k), np.append(eps, uniform)
        source += f"; beyond, {beyond}"
    return distances, eps, uniform, False, source


def metric_profile(
    protocol: str,
    delta: float,
    n: int,
    k: int,
    *,
    eps_geo: float | None = None,
    epsilon: float | None = None,
    p: float | None = None,
    progress: Callable[[str], None] | None = None,
) -> DistanceProfile:
    """The per-distance certified epsilon of RR-, Geo- or SGDL-Shuffle on values in {0..k}, with one delta.

    Parameters
    ----------
    protocol : {"rr-shuffle", "geo-shuffle", "sgdl-shuffle"}
        Which protocol.
    delta : float, in [1e-300, 1)
        The one delta of every distance.
    n : int, >= 1
        Number of users.
    k : int, >= 1
        Largest value.
    eps_geo : float, optional
        Geo-Shuffle's noise epsilon (required for it).
    epsilon : float, optional
        SGDL-Shuffle's parameter (required for it).
    p : float, optional
        RR-Shuffle's randomization probability (required for it).
    progress : callable, optional
        Called with what is being computed, phase by phase (a command line's spinner; n = 10^3-10^4 beyond the
        exhaustive enumeration take a few seconds).

    Returns
    -------
    DistanceProfile
        The curve, the uniform value beyond it, the paper's theorem value and the distance up to which it holds.

    Raises
    ------
    PrivacyParameterError
        For an unknown protocol, a missing or foreign parameter, or one out of range.

    References
    ----------
    metric-privacy-shuffler.txt §2.3 Definition 4 and Eq. 1; Theorems 3.1, 4.1, 5.1 (each valid for nearby datasets
    only: ``theorem_holds_up_to`` says how near).

    Examples
    --------
    Nearby datasets keep a smaller epsilon than the uniform one (exact here: every pair enumerated):

    >>> prof = metric_profile("geo-shuffle", 1e-4, 6, 3, eps_geo=1.0)
    >>> prof.exact, round(prof.epsilon_at(1), 4), round(prof.uniform, 4), prof.reach(0.7)
    (True, 0.6528, 0.8054, 3)
    """
    if protocol not in PROFILE_PROTOCOLS:
        raise PrivacyParameterError(f"protocol must be one of {', '.join(PROFILE_PROTOCOLS)}, got {protocol!r}")
    needs = {"rr-shuffle": "p", "geo-shuffle": "eps_geo", "sgdl-shuffle": "epsilon"}[protocol]
    given = {"p": p, "eps_geo": eps_geo, "epsilon": epsilon}
    foreign = [name for name, value in given.items() if value is not None and name != needs]
    if given[needs] is None or foreign:
        raise PrivacyParameterError(
            f"{protocol} takes {needs} (and no {', '.join(foreign) or 'other noise parameter'}), got "
            + ", ".join(f"{name}={value!r}" for name, value in given.items())
        )
    delta, n = check_delta(delta), check_n(n)
    k = check_positive_int(k, "k (largest value)")
    note = _silent if progress is None else progress
    if n * k > MAX_PROFILE_DISTANCE:
        raise PrivacyParameterError(
            f"metric_profile lists distances up to n k as 64-bit integers: n k = {n * k} (n={n}, k={k}) is above "
            f"2^63 - 1; the uniform epsilon holds at every distance (`shuffledp metric epsilon`, or the protocol's "
            f"*_certificate function)"
        )
    theorem: float | None = None
    if protocol == "rr-shuffle":
        p = check_rr_p(p)
        distances, eps, uniform, source = _rr_profile(delta, p, k, n, note)
        exact, name = False, "Theorem 3.1"
        try:
            theorem = rr_shuffle_epsilon_paper(delta, p, k, n)
        except ValidityConditionError:  # outside Theorem 3.1's condition: no value to show
            theorem = None
    elif protocol == "geo-shuffle":
        eps_geo = check_noise_epsilon(eps_geo, "eps_geo")
        c = geo_shuffle_c(eps_geo, delta, n)
        distances, eps, uniform, exact, source = _padded_profile("geo", eps_geo, delta, n, k, c, eps_geo, note)
        name, theorem = "Theorem 4.1", geo_shuffle_epsilon_paper(eps_geo, delta, n)
    else:
        epsilon = check_noise_epsilon(epsilon, "epsilon")
        c = sgdl_shuffle_c(epsilon, delta, n)
        report = sgdl_shuffle_report_epsilon(epsilon, n)
        distances, eps, uniform, exact, source = _padded_profile("sgdl", epsilon, delta, n, k, c, report, note)
        name, theorem = "Theorem 5.1", epsilon
    holds = 0
    if theorem is not None:
        ok = np.flatnonzero(eps <= theorem)
        holds = int(distances[ok[-1]]) if ok.size and ok[0] == 0 else 0
    return DistanceProfile(
        protocol=protocol,
        delta=delta,
        distances=np.asarray(distances, dtype=np.int64),
        epsilons=np.asarray(eps, dtype=np.float64),
        uniform=float(uniform),
        exact=bool(exact),
        source=source,
        theorem=theorem,
        theorem_name=name,
        theorem_holds_up_to=holds,
        inputs={"n": n, "k": k, "delta": delta, needs: given[needs]},
    )


__all__ = ["DistanceProfile", "MAX_PROFILE_DISTANCE", "PROFILE_PROTOCOLS", "metric_profile"]
