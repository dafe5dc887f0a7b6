"""Privacy events: immutable descriptions of what a protocol released (priced by accountants).

The shape follows Google's dp-accounting: an event says *what happened*, an accountant
(:mod:`shuffledp.accounting.accountants`) says *what it cost*.  Events are frozen
dataclasses: hashable, comparable, and serialisable with :func:`event_to_json` /
:func:`event_from_json`, so a protocol's ledger can store them and price them later with
the tightest accountant that supports them.

* :class:`ShuffleEvent` — one shuffled release of ``n`` reports whose victim's randomizer has
  the variation-ratio parameters ``params`` (segmented paper Theorem 1); ``gamma`` < 1 when
  each of the n - 1 blanket slots is used with probability gamma (Theorem 2).
* :class:`LinkedEvent` — the same key or report linked across ``count`` releases (PIC §8):
  the adversary joins them into one message of the k-fold product randomizer.
* :class:`GroupEvent` — group privacy over ``size`` items (segmented paper Lemma 1, Theorem 3).
* :class:`ComposedEvent`, :class:`SelfComposedEvent` — sequential composition, rounds may
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
from typing import Any, Union

from shuffledp._util.validation import check_positive_int, check_probability
from shuffledp.errors import PrivacyParameterError
from shuffledp.params import VariationRatio

#: Largest number of reports: counts up to 2^53 are exact in float64.
_N_MAX = 2**53


@dataclass(frozen=True)
class ShuffleEvent:
    """One shuffled release of ``n`` reports; the victim's randomizer has parameters ``params``.

    Parameters
    ----------
    params : VariationRatio
        (p, beta, q0, q1) of the victim's randomizer (``R.amplification_parameters()``).
    n : int
        Reports shuffled together, the victim's included (n' of PIC §5.2), in [1, 2^53].
    gamma : float
        Probability in [0, 1] that each of the other n - 1 blanket slots is used (segmented
        paper Theorem 2); 1 for one report per user.
    """

    params: VariationRatio
    n: int
    gamma: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.params, VariationRatio):
            raise PrivacyParameterError(f"params must be a VariationRatio, got {type(self.params).__name__}")
        n = check_positive_int(self.n, "n")
        if n > _N_MAX:
            raise PrivacyParameterError(f"n must be at most 2^53 = {_N_MAX}, got n={n}")
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "gamma", check_probability(self.gamma, "gamma", open_low=False, open_high=False))


@dataclass(frozen=True)
class LinkedEvent:
    """``count`` shuffled releases that the adversary links through one reused key (PIC §8).

    Equivalent to one release of the product randomizer: :meth:`as_shuffle_event` uses
    :meth:`VariationRatio.linked`.
    """

    event: ShuffleEvent
    count: int

    def __post_init__(self) -> None:
        if not isinstance(self.event, ShuffleEvent):
            raise PrivacyParameterError(f"LinkedEvent links a ShuffleEvent, got {type(self.event).__name__}")
        object.__setattr__(self, "count", check_positive_int(self.count, "count"))

    def as_shuffle_event(self) -> ShuffleEvent:
        """The single release of the count-fold product randomizer."""
        return ShuffleEvent(self.event.params.linked(self.count), self.event.n, self.event.gamma)


@dataclass(frozen=True)
class GroupEvent:
    """Privacy of ``event`` for datasets that differ in ``size`` items of one user (segmented Lemma 1)."""

    event: "Event"
    size: int

    def __post_init__(self) -> None:
        _check_event(self.event, "GroupEvent.event")
        object.__setattr__(self, "size", check_positive_int(self.size, "size"))


@dataclass(frozen=True)
class ComposedEvent:
    """Sequential (possibly adaptive) composition of ``events``, which may differ in n and parameters."""

    events: tuple["Event", ...]

    def __post_init__(self) -> None:
        events = tuple(self.events)
        if not events:
            raise PrivacyParameterError("ComposedEvent needs at least one event, got none")
        for i, event in enumerate(events):
            _check_event(event, f"ComposedEvent.events[{i}]")
        object.__setattr__(self, "events", events)


@dataclass(frozen=True)
class SelfComposedEvent:
    """``count`` independent repetitions of ``event`` (rounds with fresh keys, PIC §8)."""

    event: "Event"
    count: int

    def __post_init__(self) -> None:
        _check_event(self.event, "SelfComposedEvent.event")
        object.__setattr__(self, "count", check_positive_int(self.count, "count"))


Event = Union[ShuffleEvent, LinkedEvent, GroupEvent, ComposedEvent, SelfComposedEvent]
_EVENT_TYPES = (ShuffleEvent, LinkedEvent, GroupEvent, ComposedEvent, SelfComposedEvent)


def _check_event(event: Any, name: str) -> None:
    if not isinstance(event, _EVENT_TYPES):
        allowed = ", ".join(t.__name__ for t in _EVENT_TYPES)
        raise PrivacyParameterError(f"{name} must be a privacy event ({allowed}), got {type(event).__name__}")


def _number(value: float) -> float | str:
    return value if math.isfinite(value) else "inf"


def event_to_dict(event: Event) -> dict[str, Any]:
    """A JSON-ready dict of ``event`` (``math.inf`` parameters as the string "inf")."""
    _check_event(event, "event")
    if isinstance(event, ShuffleEvent):
        p = event.params
        params = {"p": _number(p.p), "beta": p.beta, "q0": _number(p.q0), "q1": _number(p.q1)}
        return {"type": "shuffle", "params": params, "n": event.n, "gamma": event.gamma}
    if isinstance(event, LinkedEvent):
        return {"type": "linked", "event": event_to_dict(event.event), "count": event.count}
    if isinstance(event, GroupEvent):
        return {"type": "group", "event": event_to_dict(event.event), "size": event.size}
    if isinstance(event, SelfComposedEvent):
        return {"type": "self_composed", "event": event_to_dict(event.event), "count": event.count}
    return {"type": "composed", "events": [event_to_dict(e) for e in event.events]}


def event_from_dict(data: dict[str, Any]) -> Event:
    """The event described by :func:`event_to_dict`'s output; a malformed dict is a named error."""
    try:
        kind = data["type"]
        if kind == "shuffle":
            params = VariationRatio(**{k: float(v) for k, v in data["params"].items()})
            return ShuffleEvent(params, data["n"], data.get("gamma", 1.0))
        if kind == "linked":
            return LinkedEvent(event_from_dict(data["event"]), data["count"])
        if kind == "group":
            return GroupEvent(event_from_dict(data["event"]), data["size"])
        if kind == "self_composed":
            return SelfComposedEvent(event_from_dict(data["event"]), data["count"])
        if kind == "composed":
            return ComposedEvent(tuple(event_from_dict(e) for e in data["events"]))
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, PrivacyParameterError):
            raise
        raise PrivacyParameterError(f"malformed event description {data!r}: {exc}") from None
    raise PrivacyParameterError(
        f"unknown event type {kind!r}; allowed: shuffle, linked, group, self_composed, composed"
    )


def event_to_json(event: Event) -> str:
    """``event`` as a JSON string (deterministic: sorted keys)."""
    return json.dumps(event_to_dict(event), sort_keys=True)


def event_from_json(text: str) -> Event:
    """The event encoded by :func:`event_to_json`."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PrivacyParameterError(f"event JSON is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise PrivacyParameterError(f"event JSON must be an object, got {type(data).__name__}")
    return event_from_dict(data)


__all__ = [
    "ComposedEvent",
    "Event",
    "GroupEvent",
    "LinkedEvent",
    "SelfComposedEvent",
    "ShuffleEvent",
    "event_from_dict",
    "event_from_json",
    "event_to_dict",
    "event_to_json",
]
