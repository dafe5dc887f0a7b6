"""Algorithm 2 end to end, in process: levels (step 1), parameters (step 2), data (step 3).

`run_segmented` takes every user's set of s items and chosen privacy level, and
returns the analyzer's frequency estimate together with what each step used; every
level's user guarantee (Theorem 3, priced by the variation-ratio accountant) is recorded as
a `GroupEvent` and checked against its level.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from shuffledp._util.validation import check_positive_int, check_rng
from shuffledp.accounting.accountants import VariationRatioAccountant
from shuffledp.accounting.bounds import check_delta
from shuffledp.accounting.events import GroupEvent, event_to_dict
from shuffledp.accounting.segmented import check_blanket_rate, check_sampling_rate, user_event
from shuffledp.datasets.setvalued import check_item_sets
from shuffledp.errors import OutsideRegimeError, PrivacyParameterError, ProtocolError
from shuffledp.protocols.segmented._checks import check_levels
from shuffledp.protocols.segmented.analyzer import estimate_frequencies
from shuffledp.protocols.segmented.levels import LevelHistogram, aggregate_levels, level_indices
from shuffledp.protocols.segmented.messages import shuffle, user_messages
from shuffledp.protocols.segmented.optimizer import SegmentedParameters, optimize_parameters


@dataclass(frozen=True)
class SegmentedRun:
    """One run: the estimate W (length d), the level histogram, the parameters, and per-level events.

    Parameters
    ----------
    estimate : numpy.ndarray
        The analyzer's length-d frequency estimate W.
    histogram : LevelHistogram
        Step 1's level counts.
    parameters : SegmentedParameters
        Step 2's m and lambdas (with each level's epsilon).
    events : tuple of GroupEvent
        Each level's user event (Theorem 3).
    n_messages : int
        Number of shuffled messages.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> items = np.argsort(rng.random((1000, 8)), axis=1)[:, :2]
    >>> run = run_segmented(items, np.repeat([1.0, 2.0], 500), [1.0, 2.0], 1e-6, 8, 2, m=4.0, rng=rng)
    >>> [row["step"] for row in run.ledger()], all(row["within_level"] for row in run.ledger()[1:])
    (['levels', 'data', 'data'], True)
    """

    estimate: np.ndarray
    histogram: LevelHistogram
    parameters: SegmentedParameters
    events: tuple[GroupEvent, ...]
    n_messages: int

    def ledger(self) -> list[dict[str, Any]]:
        """The run's privacy record: step 1 (levels) and, per level, the user event, its epsilon and the check."""
        p, h = self.parameters, self.histogram
        used = h.usable_counts
        rows: list[dict[str, Any]] = [
            {
                "step": "levels",
                "epsilon_p": h.epsilon_p,
                "delta_p": h.delta_p,
                "local_epsilon": h.local_epsilon,
                "release": "anonymised levels" if h.epsilon_p is None else "shuffled k-RR histogram",
                "raw_counts": h.counts.tolist(),
                "counts": used.tolist(),
                "post_processing": None if h.epsilon_p is None else "projected onto counts >= 1 summing to n",
            }
        ]
        for level, raw, count, lam, eps, event in zip(p.levels, h.counts, used, p.lambdas, p.epsilons, self.events):
            rows.append(
                {
                    "step": "data",
                    "level": level,
                    "count": float(count),
                    "raw_count": float(raw),
                    "lambda": lam,
                    "m": p.m,
                    "delta": p.delta,
                    "event": event_to_dict(event),
                    "epsilon": eps,
                    "within_level": eps <= level,
                }
            )
        return rows


@functools.lru_cache(maxsize=1024)
def _price(event: GroupEvent, delta: float) -> float:
    """The event's epsilon at delta (variation-ratio accountant); cached, so repetitions re-use it."""
    try:
        return VariationRatioAccountant().compose(event).get_epsilon(delta)
    except OutsideRegimeError:
        return math.inf


