"""The privacy ledger of a protocol run: per round and group, what was released, as events.

Each `LedgerRow` records one group of one round of PIC (pic-usenix25 §5): the
reports received and accepted, the assumed corrupted users |C|, the users exposed after
the computation |U|, the board's bucket rule, the resulting anonymous population n'
(§5.2-5.3, `anonymous_population`), the randomizer with its local epsilon and
parameters, delta (default 0.01 / n_i as in §7) and key reuse (§8).  Its
`LedgerRow.event` is the privacy event of that release; the ledger prices rows with
an accountant (the variation-ratio bound by default) and shows PIC's Eq. 1 beside it, and
composes a user's rounds (`PrivacyLedger.user_event`) for its total guarantee.

**The bucket rule.**  A user who downloads only its board bucket (the first b bits of
SHA-256 of its pseudonym, Remark 2) tells the server which bucket holds its output, so its
report hides only among that bucket's reports.  The conservative n' is then the smallest
bucket's count minus |C| and |U| (every corrupted or exposed user may sit in the victim's
bucket).  b = 0 (full download) leaves n' = |valid| - |C| - |U|.

**Too few valid reports.**  Planning refuses counts that leave no anonymous user
(`anonymous_population`), but a round that has happened must still be priced: when |C| + |U|
reach the pool (most reports failed to decrypt, say), the worst case is the victim alone among
corrupted and exposed users, so n' = 1 and the group keeps only its local guarantee.  A ledger
that refused here would stop a round that one attacker can starve of valid reports.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from shuffledp._util.numbers import json_text, json_value, number
from shuffledp._util.validation import check_epsilon, check_positive_int
from shuffledp.accounting import events as E
from shuffledp.accounting.accountants import (
    Accountant,
    ClosedFormAccountant,
    VariationRatioAccountant,
    calibrate,
)
from shuffledp.accounting.bounds import check_delta
from shuffledp.accounting.pld_accountant import PLDAccountant
from shuffledp.accounting.population import anonymous_population
from shuffledp.accounting.release import bound_name
from shuffledp.errors import OutsideRegimeError, PrivacyParameterError
from shuffledp.params import VariationRatio


def _label(value: Any, name: str) -> str:
    """A non-empty text label (an int round id is accepted as its decimal text)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)) or str(value) == "":
        raise PrivacyParameterError(f"{name} must be a non-empty string, got {value!r}")
    return str(value)


def _reasons(invalid: Any) -> dict[str, int]:
    """Rejected reports by reason: a dict of text -> count >= 0."""
    if invalid is None:
        return {}
    if not isinstance(invalid, dict):
        raise PrivacyParameterError(f"invalid must be a dict reason -> count, got {type(invalid).__name__}")
    return {
        _label(k, "invalid reason"): check_positive_int(v, f"invalid[{k!r}]", minimum=0) for k, v in invalid.items()
    }


