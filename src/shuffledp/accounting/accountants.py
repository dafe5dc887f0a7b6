"""Accountants: price privacy events (`shuffledp.accounting.events`) with one kind of bound.

Every accountant has the same small interface (the shape of Google's dp-accounting):

* ``supports(event)`` — whether it can price the event;
* ``compose(event, count=1)`` — record ``count`` repetitions of the event (returns itself);
* ``get_epsilon(delta)`` / ``get_delta(epsilon)`` — an upper bound for everything recorded;
* ``get_epsilon_lower(delta)`` — a lower bound, where the method has one.

An event outside an accountant's reach raises `UnsupportedEventError`
(never a silent ``inf``); a supported event at parameters where the method certifies
nothing raises its subclass `OutsideRegimeError`, saying why.

* `VariationRatioAccountant` (default) — the numerical variation-ratio bound of
  every single release (segmented paper Theorems 1-2), group privacy (Lemma 1) and
  composition by the basic theorem.
* `CloneAccountant` — the (stronger) clone bounds of Feldman, McMillan, Talwar, for
  generic eps0-LDP releases; same structure.
* `ClosedFormAccountant` — one closed form of the literature, single releases only.
* `PLDAccountant` (`shuffledp.accounting.pld_accountant`) — tight composition of possibly different rounds through the
  privacy-loss distribution of each round's dominating pair.

Examples
--------
>>> from shuffledp.params import VariationRatio
>>> from shuffledp.accounting.events import ShuffleEvent
>>> acc = VariationRatioAccountant().compose(ShuffleEvent(VariationRatio.from_ldp(2.0), 10_000))
>>> round(acc.get_epsilon(1e-6), 4)
0.1144
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable

from shuffledp._util.validation import check_nonnegative, check_positive_int, check_rtol
from shuffledp.accounting import events as E
from shuffledp.accounting._checks import check_delta, ldp_level
from shuffledp.accounting._rounding import DEFAULT_RTOL, DELTA_MIN, EPS_CEILING
from shuffledp.accounting._solve import largest_within
from shuffledp.accounting.clones import (
    clone_epsilon,
    stronger_clone_epsilon,
)
from shuffledp.accounting.dominating_pair import DominatingPair, PairDivergence
from shuffledp.accounting.personalized import (
    personalized_divergence,
    personalized_shuffle_epsilon,
    personalized_shuffle_epsilon_lower,
)
from shuffledp.accounting.registry import lookup_method
from shuffledp.accounting.release import release_cap, release_divergence, release_epsilon
from shuffledp.accounting.subsampling import SampledProfile, amplified_cap, sampled_epsilon
from shuffledp.accounting.variation_ratio import (
    variation_ratio_epsilon_lower,
)
from shuffledp.errors import OutsideRegimeError, PrivacyParameterError, UnsupportedEventError
from shuffledp.params import BlanketDecomposition, PoissonReport, VariationRatio

#: Iterations of the group-privacy fixed point (each one a bound evaluation).
_GROUP_ITERATIONS = 60
#: Tail mass a single release may neglect (and charge) when its delta is evaluated.
_TAIL = 1e-18
#: Steps per octave of the fixed ladder 2^(k / _LADDER_STEPS) on which a group's delta envelope is searched
#: below epsilon (fixed, so a larger epsilon searches a superset of points), and where it stops.
_LADDER_STEPS, _LADDER_FLOOR = 8, 1e-9
#: A delta below _REFINE * _TAIL is recomputed with the least tail charge (1e-300).
_REFINE = 1e3


def _single(event: E.Event) -> E.ShuffleEvent | None:
    """The one shuffled release an event amounts to (a linked event is one product release)."""
    if isinstance(event, E.ShuffleEvent):
        return event
    if isinstance(event, E.LinkedEvent):
        return event.as_shuffle_event()
    return None


Release = E.ShuffleEvent | E.PersonalizedShuffleEvent | E.SampledEvent


def _release(event: E.Event) -> Release | None:
    """`_single`, or the event itself for a personalized release, or the (normalised) sampled round."""
    if isinstance(event, E.PersonalizedShuffleEvent):
        return event
    if isinstance(event, E.SampledEvent):
        return event.normalised()
    return _single(event)


def _profile(event: E.SampledEvent, tail: float) -> SampledProfile:
    """The certified privacy profile of a sampled round (`shuffledp.accounting.subsampling`)."""
    inner = event.shuffle_event()
    return SampledProfile(inner.params, inner.n, inner.gamma, event.rate, event.scheme, tail)


class Accountant:
    """Base class: records events with `compose`, prices everything recorded.

    Subclasses decide which events they support and how they price them (see the module
    docstring); use `VariationRatioAccountant` unless a specific bound is wanted.

    Examples
    --------
    >>> from shuffledp.accounting.pld_accountant import PLDAccountant
    >>> issubclass(PLDAccountant, Accountant), Accountant.get_epsilon is PLDAccountant.get_epsilon
    (True, True)
    """

    name = "accountant"

    def __init__(self) -> None:
        self._events: list[E.Event] = []

    def fresh(self) -> Accountant:
        """A new accountant with this one's configuration and nothing recorded.

        Returns
        -------
        Accountant
            A shallow copy with an empty event list.

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> from shuffledp.accounting.events import ShuffleEvent
        >>> acc = VariationRatioAccountant(rtol=1e-5).compose(ShuffleEvent(VariationRatio.from_ldp(1.0), 100))
        >>> new = acc.fresh()
        >>> new.rtol, new.supports(ShuffleEvent(VariationRatio.from_ldp(1.0), 100))
        (1e-05, True)
        """
        clone = copy.copy(self)
        clone._events = []
        return clone

    @property
    def event(self) -> E.Event:
        """Everything recorded, as one event (a `ComposedEvent` when several were recorded).

        Raises
        ------
        UnsupportedEventError
            If nothing has been recorded yet.

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> from shuffledp.accounting.events import ShuffleEvent
        >>> ev = ShuffleEvent(VariationRatio.from_ldp(1.0), 100)
        >>> VariationRatioAccountant().compose(ev).compose(ev).event.events == (ev, ev)
        True
        """
        if not self._events:
            raise UnsupportedEventError(f"{type(self).__name__} has recorded no event: call compose(event) first")
        return self._events[0] if len(self._events) == 1 else E.ComposedEvent(tuple(self._events))

    def supports(self, event: E.Event) -> bool:
        """Whether `compose` accepts ``event``.

        Parameters
        ----------
        event : Event

        Returns
        -------
        bool

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> from shuffledp.accounting.events import ShuffleEvent
        >>> from shuffledp.accounting.events import GroupEvent
        >>> ev = GroupEvent(ShuffleEvent(VariationRatio.from_ldp(1.0), 100), 2)
        >>> from shuffledp.accounting.pld_accountant import PLDAccountant
        >>> VariationRatioAccountant().supports(ev), PLDAccountant().supports(ev)
        (True, False)
        """
        E.check_event(event, "event")
        try:
            E.check_one_relation([event])
            self._check_supported(event)
        except UnsupportedEventError:
            return False
        return True

    def compose(self, event: E.Event, count: int = 1) -> Accountant:
        """Record ``count`` repetitions of ``event`` (as a SelfComposedEvent when count > 1).

        Parameters
        ----------
        event : Event
            The release to record.
        count : int, >= 1
            Number of independent repetitions.

        Returns
        -------
        Accountant
            ``self``, so that calls chain.

        Raises
        ------
        UnsupportedEventError
            If this accountant cannot price ``event``.
        PrivacyParameterError
            If ``count`` < 1.

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> from shuffledp.accounting.events import ShuffleEvent
        >>> acc = VariationRatioAccountant().compose(ShuffleEvent(VariationRatio.from_ldp(2.0), 10_000), 2)
        >>> round(acc.get_epsilon(1e-6), 4)
        0.2392
        """
        count = check_positive_int(count, "count")
        E.check_event(event, "event")
        recorded = event if count == 1 else E.SelfComposedEvent(event, count)
        E.check_one_relation([*self._events, recorded])
        self._check_supported(recorded)
        self._events.append(recorded)
        return self

    def get_epsilon(self, delta: float) -> float:
        """Upper bound on epsilon at ``delta`` for everything recorded.

        Parameters
        ----------
        delta : float, in [1e-300, 1)

        Returns
        -------
        float
            An epsilon such that the recorded releases are (epsilon, delta)-DP.

        Raises
        ------
        UnsupportedEventError
            If nothing has been recorded.
        OutsideRegimeError
            If the method certifies no finite epsilon at these parameters.
        PrivacyParameterError
            If ``delta`` is out of range.

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> from shuffledp.accounting.events import ShuffleEvent
        >>> acc = VariationRatioAccountant().compose(ShuffleEvent(VariationRatio.from_ldp(2.0), 10_000))
        >>> round(acc.get_epsilon(1e-6), 4)
        0.1144
        """
        return self._epsilon(self.event, check_delta(delta))

    def get_delta(self, epsilon: float) -> float:
        """Upper bound on delta at ``epsilon`` for everything recorded.

        Parameters
        ----------
        epsilon : float, >= 0

        Returns
        -------
        float, in [0, 1]

        Raises
        ------
        UnsupportedEventError
            If nothing has been recorded, or the accountant has no delta-at-epsilon form
            (`ClosedFormAccountant`).
        PrivacyParameterError
            If ``epsilon`` is negative or not finite.

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> from shuffledp.accounting.events import ShuffleEvent
        >>> acc = VariationRatioAccountant().compose(ShuffleEvent(VariationRatio.from_ldp(2.0), 10_000))
        >>> acc.get_delta(0.1144) <= 1e-6 < acc.get_delta(0.1)
        True
        """
        return self._delta(self.event, check_nonnegative(epsilon, "epsilon"))

    def get_epsilon_lower(self, delta: float) -> float:
        """Lower bound on epsilon at ``delta``: no analysis of these parameters certifies less.

        Parameters
        ----------
        delta : float, in [1e-300, 1)

        Raises
        ------
        UnsupportedEventError
            Always in the base class (only `VariationRatioAccountant` has a lower bound).

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> from shuffledp.accounting.events import ShuffleEvent
        >>> CloneAccountant().compose(ShuffleEvent(VariationRatio.from_ldp(1.0), 100)).get_epsilon_lower(1e-6)
        Traceback (most recent call last):
        ...
        shuffledp.errors.UnsupportedEventError: CloneAccountant has no lower bound
        """
        raise UnsupportedEventError(f"{type(self).__name__} has no lower bound")

    # subclasses
    def _check_supported(self, event: E.Event) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _epsilon(self, event: E.Event, delta: float) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def _delta(self, event: E.Event, epsilon: float) -> float:  # pragma: no cover - abstract
        raise NotImplementedError


def _refined(delta_at: Callable[[float], float], tail: float) -> float:
    """``delta_at(tail)``, recomputed with the least tail charge float64 holds (1e-300) once the charge is
    no longer negligible (a result below _REFINE * _TAIL); both are upper bounds, the smaller is returned."""
    value = delta_at(tail)
    return value if value >= _REFINE * _TAIL else min(value, delta_at(DELTA_MIN))


def _cap(event: Release) -> float:
    """An epsilon the release certifies with delta = 0 (log p; the victim's own budget when personalized)."""
    if isinstance(event, E.PersonalizedShuffleEvent):
        return event.victim_epsilon
    if isinstance(event, E.SampledEvent):
        inner = event.shuffle_event()
        return amplified_cap(release_cap(inner.params, inner.n, inner.gamma), event.rate)
    return release_cap(event.params, event.n, event.gamma)


class _PairAccountant(Accountant):
    """Single releases by a dominating-pair bound; group privacy (Lemma 1) and basic composition on top."""

    def _single_supported(self, event: E.ShuffleEvent) -> None:
        """Raise UnsupportedEventError if this bound does not apply to ``event``."""

    def _single_epsilon(self, event: E.ShuffleEvent, delta: float) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def _single_divergence(self, event: E.ShuffleEvent, tail_mass: float) -> Callable[[float], float]:
        """eps -> certified upper bound on the release's divergence (neglected tail <= ``tail_mass``, charged)."""
        raise NotImplementedError

    def _personalized_supported(self, event: E.PersonalizedShuffleEvent) -> None:
        """Raise UnsupportedEventError if this accountant does not price personalized releases."""

    def _sampled_supported(self, event: E.SampledEvent) -> None:
        """Raise UnsupportedEventError if this accountant does not price sampled rounds."""
        raise UnsupportedEventError(
            f"{type(self).__name__} does not price sampled rounds: use VariationRatioAccountant or PLDAccountant"
        )

    def _release_epsilon(self, event: Release, delta: float) -> float:
        if isinstance(event, E.SampledEvent):
            return sampled_epsilon(_profile(event, _TAIL), delta, self.rtol)
        if isinstance(event, E.PersonalizedShuffleEvent):
            values, counts = event.others_groups()
            return personalized_shuffle_epsilon(
                event.victim_epsilon, values, delta, event.family, k=event.k, rtol=self.rtol, others_counts=counts
            )
        return self._single_epsilon(event, delta)

    def _release_divergence(self, event: Release, tail_mass: float = _TAIL) -> Callable[[float], float]:
        if isinstance(event, E.SampledEvent):
            return _profile(event, tail_mass).upper
        if isinstance(event, E.PersonalizedShuffleEvent):
            values, counts = event.others_groups()
            return personalized_divergence(
                event.victim_epsilon, values, event.family, k=event.k, tail_mass=tail_mass, others_counts=counts
            )
        return self._single_divergence(event, tail_mass)

    def _check_supported(self, event: E.Event) -> None:
        single = _release(event)
        if isinstance(single, E.PersonalizedShuffleEvent):
            self._personalized_supported(single)
        elif isinstance(single, E.SampledEvent):
            self._sampled_supported(single)
            self._single_supported(single.shuffle_event())
        elif single is not None:
            self._single_supported(single)
        elif isinstance(event, E.GroupEvent):
            if _release(event.event) is None:
                raise UnsupportedEventError(f"{type(self).__name__} prices group privacy of one release only")
            self._check_supported(event.event)
        elif isinstance(event, E.SelfComposedEvent):
            self._check_supported(event.event)
        else:
            for inner in event.events:
                self._check_supported(inner)

    def _epsilon(self, event: E.Event, delta: float) -> float:
        single = _release(event)
        if single is not None:
            value = self._release_epsilon(single, delta)
            if not math.isfinite(value):
                raise OutsideRegimeError(
                    f"{self.name} certifies no finite epsilon for n={single.n} at delta={delta:g} "
                    f"(no blanket can cover the victim's report often enough)"
                )
            return value
        if isinstance(event, E.GroupEvent):
            return self._group_epsilon(event, delta) if event.size > 1 else self._epsilon(event.event, delta)
        # basic composition: every part at an equal share of delta (a share below 1e-300 is refused, as delta is)
        parts = event.parts()
        share = check_delta(delta / sum(count for _, count in parts), "delta / rounds")
        return sum(count * self._epsilon(inner, share) for inner, count in parts)

    def _delta(self, event: E.Event, epsilon: float) -> float:
        single = _release(event)
        if single is not None:
            return _refined(lambda tail: self._release_divergence(single, tail)(epsilon), _TAIL)
        if isinstance(event, E.GroupEvent):
            return self._group_delta(event, epsilon) if event.size > 1 else self._delta(event.event, epsilon)
        parts = event.parts()
        total = sum(count for _, count in parts)
        return min(1.0, sum(count * self._delta(inner, epsilon / total) for inner, count in parts))

    def _group_delta(self, event: E.GroupEvent, epsilon: float) -> float:
        """Lemma 1, size e^e delta_1(e / size), minimised over e <= epsilon (each such e certifies epsilon too).

        The bound falls with e until delta_1 reaches its floor (the pair's mass at infinite
        loss), then grows like e^e; smaller e are searched once the bound is seen not to fall, on
        the fixed ladder 2^(k/8), which a larger epsilon searches a superset of, so delta does not
        rise with epsilon between ladder points (up to the charged tail).
        delta_1's neglected tail is charged at most 1e-18 / (size e^epsilon), rounded down to a power of 2
        (searches then reuse divergences); a result below 1e-15 is recomputed with the tail at 1e-300.
        """
        size, single = event.size, _release(event.event)
        if epsilon >= size * _cap(single):
            return 0.0  # pure group privacy: size * log p with delta = 0
        factor = size * math.exp(min(epsilon, EPS_CEILING))
        tail = max(DELTA_MIN, 2.0 ** math.floor(math.log2(_TAIL / factor)))
        return _refined(lambda tail: self._group_envelope(event, epsilon, tail), tail)

    def _group_envelope(self, event: E.GroupEvent, epsilon: float, tail: float) -> float:
        size = event.size
        divergence = self._release_divergence(_release(event.event), tail)

        def bound(e: float) -> float:  # in log space: e^e overflows beyond e ~ 709
            d = divergence(e / size)
            return 0.0 if d <= 0.0 else math.exp(min(0.0, math.log(size) + e + math.log(d)))

        best = bound(epsilon)
        if epsilon <= 0.0:  # no e below 0 to search (a release weak enough to certify epsilon 0)
            return best
        # beyond 2 EPS_CEILING the bound is 1 (e^e times any float64 delta_1 > 0): start the ladder there
        k = math.ceil(_LADDER_STEPS * math.log2(min(epsilon, 2.0 * EPS_CEILING))) - 1
        if best == 0.0 or (best < 1.0 and bound(2.0 ** (k / _LADDER_STEPS)) >= best):
            return best
        rises = 0
        while rises < 2 and 2.0 ** (k / _LADDER_STEPS) > _LADDER_FLOOR:
            value = bound(2.0 ** (k / _LADDER_STEPS))
            rises = rises + 1 if value > best else 0
            best = min(best, value)
            k -= 1
        return best

    def _group_epsilon(self, event: E.GroupEvent, delta: float) -> float:
        """Smallest size * eps with size e^(size eps) delta_1(eps) <= delta (segmented Lemma 1).

        Fixed point eps <- epsilon_1(delta / (size e^(size eps))) from epsilon_1(delta / size),
        which rises to the smallest solution; if it has not settled after _GROUP_ITERATIONS
        steps, a certified value is found by doubling then bisecting on `_group_delta` <= delta.
        Falls back to size * log p (pure group privacy, always valid for finite p).
        """
        single, size = _release(event.event), event.size
        cap = size * _cap(single)
        eps = 0.0
        for _ in range(_GROUP_ITERATIONS):
            target = delta / (size * math.exp(min(size * eps, 700.0)))
            if target < 1e-300:
                break
            new = self._release_epsilon(single, target)
            if not math.isfinite(new) or new <= eps * (1.0 + 1e-12):
                eps = max(eps, new)
                break
            eps = new
        if math.isfinite(eps) and self._group_delta(event, size * eps) <= delta:
            return size * eps
        found = self._group_search(event, delta, size * eps if math.isfinite(eps) else 0.0, cap)
        if found is not None:
            return found
        if math.isfinite(cap):
            return cap
        raise OutsideRegimeError(f"{self.name} certifies no group epsilon for size={size} at delta={delta:g}")

    def _group_search(self, event: E.GroupEvent, delta: float, low: float, cap: float) -> float | None:
        """A certified total epsilon in (low, min(cap, EPS_CEILING)]: doubling, then bisection to 1e-9 relative."""
        ceiling = min(cap, EPS_CEILING)
        high = max(low * 2.0, 1e-6)
        while high < ceiling and self._group_delta(event, high) > delta:
            low, high = high, high * 2.0
        if high >= ceiling:
            high = ceiling
            if self._group_delta(event, high) > delta:
                return None
        while high - low > 1e-9 * high:
            mid = 0.5 * (low + high)
            if self._group_delta(event, mid) <= delta:
                high = mid
            else:
                low = mid
        return high


class VariationRatioAccountant(_PairAccountant):
    """The numerical variation-ratio bound (the package default).

    A single release costs the smallest eps with D_{e^eps}(P || Q) <= delta for the
    dominating pair of Theorem 1 (Theorem 2 when gamma < 1), computed exactly up to
    directed rounding; a linked release is one release of the product randomizer; a
    group of s items uses Lemma 1, (s eps, s e^(s eps) delta); compositions use the basic
    theorem with delta split equally over the rounds.

    Parameters
    ----------
    rtol : float, in [1e-12, 1e-2]
        Relative precision of the returned epsilons (always rounded up).

    References
    ----------
    segmented-multimessage-shuffle.txt §3.3 Theorem 1, §5.1.1 Theorem 2, §5.1.2 Lemma 3,
    §3.1 Lemma 1.

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> from shuffledp.accounting.events import ShuffleEvent
    >>> from shuffledp.accounting.events import GroupEvent
    >>> ev = ShuffleEvent(VariationRatio.from_ldp(2.0), 10_000)
    >>> round(VariationRatioAccountant().compose(GroupEvent(ev, 2)).get_epsilon(1e-6), 4)
    0.2427
    """

    name = "variation-ratio"

    def __init__(self, rtol: float = DEFAULT_RTOL) -> None:
        super().__init__()
        self.rtol = check_rtol(rtol)

    def _sampled_supported(self, event: E.SampledEvent) -> None:
        """Sampled rounds: the privacy-profile transform of the round's proven pair (`shuffledp.accounting.subsampling`)."""

    def _single_epsilon(self, event: E.ShuffleEvent, delta: float) -> float:
        return release_epsilon(event.params, event.n, delta, event.gamma, self.rtol)

    def _single_divergence(self, event: E.ShuffleEvent, tail_mass: float) -> Callable[[float], float]:
        return release_divergence(event.params, event.n, event.gamma, tail_mass).upper

    def get_epsilon_lower(self, delta: float) -> float:
        """Lower bound for one (possibly linked) release (segmented paper Proposition 1).

        The exact eps of the same pair built from randomizers that attain it (beta capped
        at q - 1), rounded down: for generic eps0-LDP it equals the upper bound up to rtol.

        Parameters
        ----------
        delta : float, in [1e-300, 1)

        Raises
        ------
        UnsupportedEventError
            If more than one release is recorded (or a group event).

        References
        ----------
        segmented-multimessage-shuffle.txt §5.1.3 Proposition 1.

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> from shuffledp.accounting.events import ShuffleEvent
        >>> acc = VariationRatioAccountant().compose(ShuffleEvent(VariationRatio.from_ldp(2.0), 10_000))
        >>> acc.get_epsilon_lower(1e-6) <= acc.get_epsilon(1e-6)
        True
        """
        single = _release(self.event)
        if single is None:
            raise UnsupportedEventError("VariationRatioAccountant has a lower bound for one release only")
        delta = check_delta(delta)
        if isinstance(single, E.PersonalizedShuffleEvent):
            if single.family != "binary-rr":
                raise UnsupportedEventError(f"the personalized lower bound: binary RR only, got {single.family!r}")
            budgets, counts = single.others_groups()
            lower = personalized_shuffle_epsilon_lower
            return lower(single.victim_epsilon, budgets, delta, rtol=self.rtol, others_counts=counts)
        if isinstance(single, E.SampledEvent):
            raise UnsupportedEventError("no lower bound is offered for a sampled round")
        if isinstance(single.params, (BlanketDecomposition, PoissonReport)):
            raise UnsupportedEventError(
                "no lower bound is offered for a randomizer's own BlanketDecomposition: the attainable pair bounds "
                "some randomizer with those parameters from below, not this one; shuffledp.shuffle_audit computes "
                "the exact value for a discrete randomizer at small n"
            )
        return variation_ratio_epsilon_lower(single.params, single.n, delta, gamma=single.gamma, rtol=self.rtol)


class CloneAccountant(_PairAccountant):
    """Feldman-McMillan-Talwar clone bounds (``stronger=True``: SODA 2023; else FOCS 2021).

    Dominating pair with C ~ Binom(n - 1, r) clones, r = 2/(e^eps0 + 1) (stronger) or
    e^-eps0, and the victim's D ~ Bernoulli(e^eps0/(e^eps0 + 1)). Applies to generic
    eps0-LDP releases (``VariationRatio.from_ldp``) with gamma = 1; groups and
    compositions as in `VariationRatioAccountant`.

    Parameters
    ----------
    stronger : bool
        Stronger clones (SODA 2023) or clones (FOCS 2021).
    rtol : float, in [1e-12, 1e-2]
        Relative precision of the returned epsilons (rounded up).

    Raises
    ------
    UnsupportedEventError
        From `compose`, unless the release is an eps0-LDP population (finite p, q <= p) with gamma = 1;
        it is then priced at eps0 = log p, ignoring a tighter beta.

    References
    ----------
    Feldman, McMillan, Talwar, FOCS 2021 and SODA 2023 (not in /work/shared/papers); their
    closed form is pic-usenix25.txt §5.2 Eq. (1).

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> from shuffledp.accounting.events import ShuffleEvent
    >>> ev = ShuffleEvent(VariationRatio.from_ldp(2.0), 10_000)
    >>> round(CloneAccountant(stronger=False).compose(ev).get_epsilon(1e-6), 4)
    0.155
    >>> CloneAccountant().supports(ShuffleEvent(VariationRatio.from_pq(3.0, 0.5, 5.0), 100))  # q > p: not one LDP population
    False
    """

    def __init__(self, stronger: bool = True, rtol: float = DEFAULT_RTOL) -> None:
        super().__init__()
        self.stronger, self.rtol = bool(stronger), check_rtol(rtol)
        self.name = "stronger-clones" if self.stronger else "clones"

    def _single_supported(self, event: E.ShuffleEvent) -> None:
        if ldp_level(event.params) is None or event.gamma != 1.0:
            raise UnsupportedEventError(
                f"method {self.name!r} applies only to eps0-LDP populations (finite p, q <= p) with gamma = 1 "
                f"(got {event.params!r}, gamma={event.gamma:g})"
            )

    def _personalized_supported(self, event: E.PersonalizedShuffleEvent) -> None:
        if not self.stronger:
            raise UnsupportedEventError(
                "personalized releases are priced by the stronger-clone (Poisson-binomial) bound: use CloneAccountant()"
            )

    def _single_epsilon(self, event: E.ShuffleEvent, delta: float) -> float:
        bound = stronger_clone_epsilon if self.stronger else clone_epsilon
        return bound(ldp_level(event.params), event.n, delta, rtol=self.rtol)

    def _single_divergence(self, event: E.ShuffleEvent, tail_mass: float) -> Callable[[float], float]:
        pair = DominatingPair.clones(ldp_level(event.params), event.n, stronger=self.stronger)
        return PairDivergence(pair, tail_mass).upper


class ClosedFormAccountant(Accountant):
    """One closed-form bound of `shuffledp.accounting.closed_form`, for single releases.

    Parameters
    ----------
    method : str
        A registered upper-bound method (`available_methods`),
        e.g. "pic-eq1", "fmt-closed-form", "blanket-bennett", "variation-ratio-closed-form".

    Raises
    ------
    PrivacyParameterError
        If ``method`` is not a registered upper bound.
    UnsupportedEventError
        From `compose` for compositions, groups, gamma < 1, or non-generic parameters
        with a generic-only method; from `get_delta` always.
    OutsideRegimeError
        From `get_epsilon` outside the formula's regime.

    References
    ----------
    pic-usenix25.txt §5.2 Theorem 5.2, Eq. (1) ("pic-eq1"); the others in
    `closed_form`.

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> from shuffledp.accounting.events import ShuffleEvent
    >>> acc = ClosedFormAccountant("pic-eq1").compose(ShuffleEvent(VariationRatio.from_ldp(2.0), 10_000))
    >>> round(acc.get_epsilon(1e-6), 4)
    0.3982
    """

    def __init__(self, method: str) -> None:
        super().__init__()
        self.method = lookup_method(method, "upper")
        self.name = method

    def _check_supported(self, event: E.Event) -> None:
        single = _single(event)
        if isinstance(event, E.PersonalizedShuffleEvent):
            raise UnsupportedEventError(
                f"the closed form {self.name!r} assumes one budget for all users: price a PersonalizedShuffleEvent "
                "with VariationRatioAccountant or CloneAccountant"
            )
        if single is None:
            raise UnsupportedEventError(f"the closed form {self.name!r} prices one release, not {type(event).__name__}")
        if self.method.generic_only and ldp_level(single.params) is None:
            raise UnsupportedEventError(f"method {self.name!r} applies only to eps0-LDP populations (finite p, q <= p)")
        if single.gamma != 1.0:
            raise UnsupportedEventError(f"the closed form {self.name!r} has no random-count (gamma < 1) version")

    def _epsilon(self, event: E.Event, delta: float) -> float:
        single = _single(event)
        params = single.params
        if isinstance(params, BlanketDecomposition):  # the closed forms read (p, beta, q): the generic relaxation
            params = VariationRatio.from_ldp(params.eps0)
        if isinstance(params, PoissonReport):
            raise UnsupportedEventError(f"the closed form {self.name!r} has no version for the Poisson randomizer")
        value = self.method.func(params, single.n, delta)
        if not math.isfinite(value):
            raise OutsideRegimeError(f"{self.name} is outside its regime at n={single.n}, delta={delta:g}")
        return value

    def _delta(self, event: E.Event, epsilon: float) -> float:
        raise UnsupportedEventError(f"the closed form {self.name!r} gives epsilon at a delta, not delta at an epsilon")


def accountant_for(method: str) -> Accountant:
    """The accountant behind a `shuffle_epsilon` method name.

    Parameters
    ----------
    method : str
        An upper bound of the table (`available_methods`): "variation-ratio", "clones",
        "stronger-clones" or a closed form; its `BoundMethod` says which accountant prices it.

    Returns
    -------
    Accountant

    Raises
    ------
    PrivacyParameterError
        If ``method`` is not a registered upper bound.

    Examples
    --------
    >>> type(accountant_for("pic-eq1")).__name__, accountant_for("clones").name
    ('ClosedFormAccountant', 'clones')
    """
    entry = lookup_method(method, "upper")  # the one table (`shuffledp.accounting.registry`)
    if entry.accountant == "variation-ratio":
        return VariationRatioAccountant()
    if entry.accountant in ("clones", "stronger-clones"):
        return CloneAccountant(stronger=entry.accountant == "stronger-clones")
    return ClosedFormAccountant(method)


def calibrate(
    make_event: Callable[[float], E.Event],
    target_epsilon: float,
    target_delta: float,
    *,
    accountant: Accountant | None = None,
    bracket: tuple[float, float] = (1e-3, 50.0),
    context: str = "",
) -> float:
    """Largest x in ``bracket`` whose event ``make_event(x)`` costs at most ``target_epsilon`` at ``target_delta``.

    The one inverse behind every budget search (local epsilon, composed local epsilon, a
    protocol's per-group budget): ``make_event`` must describe a release whose cost does not
    decrease in x.  The answer is verified to meet the target (never above it) and, where
    the cost is continuous in x, lies within a relative 1e-7 of reaching it.  An x whose
    event the accountant certifies nothing for counts as too large.

    Parameters
    ----------
    make_event : callable float -> Event
        The release at parameter x (typically a local epsilon, then x in [1e-6, 700]).
    target_epsilon : float, > 0
    target_delta : float, in [1e-300, 1)
    accountant : Accountant, optional
        Prices the events (a fresh copy per evaluation); default `VariationRatioAccountant`.
    bracket : (float, float), 0 < lo < hi finite
        Search interval for x.
    context : str
        Appended to the error message.

    Returns
    -------
    float
        The bracket's upper end when even it meets the target, else the largest x found.

    Raises
    ------
    PrivacyParameterError
        If an argument is out of range, or even the bracket's lower end misses the target.

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> from shuffledp.accounting.events import ShuffleEvent
    >>> eps0 = calibrate(lambda e: ShuffleEvent(VariationRatio.from_ldp(e), 10_000), 1.0, 1e-6)
    >>> round(eps0, 3)
    5.47
    >>> acc = VariationRatioAccountant().compose(ShuffleEvent(VariationRatio.from_ldp(eps0), 10_000))
    >>> acc.get_epsilon(1e-6) <= 1.0
    True
    """
    target = check_nonnegative(target_epsilon, "target_epsilon")
    if target <= 0.0:
        raise PrivacyParameterError(f"target_epsilon must be > 0, got {target_epsilon!r}")
    delta = check_delta(target_delta, "target_delta")
    try:
        lo, hi = (float(b) for b in bracket)
    except (TypeError, ValueError):
        lo = hi = math.nan
    if not (math.isfinite(lo) and math.isfinite(hi) and 0.0 < lo < hi):
        raise PrivacyParameterError(f"bracket must be (lo, hi) with 0 < lo < hi finite, got {bracket!r}")
    if not callable(make_event):
        raise PrivacyParameterError(f"make_event must be a callable x -> event, got {type(make_event).__name__}")
    if accountant is not None and not isinstance(accountant, Accountant):
        raise PrivacyParameterError(f"accountant must be an Accountant instance, got {accountant!r}")
    base = accountant if accountant is not None else VariationRatioAccountant()
    reasons: list[str] = []

    def cost(x: float) -> float:
        try:
            return base.fresh().compose(make_event(x)).get_epsilon(delta)
        except OutsideRegimeError as exc:
            reasons.append(str(exc))
            return math.inf

    try:
        return largest_within(cost, target, lo, hi, context=context)
    except PrivacyParameterError:
        if reasons and not math.isfinite(cost(lo)):  # nothing certified even at the low end: say why, not "increase n"
            raise OutsideRegimeError(
                f"no local epsilon in [{lo:g}, {hi:g}] reaches target_epsilon={target:g}"
                f"{' ' + context if context else ''}: {base.name} certifies nothing even at eps0={lo:g}: {reasons[-1]}"
            ) from None
        raise


__all__ = [
    "Accountant",
    "CloneAccountant",
    "ClosedFormAccountant",
    "VariationRatioAccountant",
    "accountant_for",
    "calibrate",
]
