"""Amplification by subsampling of one shuffled round: its privacy profile and a pessimistic PLD.

A round samples users from a population of N and shuffles the reports of the sampled ones.
The shuffled release of the sample is priced by its proven pair
(`shuffledp.accounting.release.release_divergence`), whose privacy profile
delta(eps) = sup D_{e^eps} bounds both orders of a substitution (the pair is symmetric).

**Fixed size (sampling m of N without replacement), substitution neighbours.**  Balle, Barthe
and Gaboardi (NeurIPS 2018, Theorem 10) turn every (eps, delta) of the shuffled sample into
(log(1 + gamma (e^eps - 1)), gamma delta), gamma = m/N; on the whole profile,

    delta'(e') = gamma delta(log(1 + (e^e' - 1)/gamma)),   e' >= 0,

for both orders of a neighbouring pair (the relation is symmetric).

**Poisson (each user w.p. gamma), add/remove neighbours.**  With (P, Q) the shuffle pair, the
round is dominated by (gamma P + (1 - gamma) Q, Q) when the victim's record is removed and by
(Q, gamma P + (1 - gamma) Q) when it is added (Zhu, Dong and Wang, AISTATS 2022, the
Poisson-subsampling dominating pairs), Q being what the round releases without the victim's
record.  Their profiles for e' >= 0 are gamma delta(log(1 + (e^e' - 1)/gamma)) (remove) and
(1 - e^e' (1 - gamma)) delta(log(e^e' gamma / (1 - e^e' (1 - gamma)))) where the factor is
positive, else 0 (add); the round's profile is their maximum.  This reading needs the release
without the victim's record to be the release with the victim's device sending a report the
server cannot tell from a real one (a dummy: the randomizer's output on a fixed public input),
so every enrolled user sends a report each round and the number of reports does not depend on
who was sampled; the event's n counts the reports the victim hides among (pricing with
n = m <= N is conservative).  A shuffler that forwards a Poisson sample reveals its size and
is not covered: use the fixed-size scheme there.

**Secret sample.**  Either way the amplification holds only if the server cannot tell who was
sampled: the shuffler draws the sample, or every user sends a real or a dummy report each round.

**The PLD** (`sampled_pld`).  A symmetric privacy profile S(e') for e' >= 0 determines, through
H_x(A || B) = 1 - x + x H_{1/x}(B || A), an upper bound on H_x of both orders for all
x = e^e' > 0, and this function of x is convex.  Connecting the dots (Doroshenko, Ghazi,
Kamath, Kumar and Manurangsi, PETS 2022) at nodes x_j = e^(k_j h) gives a piecewise-linear
function above it (a chord of a convex function lies above it, and the values at the nodes are
upper bounds); that function is the hockey-stick curve of a discrete pair whose losses are the
nodes, so this PLD dominates the round for every x >= 0 and the product of such PLDs
dominates the (adaptive) composition (Zhu, Dong, Wang, Theorem 10).  Masses that come out
negative (upper bounds need not be convex) are raised to 0, and every mass is charged its
float64 error: both only add mass, which only raises the curve.  Beyond the last node the
curve is held at its value there (the mass at infinite loss); the nodes extend to where the
profile is below ``tail_mass``.

References
----------
Balle, Barthe, Gaboardi, "Privacy amplification by subsampling", NeurIPS 2018, Theorem 10;
Zhu, Dong, Wang, "Optimal accounting of differential privacy via characteristic function",
AISTATS 2022; Doroshenko et al., "Connect the dots", PETS 2022 (none in /work/shared/papers).
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp.accounting._rounding import EPS_CEILING, UNIT_ROUNDOFF
from shuffledp.accounting.dominating_pair import solve_epsilon
from shuffledp.accounting.pld import PrivacyLossDistribution
from shuffledp.accounting.release import ReleaseParams, release_cap, release_divergence, release_epsilon
from shuffledp.errors import PrivacyParameterError

#: The sampling schemes: fixed-size sampling without replacement (substitution neighbours) and
#: Poisson sampling (add/remove neighbours).
SCHEMES = ("fixed-size", "poisson")
#: Neighbouring relation of each scheme (rounds compose only under one relation).
RELATION = {"fixed-size": "substitution", "poisson": "add/remove"}
#: What the server must not learn, printed wherever a sampled bound is used.
SECRET_SAMPLE = (
    "secret sample: the server must not learn who was sampled (the shuffler draws the sample, "
    "or every user sends a real or a dummy report each round)"
)
#: Nodes of the connect-the-dots PLD on each side of loss 0 (the default).
PLD_NODES = 600
#: Default loss grid of a sampled round's PLD: this fraction of the truncation loss, within [1e-6, 1e-3].
_STEP_FRACTION = 1.0 / 4_000
_U = UNIT_ROUNDOFF
#: Budget of (node, block) terms of one PLD, and the fewest nodes on each side when the inner pair has many blocks.
_NODE_WORK, _MIN_NODES = 3_000_000, 100


def check_scheme(scheme: object) -> str:
    """``scheme`` if it is one of `SCHEMES`, else PrivacyParameterError naming the allowed ones."""
    if scheme not in SCHEMES:
        raise PrivacyParameterError(f"sampling scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}")
    return str(scheme)


def amplified_cap(cap: float, rate: float) -> float:
    """log(1 + rate (e^cap - 1)) rounded up: the sampled round's epsilon at delta = 0 (both schemes).

    Examples
    --------
    >>> round(amplified_cap(2.0, 0.2), 6), amplified_cap(math.inf, 0.5)
    (0.823215, inf)
    """
    if not math.isfinite(cap):
        return math.inf
    if cap > EPS_CEILING:
        return math.nextafter(cap + math.log(rate), math.inf) + 1e-12
    return math.nextafter(math.log1p(rate * math.expm1(cap)) * (1.0 + 4.0 * _U), math.inf)


class SampledProfile:
    """Certified upper bound on the privacy profile of one sampled shuffled round (module docstring).

    Parameters
    ----------
    params : VariationRatio or BlanketDecomposition or PoissonReport
        The proven pair of the shuffled sample (`shuffledp.accounting.release`).
    n : int
        Reports the victim hides among in the shuffled sample.
    gamma : float, in [0, 1]
        Blanket-slot probability of the shuffle event (segmented Theorem 2).
    rate : float, in (0, 1]
        Sampling rate m/N.
    scheme : {"fixed-size", "poisson"}
    tail : float
        Mass the inner divergence may neglect (charged).

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> prof = SampledProfile(VariationRatio.from_ldp(2.0), 1_000, 1.0, 0.2, "fixed-size", 1e-18)
    >>> inner = release_divergence(VariationRatio.from_ldp(2.0), 1_000, 1.0, 1e-18).upper(0.5)
    >>> e1 = math.log1p(0.2 * math.expm1(0.5))
    >>> abs(prof.upper(e1) - 0.2 * inner) <= 1e-9 * inner
    True
    """

    def __init__(self, params: ReleaseParams, n: int, gamma: float, rate: float, scheme: str, tail: float) -> None:
        self.scheme = check_scheme(scheme)
        if not (0.0 < rate <= 1.0):
            raise PrivacyParameterError(f"sampling rate must lie in (0, 1], got {rate!r}")
        self.params, self.n, self.gamma, self.rate = params, n, gamma, float(rate)
        self.inner = release_divergence(params, n, gamma, tail)
        self.inner_cap = release_cap(params, n, gamma)
        self.cap = amplified_cap(self.inner_cap, self.rate)

    @property
    def rows(self) -> int:
        """Blocks the inner divergence sums per epsilon (its cost per evaluation)."""
        inner = getattr(self.inner, "_merged_upper", self.inner)
        mix = getattr(inner, "_upper", None)
        return 1 if mix is None else int(mix.clones.size)

    def _inner_many(self, eps: np.ndarray) -> np.ndarray:
        many = getattr(self.inner, "upper_many", None)
        if many is not None:
            return many(eps)
        return np.array([self.inner.upper(float(e)) for e in eps.ravel()]).reshape(eps.shape)

    def upper_many(self, eps: np.ndarray) -> np.ndarray:
        """Upper bounds on the round's profile at every e' >= 0 of an array (both orders of a neighbouring pair).

        Each transformed epsilon is rounded down (the inner profile does not increase in it) and
        each factor up, by a few units of round-off.
        """
        eps = np.maximum(np.asarray(eps, dtype=np.float64), 0.0)
        rate = self.rate
        big = eps > EPS_CEILING
        em1 = np.expm1(np.minimum(eps, EPS_CEILING))
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            inner_eps = np.where(big, eps - math.log(rate), np.log1p(em1 / rate))
        inner_eps = np.maximum(inner_eps * (1.0 - 8.0 * _U) - 1e-300, 0.0)
        values = rate * self._inner_many(inner_eps) * (1.0 + 8.0 * _U)
        if self.scheme == "poisson" and rate < 1.0:
            x = em1 + 1.0
            factor = 1.0 - x * (1.0 - rate)  # absolute error <= 3u
            live = (factor > 8.0 * _U) & ~big
            add = np.zeros_like(values)
            if np.any(live):
                f = factor[live]
                # log y = log(x rate) - log(factor), factor good to 3u absolute: rounded down by 8u / factor
                log_y = np.log(x[live] * rate) - np.log(f)
                log_y = np.maximum((log_y - 8.0 * _U / f) * (1.0 - 8.0 * _U) - 16.0 * _U, 0.0)
                add[live] = (f + 4.0 * _U) * self._inner_many(log_y) * (1.0 + 8.0 * _U)
            values = np.maximum(values, add)
        values = np.minimum(values, 1.0)
        values[eps >= self.cap] = 0.0
        return values

    def upper(self, eps: float) -> float:
        """`upper_many` at one e' (non-increasing in e')."""
        return float(self.upper_many(np.array([float(eps)]))[0])


def sampled_epsilon(profile: SampledProfile, delta: float, rtol: float) -> float:
    """Upper bound on the sampled round's epsilon at ``delta`` (snapped up to the rtol grid).

    Fixed-size: the shuffled sample's epsilon at delta / rate, transformed (Theorem 10 of Balle,
    Barthe, Gaboardi); Poisson: the smallest grid point where the profile is <= delta.

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> prof = SampledProfile(VariationRatio.from_ldp(2.0), 10_000, 1.0, 0.2, "fixed-size", 1e-18)
    >>> eps = sampled_epsilon(prof, 1e-6, 1e-7)
    >>> round(eps, 4), prof.upper(eps) <= 1e-6
    (0.0212, True)
    """
    rate = profile.rate
    if delta >= rate and profile.scheme == "fixed-size":
        return 0.0
    if profile.scheme == "fixed-size":
        inner = release_epsilon(profile.params, profile.n, delta / rate, profile.gamma, rtol)
        return amplified_cap(inner, rate)
    if profile.upper(0.0) <= delta:
        return 0.0
    ceiling = min(profile.cap, EPS_CEILING)
    guess = math.log1p(
        rate
        * math.expm1(min(release_epsilon(profile.params, profile.n, min(0.5, delta / rate), profile.gamma, 1e-3), 50.0))
    )
    return solve_epsilon(profile.upper, delta, ceiling, max(guess, 1e-9), rtol, True, cap=profile.cap)


def truncation_loss(profile: SampledProfile, tail_mass: float) -> float:
    """An e' where the profile is at most ``tail_mass`` (certified; at most 50 above the sampled cap's reach)."""
    if profile.upper(0.0) <= tail_mass:
        return 0.0
    found = sampled_epsilon(profile, tail_mass, 1e-4) if profile.scheme == "fixed-size" else None
    if found is None or not math.isfinite(found):
        ceiling = min(profile.cap, EPS_CEILING)
        found = solve_epsilon(profile.upper, tail_mass, ceiling, 0.1, 1e-4, True, cap=profile.cap)
    return min(found, 50.0)


def default_step(profile: SampledProfile, tail_mass: float) -> float:
    """The default loss grid of the round's PLD: 1/4,000 of its truncation loss, within [1e-6, 1e-3]."""
    return min(max(truncation_loss(profile, tail_mass) * _STEP_FRACTION, 1e-6), 1e-3)