def anonymous_count(
    valid: int, corrupted: int, exposed: int, bucket_bits: int = 0, smallest_bucket: int | None = None
) -> tuple[int, str]:
    """n' of one group and the rule that gave it (module docstring): `anonymous_population`, the one rule for
    n', applied to the pool the victim hides in.

    Full download (b = 0): n' = valid - |C| - |U|; bucketed download (b > 0):
    n' = min(valid, smallest bucket) - |C| - |U|.

    Parameters
    ----------
    valid : int, >= 0
        Accepted reports of the group.
    corrupted : int, >= 0
        |C|, assumed corrupted users.
    exposed : int, >= 0
        |U|, users exposed after the computation.
    bucket_bits : int, >= 0
        b, the board's bucket bits (0: full download).
    smallest_bucket : int, >= 0, required when bucket_bits > 0
        Fewest entries in any bucket.

    Returns
    -------
    (int, str)
        n' >= 1 and the rule applied; 1 (the victim alone, local guarantee only) when
        |C| + |U| >= the pool (module docstring).

    Raises
    ------
    PrivacyParameterError
        If a count is negative or ``smallest_bucket`` is missing for b > 0.

    References
    ----------
    pic-usenix25.txt §5.1 Remark 2 (retrieval), §5.2 Theorem 5.2 and §5.3 (n' = |G - C - U|).

    Examples
    --------
    >>> anonymous_count(100, 5, 3)[0]
    92
    >>> anonymous_count(100, 5, 3, bucket_bits=2, smallest_bucket=20)[0]
    12
    >>> anonymous_count(5, 3, 3)
    (1, "full download: n' = valid - |C| - |U|; |C| + |U| = 6 >= the pool of 5: the victim alone, n' = 1")
    """
    valid = check_positive_int(valid, "valid", minimum=0)
    bucket_bits = check_positive_int(bucket_bits, "bucket_bits", minimum=0)
    if bucket_bits > 16:
        raise PrivacyParameterError(f"bucket_bits must lie in [0, 16], got {bucket_bits}")
    corrupted = check_positive_int(corrupted, "corrupted", minimum=0)
    exposed = check_positive_int(exposed, "exposed", minimum=0)
    if bucket_bits == 0:
        return _population(valid, corrupted, exposed, "full download: n' = valid - |C| - |U|")
    if smallest_bucket is None:
        raise PrivacyParameterError(
            "bucketed retrieval (bucket_bits > 0) needs smallest_bucket, the fewest entries in a bucket"
        )
    pool = min(valid, check_positive_int(smallest_bucket, "smallest_bucket", minimum=0))
    return _population(
        pool, corrupted, exposed, f"bucketed download (b={bucket_bits}): n' = smallest bucket - |C| - |U|"
    )


def _population(pool: int, corrupted: int, exposed: int, rule: str) -> tuple[int, str]:
    """(`anonymous_population` of the pool, ``rule``), or (1, ``rule`` saying why) when |C| + |U| fill the pool."""
    if corrupted + exposed >= pool:
        return 1, f"{rule}; |C| + |U| = {corrupted + exposed} >= the pool of {pool}: the victim alone, n' = 1"
    return anonymous_population(pool, corrupted, exposed), rule


