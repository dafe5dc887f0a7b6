"""Privacy events: immutable descriptions of what a protocol released (priced by accountants).

The shape follows Google's dp-accounting: an event says *what happened*, an accountant
(`shuffledp.accounting.accountants`) says *what it cost*.  Events are frozen
dataclasses: hashable, comparable, and serialisable with `event_to_json` /
`event_from_json`, so a protocol's ledger can store them and price them later with
the tightest accountant that supports them.

* `ShuffleEvent` — one shuffled release of ``n`` reports whose victim's randomizer has
  the variation-ratio parameters ``params`` (segmented paper Theorem 1); ``gamma`` < 1 when
  each of the n - 1 blanket slots is used with probability gamma (Theorem 2).
* `LinkedEvent` — the same key or report linked across ``count`` releases (PIC §8):
  the adversary joins them into one message of the k-fold product randomizer.
* `SampledEvent` — a round that shuffles a secret sample of m of N users (fixed-size:
  substitution neighbours; Poisson: add/remove neighbours).
* `GroupEvent` — group privacy over ``size`` items (segmented paper Lemma 1, Theorem 3).
* `PersonalizedShuffleEvent` — one shuffled release where every user randomizes at their own
  public budget (E-APES paper §3); priced for one victim by the Poisson-binomial clone bound.
* `ComposedEvent`, `SelfComposedEvent` — sequential composition, rounds may
  differ in n and parameters.

Examples
--------
>>> from shuffledp.params import VariationRatio
>>> ev = ShuffleEvent(VariationRatio.from_ldp(2.0), 10_000)
>>> event_from_json(event_to_json(SelfComposedEvent(ev, 80))) == SelfComposedEvent(ev, 80)
True
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from shuffledp._util.validation import check_positive_int, check_probability
from shuffledp.accounting._checks import check_budgets, check_family, check_n, check_victim_budget
from shuffledp.accounting._rounding import N_MAX, N_RANGE
from shuffledp.errors import PrivacyParameterError, UnsupportedEventError
from shuffledp.params import BlanketDecomposition, PoissonReport, VariationRatio, check_release_params


@dataclass(frozen=True)
class ShuffleEvent:
    """One shuffled release of ``n`` reports; the victim's randomizer has parameters ``params``.

    Priced through the dominating pair its parameters prove (`shuffledp.accounting.release`):
    the variation-ratio pair for generic eps0-LDP or p = infinity `VariationRatio`, the
    three-class pair of `shuffledp.accounting.blanket` for a randomizer's own
    `BlanketDecomposition`.

    Parameters
    ----------
    params : VariationRatio or BlanketDecomposition
        The victim's randomizer (``R.amplification_parameters()``).
    n : int, in [1, 2^53]
        Reports shuffled together, the victim's included (n' of PIC §5.2).
    gamma : float, in [0, 1]
        Probability that each of the other n - 1 blanket slots is used (segmented paper
        Theorem 2); 1 for one report per user.

    Raises
    ------
    UnprovenBoundError
        For a `VariationRatio` no proof covers (finite p, beta below tanh(log(p)/2)).
    PrivacyParameterError
        If ``params`` has another type, or ``n`` or ``gamma`` is out of range.

    References
    ----------
    segmented-multimessage-shuffle.txt §3.3 Theorem 1 and §5.1.1 Theorem 2;
    pic-usenix25.txt §5.2 Theorem 5.2 (n' = |G - C|).

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> ev = ShuffleEvent(VariationRatio.from_ldp(2.0), 10_000)
    >>> ev.n, ev.gamma
    (10000, 1.0)
    >>> ShuffleEvent(VariationRatio.from_ldp(2.0), 0)
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyParameterError: n must be an integer in [1, 2^53]; got 0
    """

    params: VariationRatio | BlanketDecomposition | PoissonReport
    n: int
    gamma: float = 1.0

    def __post_init__(self) -> None:
        check_release_params(self.params)
        object.__setattr__(self, "n", check_n(self.n))
        object.__setattr__(self, "gamma", check_probability(self.gamma, "gamma", open_low=False, open_high=False))


@dataclass(frozen=True)
class LinkedEvent:
    """``count`` shuffled releases that the adversary links through one reused key (PIC §8).

    Joined by key, the k = ``count`` reports are one message of the k-fold product
    randomizer, so the event prices as one release with parameters
    ``params.linked(k)``: for finite p the `BlanketDecomposition` (k eps0, beta_k) with
    beta_k = min(1 - (1 - beta)^k, tanh(k eps0/2)); for p = infinity p^k, q^k and beta_k.

    Parameters
    ----------
    event : ShuffleEvent
        The release repeated with the same key.
    count : int, >= 1
        Number of linked releases k.

    Raises
    ------
    PrivacyParameterError
        If ``event`` is not a ShuffleEvent or ``count`` < 1.

    References
    ----------
    pic-usenix25.txt §8 ("Multiple executions and reuse keys": k eps-LDP messages).

    Examples
    --------
    >>> import math
    >>> from shuffledp.params import VariationRatio
    >>> ev = ShuffleEvent(VariationRatio.from_ldp(1.0), 10_000)
    >>> linked = LinkedEvent(ev, 3).as_shuffle_event().params
    >>> type(linked).__name__, round(linked.eps0, 6), round(linked.beta, 4)
    ('BlanketDecomposition', 3.0, 0.8444)
    """

    event: ShuffleEvent
    count: int

    def __post_init__(self) -> None:
        if not isinstance(self.event, ShuffleEvent):
            raise PrivacyParameterError(f"LinkedEvent links a ShuffleEvent, got {type(self.event).__name__}")
        object.__setattr__(self, "count", check_positive_int(self.count, "count"))

    def as_shuffle_event(self) -> ShuffleEvent:
        """The single release of the count-fold product randomizer (`VariationRatio.linked`).

        Returns
        -------
        ShuffleEvent
            Same ``n`` and ``gamma``, parameters ``event.params.linked(count)``.

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> ev = ShuffleEvent(VariationRatio.from_ldp(1.0), 100)
        >>> LinkedEvent(ev, 1).as_shuffle_event() == ev
        True
        """
        return ShuffleEvent(self.event.params.linked(self.count), self.event.n, self.event.gamma)


#: Sampling schemes of `SampledEvent` and the neighbouring relation each is priced under.
SAMPLING_SCHEMES = ("fixed-size", "poisson")


@dataclass(frozen=True)
class SampledEvent:
    """One round that samples ``sample_size`` of ``population`` users and shuffles the sample's reports (``event``).

    * ``scheme="fixed-size"``: a uniformly random set of exactly m = ``sample_size`` users;
      **substitution** neighbours (one user's data replaced).  Priced by the privacy-profile
      transform of Balle, Barthe and Gaboardi (NeurIPS 2018, Theorem 10):
      delta'(e') = gamma delta(log(1 + (e^e' - 1)/gamma)), gamma = m/N.
    * ``scheme="poisson"``: each user independently with probability gamma = m/N;
      **add/remove** neighbours (one user's record present or absent).  Priced by the
      Poisson-subsampling dominating pairs of Zhu, Dong and Wang (AISTATS 2022), both
      directions.  A removed record's device still sends a dummy report indistinguishable
      from a real one, so the number of reports does not reveal who was sampled.

    Secret sample: the amplification holds only if the server cannot tell who was sampled
    (the shuffler draws the sample, or every user sends a real or a dummy report each round).
    Rounds under different neighbouring relations (Poisson rounds with fixed-size or
    unsampled rounds) are not composed together.

    Parameters
    ----------
    event : ShuffleEvent or LinkedEvent
        The shuffled release of the sample; its n (the reports the victim hides among, n' of
        PIC §5.2) is at most ``sample_size``.
    sample_size : int, in [1, population]
        m: users sampled per round (the expected number for "poisson").
    population : int, in [1, 2^53]
        N: users the sample is drawn from.
    scheme : {"fixed-size", "poisson"}

    Raises
    ------
    PrivacyParameterError
        If ``event`` is not a shuffle event, a count is out of range, event.n > sample_size,
        or the scheme is unknown.

    References
    ----------
    Balle, Barthe, Gaboardi, NeurIPS 2018, Theorem 10; Zhu, Dong, Wang, AISTATS 2022 (not in
    /work/shared/papers); pic-usenix25.txt §7.3 (s = 10,000 of N = 50,000 users per round).

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> ev = SampledEvent(ShuffleEvent(VariationRatio.from_ldp(2.0), 10_000), 10_000, 50_000)
    >>> ev.rate, ev.scheme, event_from_json(event_to_json(ev)) == ev
    (0.2, 'fixed-size', True)
    """

    event: ShuffleEvent | LinkedEvent
    sample_size: int
    population: int
    scheme: str = "fixed-size"

    def __post_init__(self) -> None:
        if not isinstance(self.event, (ShuffleEvent, LinkedEvent)):
            raise PrivacyParameterError(
                f"SampledEvent samples a shuffled release (ShuffleEvent or LinkedEvent), got {type(self.event).__name__}"
            )
        population = check_n(self.population, "population")
        m = check_positive_int(self.sample_size, "sample_size")
        if m > population:
            raise PrivacyParameterError(f"sample_size must be at most population={population}, got sample_size={m}")
        n = self.event.event.n if isinstance(self.event, LinkedEvent) else self.event.n
        if n > m:
            raise PrivacyParameterError(
                f"the shuffled sample holds sample_size={m} reports, so its event's n must be at most {m}, got n={n}"
            )
        if self.scheme not in SAMPLING_SCHEMES:
            raise PrivacyParameterError(
                f"sampling scheme must be one of {', '.join(SAMPLING_SCHEMES)}, got {self.scheme!r}"
            )
        object.__setattr__(self, "population", population)
        object.__setattr__(self, "sample_size", m)

    @property
    def rate(self) -> float:
        """gamma = sample_size / population (the sampling probability of each user)."""
        return self.sample_size / self.population

    @property
    def n(self) -> int:
        """Reports the victim hides among in the shuffled sample (the shuffle event's n)."""
        return self.shuffle_event().n

    @property
    def relation(self) -> str:
        """The neighbouring relation the round is priced under: "substitution" or "add/remove"."""
        return "substitution" if self.scheme == "fixed-size" else "add/remove"

    def normalised(self) -> SampledEvent:
        """The same round with its shuffled release as one `ShuffleEvent` (what accountants price)."""
        inner = self.shuffle_event()
        return self if inner is self.event else SampledEvent(inner, self.sample_size, self.population, self.scheme)

    def shuffle_event(self) -> ShuffleEvent:
        """The shuffled release of the sample as one `ShuffleEvent` (a linked one as its product release)."""
        return self.event.as_shuffle_event() if isinstance(self.event, LinkedEvent) else self.event


@dataclass(frozen=True)
class GroupEvent:
    """Privacy of ``event`` for datasets that differ in ``size`` items of one user.

    Group composition (segmented Lemma 1): an (eps, delta)-DP mechanism is
    (s eps, s e^(s eps) delta)-indistinguishable on datasets differing in s = ``size`` entries.

    Parameters
    ----------
    event : Event
        Any privacy event (accountants price groups of one, possibly linked, release).
    size : int, >= 1
        Number of differing items s.

    Raises
    ------
    PrivacyParameterError
        If ``event`` is not a privacy event or ``size`` < 1.

    References
    ----------
    segmented-multimessage-shuffle.txt §3.1 Lemma 1 (used in §5.1.3 Theorem 3).

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> GroupEvent(ShuffleEvent(VariationRatio.from_ldp(1.0), 100), 3).size
    3
    """

    event: Event
    size: int

    def __post_init__(self) -> None:
        check_event(self.event, "GroupEvent.event")
        object.__setattr__(self, "size", check_positive_int(self.size, "size"))


@dataclass(frozen=True)
class ComposedEvent:
    """Sequential (possibly adaptive) composition of ``events``, which may differ in n and parameters.

    Parameters
    ----------
    events : sequence of Event, non-empty
        The composed events, in order (stored as a tuple).

    Raises
    ------
    PrivacyParameterError
        If ``events`` is empty or holds something that is not a privacy event.

    References
    ----------
    pic-usenix25.txt §8 (sequential composition of executions with fresh keys).

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> a = ShuffleEvent(VariationRatio.from_ldp(1.0), 10_000)
    >>> b = ShuffleEvent(VariationRatio.from_ldp(2.0), 5_000)
    >>> len(ComposedEvent([a, b]).events)
    2
    """

    events: tuple[Event, ...]

    def __post_init__(self) -> None:
        try:
            events = tuple(self.events)
        except TypeError:
            raise PrivacyParameterError(
                f"ComposedEvent takes a sequence of events, got {type(self.events).__name__}"
            ) from None
        if not events:
            raise PrivacyParameterError("ComposedEvent needs at least one event, got none")
        for i, event in enumerate(events):
            check_event(event, f"ComposedEvent.events[{i}]")
        object.__setattr__(self, "events", events)

    def parts(self) -> list[tuple[Event, int]]:
        """The composed events as (event, repetitions) pairs, in order."""
        return [(event, 1) for event in self.events]


@dataclass(frozen=True)
class SelfComposedEvent:
    """``count`` independent repetitions of ``event`` (rounds with fresh keys, PIC §8).

    Parameters
    ----------
    event : Event
        The repeated event.
    count : int, >= 1
        Number of repetitions k.

    Raises
    ------
    PrivacyParameterError
        If ``event`` is not a privacy event or ``count`` < 1.

    References
    ----------
    pic-usenix25.txt §8 ("Multiple executions and reuse keys").

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> SelfComposedEvent(ShuffleEvent(VariationRatio.from_ldp(1.0), 100), 80).count
    80
    """

    event: Event
    count: int

    def __post_init__(self) -> None:
        check_event(self.event, "SelfComposedEvent.event")
        object.__setattr__(self, "count", check_positive_int(self.count, "count"))

    def parts(self) -> list[tuple[Event, int]]:
        """The one repeated event as an (event, repetitions) pair."""
        return [(self.event, self.count)]


@dataclass(frozen=True)
class PersonalizedShuffleEvent:
    """One shuffled release where each user applies ``family`` at their own budget; the victim's is ``victim_epsilon``.

    The other users are stored compactly as ``others``: (budget, count) pairs, budgets distinct and
    ascending (`from_budgets` builds it from one budget per user).  Priced by the rigorous
    Poisson-binomial clone bound of `shuffledp.accounting.personalized`.

    Parameters
    ----------
    victim_epsilon : float, in [1e-6, 700]
        The victim's local budget (one number).
    others : sequence of (float, int)
        (budget, number of other users with that budget); the budgets in [1e-6, 700].
    family : {"binary-rr", "k-rr", "laplace"}
        The randomizer family every user applies.
    k : int or None
        Alphabet size for "k-rr" (None for the other families).

    Raises
    ------
    PrivacyParameterError
        For a budget out of range or not a number (bools and strings are refused), a count
        < 1, more than 2^53 users, or a k given with a family other than "k-rr".
    ShapeError
        For an array ``victim_epsilon``.
    NoCloneBoundError
        For a family without a clone bound (or "k-rr" without k).

    References
    ----------
    personalized-shuffle-eapes.txt §3, Definition 4 and Theorem 1 (the clone decomposition).

    Examples
    --------
    >>> ev = PersonalizedShuffleEvent.from_budgets(1.0, [0.5, 2.0, 0.5])
    >>> ev.others, ev.n
    (((0.5, 2), (2.0, 1)), 4)
    """

    victim_epsilon: float
    others: tuple[tuple[float, int], ...]
    family: str = "binary-rr"
    k: int | None = None

    def __post_init__(self) -> None:
        check_family(self.family, self.k)
        object.__setattr__(self, "k", None if self.k is None else int(self.k))
        object.__setattr__(
            self, "victim_epsilon", check_victim_budget(self.victim_epsilon, "one event per victim", "victim_epsilon")
        )
        try:
            pairs = [(budget, count) for budget, count in self.others]
        except (TypeError, ValueError):
            raise PrivacyParameterError(
                f"others must be a sequence of (budget, count) pairs, got {self.others!r:.80}"
            ) from None
        budgets = check_budgets([b for b, _ in pairs], "others budget")
        merged: dict[float, int] = {}
        for budget, (_, count) in zip(budgets, pairs):
            merged[float(budget)] = merged.get(float(budget), 0) + check_positive_int(count, "others count")
        object.__setattr__(self, "others", tuple(sorted(merged.items())))
        if self.n > N_MAX:
            raise N_RANGE.error("n", self.n)

    @classmethod
    def from_budgets(
        cls, victim_epsilon: float, others_epsilon: Any, family: str = "binary-rr", k: int | None = None
    ) -> PersonalizedShuffleEvent:
        """The event for a victim among other users with budgets ``others_epsilon`` (one per user).

        Parameters
        ----------
        victim_epsilon : float, > 0
        others_epsilon : array_like of float, > 0
            One budget per other user (may be empty).
        family, k : as the class

        Returns
        -------
        PersonalizedShuffleEvent

        Examples
        --------
        >>> PersonalizedShuffleEvent.from_budgets(0.5, []).n
        1
        """
        values, counts = np.unique(check_budgets(others_epsilon, "others_epsilon"), return_counts=True)
        return cls(victim_epsilon, tuple(zip(values.tolist(), counts.tolist())), family, k)

    @property
    def n(self) -> int:
        """Users in the release, the victim included."""
        return 1 + sum(count for _, count in self.others)

    def others_groups(self) -> tuple[np.ndarray, np.ndarray]:
        """The other users as (distinct budgets ascending, counts): what the accountants price.

        Examples
        --------
        >>> PersonalizedShuffleEvent(1.0, ((0.5, 2**40),)).others_groups()
        (array([0.5]), array([1099511627776]))
        """
        values = np.asarray([b for b, _ in self.others], dtype=np.float64)
        return values, np.asarray([c for _, c in self.others], dtype=np.int64)

    def others_budgets(self) -> np.ndarray:
        """One budget per other user (ascending): one float per user, prefer `others_groups` for large n."""
        if not self.others:
            return np.zeros(0)
        values, counts = zip(*self.others)
        return np.repeat(np.asarray(values, dtype=np.float64), counts)


Event = (
    ShuffleEvent
    | LinkedEvent
    | SampledEvent
    | GroupEvent
    | ComposedEvent
    | SelfComposedEvent
    | PersonalizedShuffleEvent
)
_EVENT_TYPES = (
    ShuffleEvent,
    LinkedEvent,
    SampledEvent,
    GroupEvent,
    ComposedEvent,
    SelfComposedEvent,
    PersonalizedShuffleEvent,
)


def check_event(event: Any, name: str) -> None:
    """Raise PrivacyParameterError naming ``name`` unless ``event`` is a privacy event."""
    if not isinstance(event, _EVENT_TYPES):
        allowed = ", ".join(t.__name__ for t in _EVENT_TYPES)
        raise PrivacyParameterError(f"{name} must be a privacy event ({allowed}), got {type(event).__name__}")


def relations(event: Event) -> set[str]:
    """The neighbouring relations the rounds of ``event`` are priced under ("substitution", "add/remove").

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> ev = ShuffleEvent(VariationRatio.from_ldp(1.0), 100)
    >>> sorted(relations(ComposedEvent([ev, SampledEvent(ev, 100, 1_000, "poisson")])))
    ['add/remove', 'substitution']
    """
    if isinstance(event, SampledEvent):
        return {event.relation}
    if isinstance(event, (GroupEvent, SelfComposedEvent)):
        return relations(event.event)
    if isinstance(event, ComposedEvent):
        return set().union(*(relations(e) for e in event.events))
    return {"substitution"}


def check_one_relation(events: list[Event]) -> None:
    """Raise UnsupportedEventError unless every round of ``events`` is priced under one neighbouring relation."""
    if len(set().union(*(relations(e) for e in events))) > 1:
        raise UnsupportedEventError(
            "rounds priced under different neighbouring relations are not composed: Poisson-sampled rounds "
            "(add/remove) with fixed-size or unsampled rounds (substitution); sample every round by one scheme"
        )


def _number(value: float) -> float | str:
    return value if math.isfinite(value) else "inf"


def event_to_dict(event: Event) -> dict[str, Any]:
    """A JSON-ready dict of ``event`` (``math.inf`` parameters as the string "inf").

    Parameters
    ----------
    event : Event
        Any privacy event.

    Returns
    -------
    dict
        ``{"type": ..., ...}`` with nested events as nested dicts.

    Raises
    ------
    PrivacyParameterError
        If ``event`` is not a privacy event.

    Examples
    --------
    >>> import math
    >>> from shuffledp.params import VariationRatio
    >>> d = event_to_dict(ShuffleEvent(VariationRatio(p=math.inf, beta=0.5, q0=2.0, q1=2.0), 10))
    >>> d["type"], d["n"], d["params"]["p"]
    ('shuffle', 10, 'inf')
    """
    check_event(event, "event")
    if isinstance(event, ShuffleEvent):
        p = event.params
        if isinstance(p, BlanketDecomposition):
            params = {"eps0": p.eps0, "beta": p.beta, "common_ratio": p.common_ratio}
        elif isinstance(p, PoissonReport):
            params = {"lam": p.lam, "d": p.d}
        else:
            params = {"p": _number(p.p), "beta": p.beta, "q0": _number(p.q0), "q1": _number(p.q1)}
        return {"type": "shuffle", "params": params, "n": event.n, "gamma": event.gamma}
    if isinstance(event, LinkedEvent):
        return {"type": "linked", "event": event_to_dict(event.event), "count": event.count}
    if isinstance(event, SampledEvent):
        return {
            "type": "sampled",
            "event": event_to_dict(event.event),
            "sample_size": event.sample_size,
            "population": event.population,
            "scheme": event.scheme,
        }
    if isinstance(event, GroupEvent):
        return {"type": "group", "event": event_to_dict(event.event), "size": event.size}
    if isinstance(event, SelfComposedEvent):
        return {"type": "self_composed", "event": event_to_dict(event.event), "count": event.count}
    if isinstance(event, PersonalizedShuffleEvent):
        return {
            "type": "personalized",
            "victim_epsilon": event.victim_epsilon,
            "others": [[b, c] for b, c in event.others],
            "family": event.family,
            "k": event.k,
        }
    return {"type": "composed", "events": [event_to_dict(e) for e in event.events]}


def event_from_dict(data: dict[str, Any]) -> Event:
    """The event described by `event_to_dict`'s output.

    Parameters
    ----------
    data : dict
        A dict with a ``"type"`` in shuffle, linked, sampled, group, self_composed, composed, personalized.

    Returns
    -------
    Event

    Raises
    ------
    PrivacyParameterError
        If the dict is malformed, its type unknown or its values out of range.

    Examples
    --------
    >>> ev = event_from_dict({"type": "shuffle", "params": {"eps0": 1.0, "beta": 0.3, "common_ratio": 1.0}, "n": 50})
    >>> ev.n, ev.params.beta, ev.params.common_ratio
    (50, 0.3, 1.0)
    >>> event_from_dict({"type": "laplace"})
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyParameterError: unknown event type 'laplace'; allowed: shuffle, linked, sampled, group, self_composed, composed, personalized
    """
    try:
        kind = data["type"]
        if kind == "shuffle":
            values = {k: float(v) for k, v in data["params"].items()}
            if "eps0" in values:
                params = BlanketDecomposition(**values)
            elif "lam" in values:
                params = PoissonReport(values["lam"], int(values["d"]))
            else:
                params = VariationRatio(**values)
            return ShuffleEvent(params, data["n"], data.get("gamma", 1.0))
        if kind == "linked":
            return LinkedEvent(event_from_dict(data["event"]), data["count"])
        if kind == "sampled":
            return SampledEvent(
                event_from_dict(data["event"]),
                data["sample_size"],
                data["population"],
                data.get("scheme", "fixed-size"),
            )
        if kind == "group":
            return GroupEvent(event_from_dict(data["event"]), data["size"])
        if kind == "self_composed":
            return SelfComposedEvent(event_from_dict(data["event"]), data["count"])
        if kind == "composed":
            return ComposedEvent(tuple(event_from_dict(e) for e in data["events"]))
        if kind == "personalized":
            others = tuple((b, c) for b, c in data["others"])
            return PersonalizedShuffleEvent(
                data["victim_epsilon"], others, data.get("family", "binary-rr"), data.get("k")
            )
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, PrivacyParameterError):
            raise
        raise PrivacyParameterError(f"malformed event description {data!r}: {exc}") from None
    raise PrivacyParameterError(
        f"unknown event type {kind!r}; allowed: shuffle, linked, sampled, group, self_composed, composed, personalized"
    )


def event_to_json(event: Event) -> str:
    """``event`` as a JSON string (deterministic: sorted keys).

    Parameters
    ----------
    event : Event

    Returns
    -------
    str

    Raises
    ------
    PrivacyParameterError
        If ``event`` is not a privacy event.

    Examples
    --------
    >>> from shuffledp.params import BlanketDecomposition
    >>> event_to_json(LinkedEvent(ShuffleEvent(BlanketDecomposition(eps0=1.0, beta=0.3, common_ratio=1.0), 5), 2))
    '{"count": 2, "event": {"gamma": 1.0, "n": 5, "params": {"beta": 0.3, "common_ratio": 1.0, "eps0": 1.0}, "type": "shuffle"}, "type": "linked"}'
    """
    return json.dumps(event_to_dict(event), sort_keys=True)


def event_from_json(text: str) -> Event:
    """The event encoded by `event_to_json`.

    Parameters
    ----------
    text : str
        A JSON object as written by `event_to_json`.

    Returns
    -------
    Event

    Raises
    ------
    PrivacyParameterError
        If ``text`` is not valid JSON, not an object, or not a valid event description.

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> ev = GroupEvent(ShuffleEvent(VariationRatio.from_ldp(1.0), 100), 2)
    >>> event_from_json(event_to_json(ev)) == ev
    True
    """
    if not isinstance(text, (str, bytes, bytearray)):
        raise PrivacyParameterError(f"event JSON must be a string, got {type(text).__name__}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PrivacyParameterError(f"event JSON is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise PrivacyParameterError(f"event JSON must be an object, got {type(data).__name__}")
    return event_from_dict(data)


__all__ = [
    "check_event",
    "check_one_relation",
    "relations",
    "ComposedEvent",
    "Event",
    "GroupEvent",
    "LinkedEvent",
    "PersonalizedShuffleEvent",
    "SAMPLING_SCHEMES",
    "SampledEvent",
    "SelfComposedEvent",
    "ShuffleEvent",
    "event_from_dict",
    "event_from_json",
    "event_to_dict",
    "event_to_json",
]
