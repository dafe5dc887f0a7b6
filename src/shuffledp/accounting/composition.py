"""Composition of shuffled rounds: group, basic, advanced and tight (PLD) composition.

* `group_composition` — Lemma 1 of the segmented paper: an (eps, delta)-DP
  protocol is (s eps, s e^(s eps) delta)-indistinguishable on datasets differing in s entries.
* `basic_composition` — k rounds of (eps, delta)-DP are (k eps, k delta)-DP.
* `advanced_composition` — Dwork, Rothblum, Vadhan (FOCS 2010): k rounds of
  (eps, delta)-DP are (sqrt(2 k log(1/delta')) eps + k eps (e^eps - 1), k delta + delta')-DP.
* `shuffle_pld` / `tight_composition_epsilon` — tight composition of k
  shuffled rounds through the privacy-loss distribution (PLD) of the dominating pair
  (P, Q) of the variation-ratio reduction (segmented paper, Theorem 1): the engine and
  its pessimistic discretisation are in `shuffledp.accounting.pld`, re-exported here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from shuffledp._util.validation import check_nonnegative, check_positive_int, check_probability
from shuffledp.accounting._checks import (
    Family,
    check_inverse_problem,
    check_n,
    check_n_delta,
    parameters_of,
    resolve_params,
)
from shuffledp.accounting._rounding import COMPOSED_SEARCH_MAX_EPSILON, SEARCH_MIN_EPSILON
from shuffledp.accounting.accountants import Accountant, VariationRatioAccountant, calibrate
from shuffledp.accounting.bounds import shuffle_epsilon
from shuffledp.accounting.events import Event, SampledEvent, SelfComposedEvent, ShuffleEvent
from shuffledp.accounting.pld import CompositionError, PrivacyLossDistribution
from shuffledp.accounting.pld_accountant import PLDAccountant
from shuffledp.accounting.release import shuffle_pld
from shuffledp.errors import PrivacyParameterError, UnsupportedEventError
from shuffledp.params import VariationRatio

#: Ways `composed_shuffle_epsilon` composes k rounds.
COMPOSITION_METHODS = ("tight", "advanced", "basic")


# --- classical composition theorems -------------------------------------------------------


def _check_eps_delta(epsilon: float, delta: float) -> tuple[float, float]:
    return check_nonnegative(epsilon, "epsilon"), check_probability(delta, "delta", open_low=False)


def group_composition(epsilon: float, delta: float, size: int) -> tuple[float, float]:
    """Lemma 1 (segmented paper): (eps, delta)-DP gives (s eps, s e^(s eps) delta) for s = ``size`` differing entries.

    Parameters
    ----------
    epsilon : float, >= 0
    delta : float, in [0, 1)
    size : int, >= 1
        Number s of entries in which the datasets differ.

    Returns
    -------
    (float, float)
        (s eps, min(1, s e^(s eps) delta)).

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    segmented-multimessage-shuffle.txt §3.1 Lemma 1.

    Examples
    --------
    >>> eps, delta = group_composition(0.1, 1e-6, 3)
    >>> round(eps, 6), round(delta * 1e6, 4)
    (0.3, 4.0496)
    """
    eps, delta = _check_eps_delta(epsilon, delta)
    size = check_positive_int(size, "size")
    with np.errstate(over="ignore"):
        grown = size * math.exp(min(size * eps, 700.0)) * delta if delta > 0.0 else 0.0
    return size * eps, min(1.0, grown)


def basic_composition(epsilon: float, delta: float, rounds: int) -> tuple[float, float]:
    """Composition of ``rounds`` (eps, delta)-DP mechanisms: (rounds * eps, rounds * delta).

    Parameters
    ----------
    epsilon : float, >= 0
    delta : float, in [0, 1)
    rounds : int, >= 1

    Returns
    -------
    (float, float)
        (k eps, min(1, k delta)).

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    Dwork and Roth, The Algorithmic Foundations of DP, Theorem 3.16 (not in
    /work/shared/papers); pic-usenix25.txt §8 (sequential composition of executions).

    Examples
    --------
    >>> eps, delta = basic_composition(0.1, 1e-6, 10)
    >>> round(eps, 6), round(delta, 12)
    (1.0, 1e-05)
    """
    eps, delta = _check_eps_delta(epsilon, delta)
    k = check_positive_int(rounds, "rounds")
    return k * eps, min(1.0, k * delta)


def advanced_composition(epsilon: float, delta: float, rounds: int, delta_slack: float) -> tuple[float, float]:
    """Advanced composition (Dwork, Rothblum, Vadhan 2010; Theorem 3.20 of Dwork & Roth).

    Returns (sqrt(2 k log(1/delta')) eps + k eps (e^eps - 1), k delta + delta') for k =
    ``rounds`` and the slack delta' = ``delta_slack`` in (0, 1), capped by basic composition's
    k eps (valid at k delta <= k delta + delta').

    Parameters
    ----------
    epsilon : float, >= 0
    delta : float, in [0, 1)
    rounds : int, >= 1
    delta_slack : float, in (0, 1)

    Returns
    -------
    (float, float)
        The composed (epsilon, delta); delta capped at 1.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    Dwork, Rothblum, Vadhan, FOCS 2010; Dwork and Roth, Theorem 3.20 (not in /work/shared/papers).

    Examples
    --------
    >>> eps, delta = advanced_composition(0.01, 1e-7, 1000, 1e-6)
    >>> round(eps, 4), round(delta, 10)
    (1.7628, 0.000101)
    """
    eps, delta = _check_eps_delta(epsilon, delta)
    k = check_positive_int(rounds, "rounds")
    slack = check_probability(delta_slack, "delta_slack")
    with np.errstate(over="ignore"):
        drv = math.sqrt(2.0 * k * math.log(1.0 / slack)) * eps + k * eps * math.expm1(min(eps, 700.0))
    return min(drv, k * eps), min(1.0, k * delta + slack)


def _round(n: int, params, population: int | None, sampling: str) -> ShuffleEvent | SampledEvent:
    """One round: n shuffled reports, or (with ``population``) a sample of n of ``population`` users, shuffled."""
    release = ShuffleEvent(params, n)
    if population is None:
        return release
    population = check_n(population, "population")
    if population < n:  # n is the sample size here: name the argument the caller gave
        raise PrivacyParameterError(f"n (the sample size) must be at most population={population}, got n={n}")
    return SampledEvent(release, n, population, sampling)


def _sampled_per_round(population: int | None, per_round_method: str) -> None:
    if population is not None and per_round_method != "variation-ratio":
        raise PrivacyParameterError(
            f"a sampled round is priced by the profile transform of its proven pair: per_round_method must be "
            f"'variation-ratio', got {per_round_method!r}"
        )


def tight_composition_epsilon(
    n: int,
    delta: float,
    rounds: int,
    eps0: float | None = None,
    params: VariationRatio | None = None,
    *,
    step: float | None = None,
    population: int | None = None,
    sampling: str = "fixed-size",
) -> float:
    """Total epsilon of ``rounds`` shuffled rounds at total ``delta``, by PLD convolution (upper bound).

    With ``population``, each round shuffles a secret sample of n of ``population`` users
    (`SampledEvent`, scheme ``sampling``: "fixed-size" or "poisson").

    Above the exact epsilon of the k-fold product of the dominating pair by at most
    about k * step (see `shuffle_pld` for the default step), and never above
    k * log p (each round's privacy loss is at most log p); for one round without an
    explicit ``step``, the variation-ratio bound of the round itself.

    Parameters
    ----------
    n : int, in [1, 2^53]
    delta : float, in [1e-300, 1)
    rounds : int, >= 1
    eps0 : float, in [1e-6, 700], optional
    params : VariationRatio, optional
        Exactly one of ``eps0`` / ``params``.
    step : float, in [1e-8, 0.1], or None

    Returns
    -------
    float

    Raises
    ------
    CompositionError
        When the PLD certifies nothing: its FFT round-off allowance or the mass it puts at
        loss +infinity reaches ``delta`` (nearly deterministic losses, e.g. eps0 >= 12 with
        n = 10^4 and 80 rounds; delta below ~1e-11), or more than 16,777 rounds (memory).
        `best_composed_epsilon` then picks another method.
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    segmented-multimessage-shuffle.txt §3.3 Theorem 1; pic-usenix25.txt §8 (k executions).

    Examples
    --------
    >>> round(tight_composition_epsilon(1000, 1e-6, 3, eps0=1.0), 3)
    0.267
    """
    n, delta = check_n_delta(n, delta)
    k = check_positive_int(rounds, "rounds")
    release = _round(n, resolve_params(eps0, params), population, sampling)
    return PLDAccountant(step).compose(release, k).get_epsilon(delta)


@dataclass(frozen=True)
class ComposedBound:
    """The best composed epsilon, the method that gave it, and what every method gave.

    Parameters
    ----------
    epsilon : float
    method : str
        One of `COMPOSITION_METHODS`.
    candidates : dict of str to float
        Each method's epsilon (``math.inf`` where it certified nothing).
    reasons : dict of str to str
        Why, for those methods.

    Examples
    --------
    >>> ComposedBound(0.5, "basic", {"basic": 0.5}, {}).method
    'basic'
    """

    epsilon: float
    method: str
    candidates: dict[str, float]
    reasons: dict[str, str]


def composed_shuffle_epsilon(
    n: int,
    delta: float,
    rounds: int,
    eps0: float | None = None,
    params: VariationRatio | None = None,
    *,
    method: str = "tight",
    per_round_method: str = "variation-ratio",
    step: float | None = None,
    population: int | None = None,
    sampling: str = "fixed-size",
) -> float:
    """Total epsilon of ``rounds`` shuffled rounds at total ``delta`` by ``method``.

    With ``population``, each round shuffles a secret sample of n of ``population`` users
    (`SampledEvent`; the server must not learn who was sampled), and every per-round bound
    is that of the sampled round.

    * ``"tight"``: `tight_composition_epsilon`;
    * ``"basic"``: k times the per-round bound at delta / k;
    * ``"advanced"``: `advanced_composition` with the split of delta into k per-round
      deltas and the slack delta' chosen by a bounded scalar search (any split is valid),
      capped by basic composition;
    * ``"best"``: the smallest of the three (`best_composed_epsilon` also says which).

    Per-round bounds come from `shuffle_epsilon`
    with ``per_round_method``.

    Parameters
    ----------
    n : int, in [1, 2^53]
    delta : float, in [1e-300, 1)
    rounds : int, >= 1
    eps0 : float, in [1e-6, 700], optional
    params : VariationRatio, optional
        Exactly one of ``eps0`` / ``params``.
    method : {"tight", "advanced", "basic", "best"}
    per_round_method : str
        A registered upper bound.
    step : float, in [1e-8, 0.1], or None
        Loss grid of the tight method.

    Returns
    -------
    float

    Raises
    ------
    CompositionError
        When the method certifies nothing (for "best": when none does).
    PrivacyParameterError
        For an argument out of range or an unknown method.

    References
    ----------
    pic-usenix25.txt §8 (k executions with fresh keys compose sequentially).

    Examples
    --------
    >>> round(composed_shuffle_epsilon(10_000, 1e-6, 10, eps0=2.0, method="basic"), 4)
    1.3098
    """
    n, delta = check_n_delta(n, delta)
    k = check_positive_int(rounds, "rounds")
    _sampled_per_round(population, per_round_method)
    sample = (population, sampling)
    if method == "best":
        return best_composed_epsilon(
            n,
            delta,
            k,
            eps0,
            params,
            per_round_method=per_round_method,
            step=step,
            population=population,
            sampling=sampling,
        ).epsilon
    if method == "tight":
        return tight_composition_epsilon(n, delta, k, eps0, params, step=step, population=population, sampling=sampling)
    if method not in COMPOSITION_METHODS:
        allowed = ", ".join((*COMPOSITION_METHODS, "best"))
        raise PrivacyParameterError(f"unknown composition method {method!r}; use one of {allowed}")
    basic = _basic(n, delta, k, eps0, params, per_round_method, sample)
    return basic if method == "basic" else _advanced(n, delta, k, eps0, params, per_round_method, basic, sample)


def _one_round(n: int, delta: float, eps0, params, per_round_method: str, sample: tuple) -> float:
    """The per-round bound at ``delta``: `shuffle_epsilon`, or the sampled round's (``sample`` = (population, scheme))."""
    population, sampling = sample
    if population is None:
        return shuffle_epsilon(n, delta, eps0, params, method=per_round_method)
    release = _round(n, resolve_params(eps0, params), population, sampling)
    return VariationRatioAccountant().compose(release).get_epsilon(delta)


def _basic(
    n: int, delta: float, k: int, eps0, params, per_round_method: str, sample: tuple = (None, "fixed-size")
) -> float:
    """k times the per-round bound at delta / k; CompositionError if that bound is infinite."""
    per_round = _one_round(n, delta / k, eps0, params, per_round_method, sample)
    if not math.isfinite(per_round):
        raise CompositionError(
            f"basic and advanced composition certify nothing: the per-round bound ({per_round_method}) is infinite at "
            f"n={n}, delta/rounds={delta / k:g}; use a larger n or delta, or another per_round_method"
        )
    return basic_composition(per_round, delta / k, k)[0]


def _advanced(
    n: int,
    delta: float,
    k: int,
    eps0,
    params,
    per_round_method: str,
    basic: float,
    sample: tuple = (None, "fixed-size"),
) -> float:
    """Advanced composition over a searched split of delta, capped by ``basic`` (basic composition's value)."""

    def advanced(frac: float) -> float:
        per_round = (1.0 - frac) * delta / k
        eps = _one_round(n, per_round, eps0, params, per_round_method, sample)
        return advanced_composition(eps, per_round, k, frac * delta)[0] if math.isfinite(eps) else math.inf

    # Every split is valid, so a near-optimal one found by bounded Brent search is still an upper bound.
    found = optimize.minimize_scalar(advanced, bounds=(0.01, 0.99), method="bounded", options={"xatol": 1e-3})
    return min(float(found.fun), advanced(0.5), basic)


def best_composed_epsilon(
    n: int,
    delta: float,
    rounds: int,
    eps0: float | None = None,
    params: VariationRatio | None = None,
    *,
    per_round_method: str = "variation-ratio",
    step: float | None = None,
    population: int | None = None,
    sampling: str = "fixed-size",
) -> ComposedBound:
    """The smallest valid composed epsilon among tight, advanced and basic, and which method gave it.

    Every method is a valid upper bound, so their minimum is one too; a method that
    certifies nothing is listed with ``math.inf`` and its reason.

    Parameters
    ----------
    n, delta, rounds, eps0, params, per_round_method, step
        As in `composed_shuffle_epsilon`.

    Returns
    -------
    ComposedBound

    Raises
    ------
    CompositionError
        Only when no method certifies a finite epsilon.
    PrivacyParameterError
        For an argument out of range.

    Examples
    --------
    >>> best = best_composed_epsilon(1000, 1e-6, 3, eps0=1.0)
    >>> best.method, round(best.epsilon, 3), best.candidates["basic"] >= best.epsilon
    ('tight', 0.267, True)
    """
    candidates: dict[str, float] = {}
    reasons: dict[str, str] = {}
    n, delta = check_n_delta(n, delta)
    k = check_positive_int(rounds, "rounds")
    _sampled_per_round(population, per_round_method)
    sample = (population, sampling)
    try:
        candidates["tight"] = tight_composition_epsilon(
            n, delta, k, eps0, params, step=step, population=population, sampling=sampling
        )
    except CompositionError as exc:
        candidates["tight"], reasons["tight"] = math.inf, str(exc)
    try:  # advanced is capped by basic, so one per-round bound serves both
        basic = _basic(n, delta, k, eps0, params, per_round_method, sample)
        candidates["advanced"] = _advanced(n, delta, k, eps0, params, per_round_method, basic, sample)
        candidates["basic"] = basic
    except CompositionError as exc:
        for name in ("advanced", "basic"):
            candidates[name], reasons[name] = math.inf, str(exc)
    best = min(candidates, key=lambda name: candidates[name])
    if not math.isfinite(candidates[best]):
        raise CompositionError("no composition method certifies a finite epsilon: " + "; ".join(reasons.values()))
    return ComposedBound(candidates[best], best, candidates, reasons)


def composed_local_epsilon(
    target_epsilon: float,
    n: int,
    delta: float,
    rounds: int,
    family: Family = "generic",
    *,
    method: str = "tight",
    min_epsilon: float = SEARCH_MIN_EPSILON,
    max_epsilon: float = COMPOSED_SEARCH_MAX_EPSILON,
    population: int | None = None,
    sampling: str = "fixed-size",
) -> float:
    """Largest per-round local eps0 whose composed shuffled rounds stay within (target, delta).

    With ``population``, each round shuffles a secret sample of n of ``population`` users
    (`SampledEvent` with scheme ``sampling``); the server must not learn who was sampled.

    The inverse of `composed_shuffle_epsilon` over ``rounds`` rounds for a randomizer
    ``family`` (as in `local_epsilon`); the result is
    verified to compose to at most ``target_epsilon``.  PIC §8: each round uses fresh
    one-time keys, so rounds compose as independent shuffled mechanisms.

    Parameters
    ----------
    target_epsilon : float, > 0
    n : int, in [1, 2^53]
    delta : float, in [1e-300, 1)
    rounds : int, >= 1
    family : "generic" or callable
        Randomizer family eps0 -> LocalRandomizer (or VariationRatio).
    method : {"tight", "advanced", "basic", "best"}
    min_epsilon, max_epsilon : float, 0 < min_epsilon < max_epsilon
        Search bracket for eps0 (within [1e-6, 700]).

    Returns
    -------
    float
        ``max_epsilon`` when even it meets the target.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range, an unknown method, or when even ``min_epsilon``
        misses the target.

    References
    ----------
    pic-usenix25.txt §8 ("Multiple executions and reuse keys").

    Examples
    --------
    >>> eps0 = composed_local_epsilon(0.5, 1000, 1e-6, 3, method="basic")
    >>> round(eps0, 3), composed_shuffle_epsilon(1000, 1e-6, 3, eps0=eps0, method="basic") <= 0.5
    (1.037, True)
    """
    target, n, delta, lo, hi = check_inverse_problem(target_epsilon, n, delta, min_epsilon, max_epsilon)
    k = check_positive_int(rounds, "rounds")
    if method not in (*COMPOSITION_METHODS, "best"):
        allowed = ", ".join((*COMPOSITION_METHODS, "best"))
        raise PrivacyParameterError(f"unknown composition method {method!r}; use one of {allowed}")

    params_of = parameters_of(family)
    context = f"over rounds={k} of n={n} reports at delta={delta:g}"
    # every method is an accountant, so the inverse is the one calibrate (an eps0 certifying nothing is too large)
    if method == "tight":
        accountant: Accountant = PLDAccountant()
    elif method == "basic":
        accountant = VariationRatioAccountant()
    else:
        accountant = _ComposedRoundsAccountant(method)
    if population is not None:
        context += f", each a {sampling} sample of {n} of {population} users"
    make = lambda eps0: SelfComposedEvent(_round(n, params_of(eps0), population, sampling), k)  # noqa: E731
    return calibrate(make, target, delta, accountant=accountant, bracket=(lo, hi), context=context)


class _ComposedRoundsAccountant(Accountant):
    """Rounds of one release priced by `composed_shuffle_epsilon` with ``method`` ("advanced" or "best"), so that
    `composed_local_epsilon` inverts them through `calibrate` like every other inverse."""

    def __init__(self, method: str) -> None:
        super().__init__()
        self.method = self.name = method

    def _check_supported(self, event: Event) -> None:
        release = event.event if isinstance(event, SelfComposedEvent) else None
        if isinstance(release, SampledEvent):
            release = release.event
        if not (isinstance(release, ShuffleEvent) and release.gamma == 1.0):
            raise UnsupportedEventError(f"composition method {self.method!r} prices rounds of one shuffled release")

    def _epsilon(self, event: Event, delta: float) -> float:
        release, sample = event.event, {}
        if isinstance(release, SampledEvent):
            sample = {"population": release.population, "sampling": release.scheme}
            release = release.event
        return composed_shuffle_epsilon(
            release.n, delta, event.count, params=release.params, method=self.method, **sample
        )

    def _delta(self, event: Event, epsilon: float) -> float:
        raise UnsupportedEventError(f"composition method {self.method!r} gives epsilon at a delta only")


__all__ = [
    "COMPOSITION_METHODS",
    "ComposedBound",
    "CompositionError",
    "best_composed_epsilon",
    "PrivacyLossDistribution",
    "advanced_composition",
    "basic_composition",
    "composed_local_epsilon",
    "composed_shuffle_epsilon",
    "group_composition",
    "shuffle_pld",
    "tight_composition_epsilon",
]