def sampled_pld(
    profile: SampledProfile, *, step: float | None, tail_mass: float, max_bins: int, nodes: int = PLD_NODES
) -> PrivacyLossDistribution:
    """Pessimistic PLD of one sampled round by connecting the dots of its profile (module docstring).

    Parameters
    ----------
    profile : SampledProfile
    step : float or None
        Loss grid (the nodes are multiples of it); None picks `default_step`.
    tail_mass : float, in (0, 1)
        The nodes reach an e' where the profile is at most this; beyond, the curve is held (mass at +infinity).
    max_bins : int
        Most grid bins on each side of loss 0 (the step is coarsened to fit).
    nodes : int, >= 1
        Most nodes on each side of loss 0.

    Returns
    -------
    PrivacyLossDistribution

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> prof = SampledProfile(VariationRatio.from_ldp(2.0), 10_000, 1.0, 0.2, "fixed-size", 1e-18)
    >>> pld = sampled_pld(prof, step=None, tail_mass=1e-15, max_bins=10**6)
    >>> eps = pld.epsilon(1e-6)
    >>> sampled_epsilon(prof, 1e-6, 1e-7) <= eps <= sampled_epsilon(prof, 1e-6, 1e-7) + 0.002
    True
    """
    top = truncation_loss(profile, tail_mass)
    if step is None:
        step = min(max(top * _STEP_FRACTION, 1e-6), 1e-3)
    step = max(float(step), top / max(1, max_bins))
    k_top = max(1, math.ceil(top / step))
    nodes = min(nodes, max(_MIN_NODES, _NODE_WORK // max(1, profile.rows)))  # chords stay certified when coarser
    stride = max(1, math.ceil(k_top / max(1, nodes)))
    ks = np.arange(0, k_top + stride, stride, dtype=np.int64)  # node grid indices, 0 first
    s_val = profile.upper_many(ks * step)
    s_val = np.minimum.accumulate(s_val)  # the profile does not increase: a later bound caps earlier ones' successors
    # f(x) = H(x) - (1 - x)_+ at the nodes x = e^(-k h) (f = x S(k h)), 1, e^(k h) (f = S(k h))
    x_neg = np.exp(-ks[:0:-1] * step)
    x_pos = np.exp(ks * step)
    x = np.concatenate((x_neg, x_pos))
    f = np.concatenate((x_neg * s_val[:0:-1], s_val))
    losses = np.concatenate((-ks[:0:-1], ks))
    xs = np.concatenate(([0.0], x))
    fs = np.concatenate(([0.0], f))
    slopes = np.diff(fs) / np.diff(xs)
    slopes = np.append(slopes, 0.0)  # held beyond the last node
    mass = x * np.diff(slopes)
    mass[ks.size - 1] += 1.0  # (1 - x)_+ : its one kink, at x = 1 (loss 0)
    # float64 error of each mass: the slopes' differences of values good to a few ulps
    dx = np.diff(xs)
    width = np.minimum(dx, np.append(dx[1:], np.inf))
    near = np.abs(fs[:-1]) + np.abs(fs[1:]) + np.abs(np.append(fs[2:], fs[-1]))
    err = 16.0 * _U * (near * x / width + np.abs(mass)) + 1e-300
    mass = np.maximum(mass, 0.0) + err
    inf_mass = min(1.0, float(s_val[-1]) * (1.0 + 8.0 * _U))
    offset = int(losses[0])
    pmf = np.zeros(int(losses[-1] - losses[0]) + 1)
    pmf[losses - offset] = mass
    return PrivacyLossDistribution(step=float(step), offset=offset, pmf=pmf, inf_mass=inf_mass)


__all__ = [
    "PLD_NODES",
    "RELATION",
    "SCHEMES",
    "SECRET_SAMPLE",
    "SampledProfile",
    "amplified_cap",
    "check_scheme",
    "default_step",
    "sampled_epsilon",
    "sampled_pld",
    "truncation_loss",
]