@dataclass(frozen=True)
class LedgerRow:
    """One group of one round (see the module docstring).

    Parameters
    ----------
    round_id, group : str
        Identify the round and the group.
    randomizer : str
        Name of the local randomizer.
    local_epsilon : float
        Its local epsilon.
    params : VariationRatio
        Its amplification parameters.
    received, valid : int, 0 <= valid <= received
        Reports received and accepted.
    corrupted, exposed : int, >= 0
        |C| and |U|.
    bucket_bits : int, >= 0
    n_prime : int, >= 1
        n' from `anonymous_count`, with the ``rule`` that gave it.
    rule : str
    delta : float, in (0, 1)
    key_reuse : int, >= 1
        Rounds linked by one reused key (PIC §8).
    invalid : dict of str to int
        Rejected reports by reason.

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> ledger = PrivacyLedger()
    >>> row = ledger.record(round_id="r1", group="g1", randomizer="krr", local_epsilon=2.0,
    ...                     params=VariationRatio.from_ldp(2.0), received=10_000, valid=9_990, corrupted=10)
    >>> row.n_prime, row.delta
    (9980, 1e-06)
    """

    round_id: str
    group: str
    randomizer: str
    local_epsilon: float
    params: VariationRatio
    received: int
    valid: int
    corrupted: int
    exposed: int
    bucket_bits: int
    n_prime: int
    rule: str
    delta: float
    key_reuse: int = 1
    invalid: dict[str, int] = field(default_factory=dict)
    smallest_bucket: int | None = None

    @property
    def event(self) -> E.Event:
        """The release as a privacy event: n' reports of the randomizer, linked if a key was reused.

        Returns
        -------
        ShuffleEvent or LinkedEvent

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> ledger = PrivacyLedger()
        >>> row = ledger.record(round_id="r1", group="g1", randomizer="krr", local_epsilon=2.0,
        ...                     params=VariationRatio.from_ldp(2.0), received=10_000, valid=9_990, corrupted=10)
        >>> row.event.n
        9980
        """
        release = E.ShuffleEvent(self.params, self.n_prime)
        return release if self.key_reuse == 1 else E.LinkedEvent(release, self.key_reuse)

    def epsilon_c(self, accountant: Accountant | None = None) -> float:
        """The amplified epsilon of this release at the row's delta.

        Parameters
        ----------
        accountant : Accountant, optional
            Default `VariationRatioAccountant`.

        Returns
        -------
        float

        Raises
        ------
        UnsupportedEventError
            If the accountant cannot price the event (OutsideRegimeError where it certifies nothing).

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> ledger = PrivacyLedger()
        >>> row = ledger.record(round_id="r1", group="g1", randomizer="krr", local_epsilon=2.0,
        ...                     params=VariationRatio.from_ldp(2.0), received=10_000, valid=9_990, corrupted=10)
        >>> round(row.epsilon_c(), 4)
        0.1145
        """
        base = accountant if accountant is not None else VariationRatioAccountant()
        return base.fresh().compose(self.event).get_epsilon(self.delta)

    def eq1_epsilon(self) -> float:
        """PIC's Eq. 1 (Theorem 5.2) for the same n', local epsilon and delta; ``math.inf`` outside its regime.

        With key reuse k, the local epsilon is k eps (PIC §8).

        References
        ----------
        pic-usenix25.txt §5.2 Eq. (1), §8.

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> ledger = PrivacyLedger()
        >>> row = ledger.record(round_id="r1", group="g1", randomizer="krr", local_epsilon=2.0,
        ...                     params=VariationRatio.from_ldp(2.0), received=10_000, valid=9_990, corrupted=10)
        >>> round(row.eq1_epsilon(), 4)
        0.3985
        """
        try:
            generic = E.ShuffleEvent(VariationRatio.from_ldp(self.local_epsilon * self.key_reuse), self.n_prime)
            return ClosedFormAccountant("pic-eq1").compose(generic).get_epsilon(self.delta)
        except OutsideRegimeError:
            return math.inf

    def to_dict(self) -> dict[str, Any]:
        """The row as a JSON-ready dict (params as in `event_to_dict`).

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> ledger = PrivacyLedger()
        >>> row = ledger.record(round_id="r1", group="g1", randomizer="krr", local_epsilon=2.0,
        ...                     params=VariationRatio.from_ldp(2.0), received=10_000, valid=9_990, corrupted=10)
        >>> row.to_dict()["params"]["beta"] == row.params.beta
        True
        """
        data = asdict(self)
        data["params"] = E.event_to_dict(E.ShuffleEvent(self.params, 1))["params"]
        return data


#: The note under `PrivacyLedger.table` when an epsilon is infinite (the cell holds only ``inf``).
_INFINITE_NOTE = "inf: the bound certifies nothing at this n' and delta (outside its regime)"


def _certified(price: Callable[[], float]) -> float:
    """An epsilon, or infinity where the accountant certifies nothing (outside its regime)."""
    try:
        return price()
    except OutsideRegimeError:
        return math.inf