def run_segmented(
    items: Any,
    user_levels: Any,
    levels: Sequence[float],
    delta: float,
    d: int,
    s: int,
    *,
    m: float | None = None,
    epsilon_p: float | None = None,
    delta_p: float | None = None,
    parameters: SegmentedParameters | None = None,
    rng: np.random.Generator | None = None,
) -> SegmentedRun:
    """Run Algorithm 2 on ``items`` ((n, s) item ids) with ``user_levels`` (each a value of ``levels``).

    ``parameters`` reuses an optimizer answer (e.g. across repetitions; it must be for these
    levels, d, s, n and ``delta``); otherwise step 2 runs on the step-1 counts (``m`` fixed or
    free).  ``delta`` is always the target: given parameters for another delta are refused
    (a ProtocolError), never silently re-targeted, and so is an ``m`` that differs from
    ``parameters.m`` (pass ``m=None`` with parameters).  Given parameters are always re-priced
    (each level's user event by the variation-ratio accountant, at ``delta``; cached across
    runs), so the run's ledger never carries an epsilon it did not compute; a level they break
    is a PrivacyParameterError.

    Parameters
    ----------
    items : array_like
        (n, s) distinct item ids in {0..d-1} per user (see `check_item_sets`).
    user_levels : array_like
        Each user's privacy level, a value of ``levels``.
    levels : sequence of float
        The menu E_1 < ... < E_K.
    delta : float, in (0, 1)
        Target delta of every level (given ``parameters`` must have been optimised for it).
    d : int, >= 2
        Number of items.
    s : int, in [1, d]
        Items per user.
    m : float or None, in (0, M_MAX]
        Fixed blanket rate for step 2; None lets the optimizer choose (or takes
        ``parameters.m``; a different value is refused).
    epsilon_p : float or None, in (0, 40]
        Budget of a DP level histogram in step 1; None counts the levels exactly.  The DP
        counts are unbiased estimates that can be negative: steps 2-3 use their projection
        onto {counts >= 1, sum = n} (`LevelHistogram.usable_counts`; post-processing, no
        privacy cost), and the ledger records both the raw and the projected counts.
    delta_p : float or None, in (0, 1)
        Delta of the DP level histogram (default 0.01 / n).
    parameters : SegmentedParameters or None
        Reuse these instead of running step 2.
    rng : numpy.random.Generator or None
        Source of randomness.

    Returns
    -------
    SegmentedRun
        The estimate and the record of every step.

    Raises
    ------
    ProtocolError
        If ``user_levels`` and ``items`` disagree on n, or ``parameters`` are for another setting
        (levels, d, s, n, delta or m) or are not a SegmentedParameters.
    PrivacyParameterError
        If the parameters break a level, or an argument is out of range.
    PrivacyLevelError
        For a malformed menu or a user level not on it.

    References
    ----------
    segmented-multimessage-shuffle.txt §5, Algorithm 2; Theorem 3.

    Examples
    --------
    Every user holds items {0, 1} of d = 4, so W estimates the frequencies (1, 1, 0, 0):

    >>> import numpy as np
    >>> items = np.tile([0, 1], (2000, 1))
    >>> run = run_segmented(items, np.full(2000, 1.0), [1.0], 1e-6, 4, 2, m=2.0, rng=np.random.default_rng(1))
    >>> bool(np.abs(run.estimate - [1, 1, 0, 0]).max() < 0.15), run.parameters.epsilons[0] <= 1.0
    (True, True)
    """
    rng = check_rng(rng)
    levels = check_levels(levels)
    delta = check_delta(delta)
    d = check_positive_int(d, "d", minimum=2)
    s = check_positive_int(s, "s")
    if m is not None:
        m = check_blanket_rate(m)
    if parameters is not None and not isinstance(parameters, SegmentedParameters):
        raise ProtocolError(
            f"parameters must be a SegmentedParameters (from optimize_parameters) or None, got {type(parameters).__name__}"
        )
    sets = check_item_sets(items, d, s)
    index = level_indices(user_levels, levels)
    if index.size != sets.shape[0]:
        raise ProtocolError(f"user_levels must give one level per user ({sets.shape[0]}), got {index.size}")
    n = sets.shape[0]
    histogram = aggregate_levels(index, len(levels), epsilon_p=epsilon_p, delta_p=delta_p, rng=rng)
    counts = histogram.usable_counts  # DP estimates projected onto counts >= 1 summing to n
    priced = parameters is None
    if parameters is None:
        parameters = optimize_parameters(levels, delta, counts, d, s, m, n_users=n)
    elif (parameters.levels, parameters.d, parameters.s, parameters.n_users, parameters.delta) != (
        levels,
        d,
        s,
        n,
        delta,
    ):
        raise ProtocolError(
            f"parameters were optimised for levels={parameters.levels}, d={parameters.d}, s={parameters.s}, "
            f"n_users={parameters.n_users}, delta={parameters.delta!r}; this run has levels={levels}, d={d}, s={s}, "
            f"n_users={n}, delta={delta!r}"
        )
    elif m is not None and m != parameters.m:
        raise ProtocolError(
            f"m={m!r} disagrees with parameters.m={parameters.m!r}: pass m=None to use the parameters' m"
        )
    mm = check_blanket_rate(parameters.m)
    lambdas = np.array([check_sampling_rate(v, "lambdas") for v in parameters.lambdas])
    events = tuple(user_event(lam, d, n, mm, s) for lam in lambdas)
    if not priced:
        epsilons = tuple(_price(event, parameters.delta) for event in events)
        parameters = replace(parameters, epsilons=epsilons)
    for level, eps in zip(levels, parameters.epsilons):
        if not eps <= level:
            raise PrivacyParameterError(
                f"parameters break level {level:g}: its users' epsilon is {eps:.6g} at delta={parameters.delta:g}"
            )
    signal, blankets = user_messages(sets, index, lambdas, mm, d, rng)
    shuffled = shuffle(signal, blankets, rng=rng)
    estimate = estimate_frequencies(shuffled, d, counts, lambdas, n, mm)
    return SegmentedRun(estimate, histogram, parameters, events, int(shuffled.size))


__all__ = ["SegmentedRun", "run_segmented"]