class PrivacyLedger:
    """Per round and group privacy record of a protocol run; serialises to JSON, renders as a table.

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> ledger = PrivacyLedger()
    >>> row = ledger.record(round_id="r1", group="g1", randomizer="krr", local_epsilon=2.0,
    ...                     params=VariationRatio.from_ldp(2.0), received=10_000, valid=9_990, corrupted=10)
    >>> len(ledger.rows), round(ledger.user_epsilon("g1", 1e-6), 4)
    (1, 0.1145)
    """

    def __init__(self) -> None:
        self.rows: list[LedgerRow] = []

    def record(
        self,
        *,
        round_id: str,
        group: str,
        randomizer: str,
        local_epsilon: float,
        params: VariationRatio,
        received: int,
        valid: int,
        corrupted: int = 0,
        exposed: int = 0,
        bucket_bits: int = 0,
        smallest_bucket: int | None = None,
        delta: float | None = None,
        key_reuse: int = 1,
        invalid: dict[str, int] | None = None,
    ) -> LedgerRow:
        """Record one group of one round; n' follows the rules of the module docstring.

        Parameters
        ----------
        round_id, group, randomizer : str
        local_epsilon : float
        params : VariationRatio
        received : int, >= 0
        valid : int, in [0, received]
        corrupted, exposed : int, >= 0
        bucket_bits : int, >= 0
        smallest_bucket : int, >= 0, required when bucket_bits > 0
        delta : float, in (0, 1), optional
            Default 0.01 / received, as in PIC §7.
        key_reuse : int, >= 1
        invalid : dict of str to int, optional

        Returns
        -------
        LedgerRow
            The appended row.

        Raises
        ------
        PrivacyParameterError
            If a count is out of range, valid > received, or delta is not in (0, 1).

        References
        ----------
        pic-usenix25.txt §5.2-5.3 (n'), §7 (delta = 0.01 / n_i), §8 (key reuse).

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> ledger = PrivacyLedger()
        >>> row = ledger.record(round_id="r1", group="g1", randomizer="krr", local_epsilon=2.0,
        ...                     params=VariationRatio.from_ldp(2.0), received=10_000, valid=9_990, corrupted=10)
        >>> row.rule
        "full download: n' = valid - |C| - |U|"
        """
        round_id, group, randomizer = (
            _label(v, k) for k, v in (("round_id", round_id), ("group", group), ("randomizer", randomizer))
        )
        if any(r.round_id == round_id and r.group == group for r in self.rows):
            raise PrivacyParameterError(f"round_id={round_id!r}, group={group!r} is already in the ledger")
        local_epsilon = check_epsilon(local_epsilon, "local_epsilon")
        invalid = _reasons(invalid)
        received = check_positive_int(received, "received", minimum=0)
        valid = check_positive_int(valid, "valid", minimum=0)
        if valid > received:
            raise PrivacyParameterError(f"valid = {valid} exceeds received = {received}")
        n_prime, rule = anonymous_count(valid, corrupted, exposed, bucket_bits, smallest_bucket)
        delta = check_delta(delta if delta is not None else 0.01 / max(received, 1), "delta")
        row = LedgerRow(
            round_id=str(round_id),
            group=str(group),
            randomizer=randomizer,
            local_epsilon=float(local_epsilon),
            params=params,
            received=received,
            valid=int(valid),
            corrupted=int(corrupted),
            exposed=int(exposed),
            bucket_bits=int(bucket_bits),
            n_prime=n_prime,
            rule=rule,
            delta=delta,
            key_reuse=check_positive_int(key_reuse, "key_reuse"),
            invalid=invalid,
            smallest_bucket=smallest_bucket,
        )
        self.rows.append(row)
        return row

    def user_event(self, group: str) -> E.Event:
        """A member of ``group`` across every recorded round: the composition of its rows' events.

        Parameters
        ----------
        group : str

        Returns
        -------
        Event
            The single row's event, or a ComposedEvent of all of them.

        Raises
        ------
        PrivacyParameterError
            If no round was recorded for ``group``.

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> ledger = PrivacyLedger()
        >>> row = ledger.record(round_id="r1", group="g1", randomizer="krr", local_epsilon=2.0,
        ...                     params=VariationRatio.from_ldp(2.0), received=10_000, valid=9_990, corrupted=10)
        >>> _ = ledger.record(round_id="r2", group="g1", randomizer="krr", local_epsilon=2.0,
        ...                   params=VariationRatio.from_ldp(2.0), received=10_000, valid=10_000)
        >>> len(ledger.user_event("g1").events)
        2
        """
        events = [row.event for row in self.rows if row.group == str(group)]
        if not events:
            raise PrivacyParameterError(f"no round recorded for group {group!r}")
        return events[0] if len(events) == 1 else E.ComposedEvent(tuple(events))

    def user_epsilon(self, group: str, delta: float, accountant: Accountant | None = None) -> float:
        """Total epsilon of a member of ``group`` over all rounds (PLD composition by default).

        Parameters
        ----------
        group : str
        delta : float, in [1e-300, 1)
        accountant : Accountant, optional
            Default `PLDAccountant`.

        Returns
        -------
        float

        Raises
        ------
        PrivacyParameterError
            If no round was recorded for ``group`` or ``delta`` is out of range.
        UnsupportedEventError
            If the accountant cannot price the composition (CompositionError when the PLD
            certifies nothing).

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> ledger = PrivacyLedger()
        >>> row = ledger.record(round_id="r1", group="g1", randomizer="krr", local_epsilon=2.0,
        ...                     params=VariationRatio.from_ldp(2.0), received=10_000, valid=9_990, corrupted=10)
        >>> round(ledger.user_epsilon("g1", 1e-6), 4)
        0.1145
        """
        base = accountant if accountant is not None else PLDAccountant()
        return base.fresh().compose(self.user_event(group)).get_epsilon(delta)

    def to_dict(self) -> dict[str, Any]:
        """The ledger as a JSON-ready dict: each row with its ``epsilon_c``, the ``bound`` that priced it
        (`shuffledp.accounting.release.bound_name`) and ``eq1_epsilon``; an epsilon that nothing certifies
        (outside the bound's or Eq. 1's regime) is infinite, written "inf" (`shuffledp._util.numbers.json_value`).

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> ledger = PrivacyLedger()
        >>> row = ledger.record(round_id="r1", group="g1", randomizer="krr", local_epsilon=2.0,
        ...                     params=VariationRatio.from_ldp(2.0), received=10_000, valid=9_990, corrupted=10)
        >>> first = ledger.to_dict()["rows"][0]
        >>> round(first["epsilon_c"], 4), first["bound"]
        (0.1145, 'stronger-clone pair (generic eps0-LDP)')
        """
        rows = [
            {**row.to_dict(), "epsilon_c": _certified(row.epsilon_c), "bound": bound_name(row.params),
             "eq1_epsilon": row.eq1_epsilon()}
            for row in self.rows
        ]  # fmt: skip
        return json_value({"rows": rows})

    def to_json(self) -> str:
        """`to_dict` as a JSON string (sorted keys).

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> ledger = PrivacyLedger()
        >>> row = ledger.record(round_id="r1", group="g1", randomizer="krr", local_epsilon=2.0,
        ...                     params=VariationRatio.from_ldp(2.0), received=10_000, valid=9_990, corrupted=10)
        >>> PrivacyLedger.from_dict(json.loads(ledger.to_json())).rows == ledger.rows
        True
        """
        return json_text(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PrivacyLedger:
        """The ledger of `to_dict`'s output (the priced columns are dropped and recomputed on demand).

        Parameters
        ----------
        data : dict
            ``{"rows": [...]}``.

        Returns
        -------
        PrivacyLedger

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> ledger = PrivacyLedger()
        >>> row = ledger.record(round_id="r1", group="g1", randomizer="krr", local_epsilon=2.0,
        ...                     params=VariationRatio.from_ldp(2.0), received=10_000, valid=9_990, corrupted=10)
        >>> PrivacyLedger.from_dict(ledger.to_dict()).rows == ledger.rows
        True
        """
        if not isinstance(data, dict) or not isinstance(data.get("rows", []), list):
            raise PrivacyParameterError(f"a ledger is a dict with a list 'rows', got {type(data).__name__}")
        ledger = cls()
        for i, raw in enumerate(data.get("rows", [])):
            try:
                raw = {k: v for k, v in raw.items() if k not in ("epsilon_c", "bound", "eq1_epsilon")}
                params = E.event_from_dict({"type": "shuffle", "params": raw.pop("params"), "n": 1}).params
                fields = {k: raw[k] for k in ("round_id", "group", "randomizer", "local_epsilon", "received", "valid")}
                extra = {
                    k: raw[k]
                    for k in ("corrupted", "exposed", "bucket_bits", "delta", "key_reuse", "invalid")
                    if k in raw
                }
            except (AttributeError, KeyError, TypeError) as exc:
                raise PrivacyParameterError(f"ledger row {i} is malformed: {exc!r}") from None
            row = ledger.record(params=params, **fields, **extra, smallest_bucket=raw.get("smallest_bucket"))
            if (row.n_prime, row.rule) != (raw.get("n_prime"), raw.get("rule")):
                raise PrivacyParameterError(
                    f"ledger row {i}: stored n'={raw.get('n_prime')!r} does not follow from its counts"
                )
        return ledger

    @classmethod
    def from_json(cls, text: str) -> PrivacyLedger:
        """The ledger written by `to_json` (re-validated row by row)."""
        try:
            return cls.from_dict(json.loads(text))
        except (TypeError, json.JSONDecodeError) as exc:
            raise PrivacyParameterError(f"ledger JSON is not valid: {exc}") from None

    def table(self):
        """The ledger as a rich Table (one line per round and group).

        Returns
        -------
        rich.table.Table

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> ledger = PrivacyLedger()
        >>> row = ledger.record(round_id="r1", group="g1", randomizer="krr", local_epsilon=2.0,
        ...                     params=VariationRatio.from_ldp(2.0), received=10_000, valid=9_990, corrupted=10)
        >>> ledger.table().row_count
        1
        """
        from rich.table import Table

        priced = [(row, _certified(row.epsilon_c), row.eq1_epsilon()) for row in self.rows]
        table = Table(
            "round", "group", "randomizer", "eps_local", "valid", "|C|", "|U|", "n'", "delta", "eps_c", "Eq. 1",
            caption=_INFINITE_NOTE if any(math.isinf(e) for _, *eps in priced for e in eps) else None,
        )  # fmt: skip
        for row, eps_c, eq1 in priced:
            table.add_row(
                row.round_id,
                row.group,
                row.randomizer,
                number(row.local_epsilon, 4),
                number(row.valid),
                number(row.corrupted),
                number(row.exposed),
                number(row.n_prime),
                number(row.delta, 2),
                number(eps_c, 4),
                number(eq1, 4),
            )
        return table


def local_epsilon_for(
    target_epsilon: float,
    delta: float,
    n_prime: int,
    family: Callable[[float], Any],
    *,
    key_reuse: int = 1,
    bracket: tuple[float, float] = (1e-3, 50.0),
) -> float:
    """The server's per-group budget: the largest local epsilon whose release of n' reports
    (linked over ``key_reuse`` rounds) meets (target_epsilon, delta).

    Calibrates ``family(eps).shuffle_event(n_prime)`` (a LinkedEvent when key_reuse > 1)
    with `calibrate` and the variation-ratio accountant.

    Parameters
    ----------
    target_epsilon : float, > 0
    delta : float, in [1e-300, 1)
    n_prime : int, >= 1
        n', the anonymous reports of the group.
    family : callable float -> LocalRandomizer
    key_reuse : int, >= 1
    bracket : (float, float), 0 < lo < hi
        Search interval of the local epsilon.

    Returns
    -------
    float

    Raises
    ------
    PrivacyParameterError
        For an argument out of range, or when even the bracket's lower end misses the target.

    References
    ----------
    pic-usenix25.txt §5.2 Theorem 5.2, §8 (key reuse).

    Examples
    --------
    >>> from shuffledp.randomizers import KRandomizedResponse
    >>> eps = local_epsilon_for(1.0, 1e-6, 10_000, lambda e: KRandomizedResponse(e, 4))
    >>> eps_linked = local_epsilon_for(1.0, 1e-6, 10_000, lambda e: KRandomizedResponse(e, 4), key_reuse=3)
    >>> round(eps, 3), eps_linked < eps
    (5.48, True)
    """
    n_prime = check_positive_int(n_prime, "n_prime")
    key_reuse = check_positive_int(key_reuse, "key_reuse")

    def make(eps: float) -> E.Event:
        release = family(eps).shuffle_event(n_prime)
        return release if key_reuse == 1 else E.LinkedEvent(release, key_reuse)

    return calibrate(make, target_epsilon, delta, bracket=bracket, context=f"for n'={n_prime} at delta={delta:g}")


__all__ = ["LedgerRow", "PrivacyLedger", "anonymous_count", "local_epsilon_for"]
