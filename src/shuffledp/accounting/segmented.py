"""Accounting of the segmented multi-message shuffle protocol (segmented paper §5.1).

Algorithm 2: every user reports each of its s items with probability lambda_k (the
Poisson randomizer, Eq. 2) and sends Binom(ceil(m), m / ceil(m)) blanket messages,
uniform over the d items.

* `poisson_item_parameters` — Lemma 3: p = infinity, beta = lambda, q = d lambda.
* `item_event` — one item of one user: the ``n_users * ceil(m)`` blanket slots of
  Algorithm 2, each used with probability gamma = m / ceil(m), priced as a `PoissonReport`
  (three counts: see "Which pair" below; Theorem 2's two counts are optimistic for d >= 3).
* `user_event` / `user_epsilon` — Theorem 3: group privacy (Lemma 1) over the
  s items, as ``GroupEvent(item_event, s)`` priced by `VariationRatioAccountant`.
* `theorem3_guarantee` — the theorem's statement itself: (s eps', s e^(s eps') delta').
  For s = 1 the accountant prices the release itself, (eps', delta'): no group is formed,
  and the theorem's s e^(s eps') delta' (Lemma 1 read literally at s = 1) would only loosen
  the bound that Proposition 1 shows exact.
* `level_constraint_met` — Eq. 7: D_{e^(E/s)}(P || Q) <= delta / (s e^E).
* `proposition1_lower` — Proposition 1's lower bound (s = 1): the two-count pair.

**Slots (a reading of the paper).**  Theorem 3 writes n' = n ceil(m) for the pair
P^{q/gamma, n'}, whose blanket count is Binom(n' - 1, .): one slot fewer than the
n ceil(m) blanket calls that Theorem 2 counts (the victim's own blankets are
input-independent and hide it as well as anyone's), and one fewer than Proposition 1's
n' = n ceil(m) + 1.  We use Theorem 2's count, n ceil(m) + 1 participants, which
Proposition 1 shows is exact for s = 1 (upper and lower bound coincide); the literal
n' = n ceil(m) gives a slightly larger epsilon and is available as ``slots="theorem3"``.

**Which pair (docs/which-bound.md).**  Theorem 2 with Lemma 3's (p = inf, beta = lambda,
q = d lambda) prices only the counts on the victim's item and the neighbouring one, and treats
a blanket slot that lands on one of the other d - 2 items like an unused one.  Those blankets
are visible, and with the number of slots public their count tells how many blankets landed on
the two items, hence whether the victim sent a message: for d >= 3 the pair is below the
exact divergence of Algorithm 2 (lambda = 0.3, d = 3, two users, m = 1: 0.133 against 0.037
at any large eps, by exact enumeration in the tests).  `item_event` therefore prices a
`PoissonReport`: the three counts (victim's item, neighbouring item, any other item), through
`shuffledp.accounting.blanket`, which conditions on the count of the third kind.  The two-count
pair remains a valid *lower* bound (`proposition1_lower`): it is a post-processing of the real
output.
"""

from __future__ import annotations

import math

from shuffledp._util.validation import Interval, check_nonnegative, check_positive_int, check_probability
from shuffledp.accounting._rounding import N_MAX
from shuffledp.accounting.accountants import Accountant, VariationRatioAccountant
from shuffledp.accounting.bounds import check_delta
from shuffledp.accounting.composition import group_composition
from shuffledp.accounting.dominating_pair import DominatingPair, pair_epsilon
from shuffledp.accounting.events import GroupEvent, ShuffleEvent
from shuffledp.accounting.release import release_divergence
from shuffledp.accounting.variation_ratio import DEFAULT_RTOL
from shuffledp.errors import PrivacyParameterError
from shuffledp.params import PoissonReport, VariationRatio
from shuffledp.randomizers.categorical import PoissonRandomizer

#: Largest blanket rate m (messages per user) accepted.
M_MAX = 1.0e4
#: Smallest blanket rate accepted: one blanket per million users (the optimizer's m is 0.3-20 in §6;
#: far below it the binomial pmfs of the engine underflow, m ~ 1e-305 overflowed scipy's beta function).
M_FLOOR = 1.0e-6
#: The blanket rates accepted, [`M_FLOOR`, `M_MAX`].
M_RANGE = Interval(M_FLOOR, M_MAX)
#: Ways to count the blanket slots (module docstring).
SLOT_RULES = ("theorem2", "theorem3")


def check_blanket_rate(m: float, name: str = "m") -> float:
    """The expected blanket messages per user, a finite number in [M_FLOOR, M_MAX].

    Parameters
    ----------
    m : float, in [M_FLOOR, M_MAX] = [1e-6, 1e4]
        Expected number of blanket messages each user sends (Algorithm 2's m).
    name : str
        The parameter name quoted in the error message.

    Returns
    -------
    float
        ``m`` as a float.

    Raises
    ------
    PrivacyParameterError
        If ``m`` is not a finite number in [M_FLOOR, M_MAX].

    Examples
    --------
    >>> check_blanket_rate(2.5)
    2.5
    >>> check_blanket_rate(0)
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyParameterError: m (blanket messages per user) must be a number in [1e-6, 10000]; got 0
    """
    return M_RANGE.check(m, f"{name} (blanket messages per user)")


def check_sampling_rate(lam: float, name: str = "lam") -> float:
    """A Poisson sampling rate lambda in (0, 1].

    Parameters
    ----------
    lam : float, in (0, 1]
        Probability lambda that a user reports each of its items (Eq. 2).
    name : str
        The parameter name quoted in the error message.

    Returns
    -------
    float
        ``lam`` as a float.

    Raises
    ------
    PrivacyParameterError
        If ``lam`` is not in (0, 1].

    Examples
    --------
    >>> check_sampling_rate(0.3)
    0.3
    >>> check_sampling_rate(1.5)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyParameterError: lam (Poisson sampling rate) must ...
    """
    return check_probability(lam, f"{name} (Poisson sampling rate)", open_low=True, open_high=False)


def poisson_item_parameters(lam: float, d: int) -> VariationRatio:
    """Lemma 3: the Poisson randomizer of rate ``lam`` on d items has p = inf, beta = lam, q = d lam (>= 1).

    Parameters
    ----------
    lam : float, in (0, 1]
        Poisson sampling rate lambda.
    d : int, >= 2
        Number of items in the domain.

    Returns
    -------
    VariationRatio
        (p, beta, q) = (inf, lambda, max(1, d lambda)): the paper's two-count description,
        kept for Proposition 1's lower bound; `item_event` prices the three counts instead
        (module docstring, "Which pair").

    Raises
    ------
    PrivacyParameterError
        If ``lam`` is not in (0, 1] or ``d`` < 2.

    References
    ----------
    segmented-multimessage-shuffle.txt §5.1, Lemma 3.

    Examples
    --------
    >>> vr = poisson_item_parameters(0.5, 10)
    >>> vr.p, vr.beta, vr.q0
    (inf, 0.5, 5.0)
    >>> poisson_item_parameters(0.05, 10).q0  # lambda < 1/d: q raised to 1
    1.0
    """
    lam = check_sampling_rate(lam)
    return PoissonRandomizer(lam, check_positive_int(d, "d", minimum=2)).item_amplification_parameters()


def blanket_slots(n_users: int, m: float) -> tuple[int, float]:
    """Algorithm 2's blanket calls: (n_users * ceil(m) slots, each used with gamma = m / ceil(m)).

    Parameters
    ----------
    n_users : int, >= 1
        Number of users.
    m : float, in (0, M_MAX]
        Expected blanket messages per user.

    Returns
    -------
    (int, float)
        The number of blanket calls n_users ceil(m) and the probability
        gamma = m / ceil(m) that each call sends a message.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range, or if n_users ceil(m) + 1 reaches 2^53.

    References
    ----------
    segmented-multimessage-shuffle.txt §5.1, Algorithm 2.

    Examples
    --------
    >>> calls, gamma = blanket_slots(1000, 2.5)
    >>> calls, round(gamma, 6), round(calls * gamma, 6)  # expected blankets n m
    (3000, 0.833333, 2500.0)
    """
    n_users = check_positive_int(n_users, "n_users")
    m = check_blanket_rate(m)
    calls = math.ceil(m)
    if n_users * calls + 1 > N_MAX:
        raise PrivacyParameterError(f"n_users * ceil(m) must be below 2^53, got n_users={n_users}, m={m:g}")
    return n_users * calls, m / calls


def item_event(lam: float, d: int, n_users: int, m: float, *, slots: str = "theorem2") -> ShuffleEvent:
    """One item of one user shuffled with all blankets (Theorem 2 with Lemma 3's parameters).

    Parameters
    ----------
    lam : float, in (0, 1]
        Poisson sampling rate lambda.
    d : int, >= 2
        Number of items.
    n_users : int, >= 1
        Number of users.
    m : float, in (0, M_MAX]
        Expected blanket messages per user.
    slots : {"theorem2", "theorem3"}
        Participant count: n_users ceil(m) + 1 (Theorem 2, default) or n_users ceil(m)
        (Theorem 3 read literally); see the module docstring.

    Returns
    -------
    ShuffleEvent
        ``ShuffleEvent(PoissonReport(lam, d), participants, gamma)``: the three counts of the
        victim's item, the neighbouring item and the other items (module docstring, "Which pair").

    Raises
    ------
    PrivacyParameterError
        For an argument out of range or an unknown ``slots``.

    References
    ----------
    segmented-multimessage-shuffle.txt §5.1, Theorem 2 and Lemma 3.

    Examples
    --------
    >>> event = item_event(0.5, 10, 1000, 2.5)
    >>> event.n, round(event.gamma, 6)
    (3001, 0.833333)
    >>> item_event(0.5, 10, 1000, 2.5, slots="theorem3").n
    3000
    >>> item_event(0.08, 10, 1000, 1.5).params
    PoissonReport(lam=0.08, d=10)
    """
    if slots not in SLOT_RULES:
        raise PrivacyParameterError(f"slots must be one of {', '.join(SLOT_RULES)}, got {slots!r}")
    lam = check_sampling_rate(lam)
    d = check_positive_int(d, "d", minimum=2)
    calls, gamma = blanket_slots(n_users, m)
    participants = calls + 1 if slots == "theorem2" else calls
    return ShuffleEvent(PoissonReport(lam, d), participants, gamma)


def user_event(lam: float, d: int, n_users: int, m: float, s: int, *, slots: str = "theorem2") -> GroupEvent:
    """Theorem 3: a user's s items are s virtual users, composed by group privacy (Lemma 1).

    Parameters
    ----------
    lam : float, in (0, 1]
        Poisson sampling rate lambda.
    d : int, >= 2
        Number of items.
    n_users : int, >= 1
        Number of users.
    m : float, in (0, M_MAX]
        Expected blanket messages per user.
    s : int, in [1, d]
        Number of items each user holds.
    slots : {"theorem2", "theorem3"}
        Participant count of `item_event`.

    Returns
    -------
    GroupEvent
        ``GroupEvent(item_event(lam, d, n_users, m, slots=slots), s)``.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range, or ``s`` > ``d``.

    References
    ----------
    segmented-multimessage-shuffle.txt §5.1, Theorem 3; §3.1, Lemma 1.

    Examples
    --------
    >>> event = user_event(0.5, 10, 1000, 2.5, 2)
    >>> event.size, event.event == item_event(0.5, 10, 1000, 2.5)
    (2, True)
    """
    d = check_positive_int(d, "d", minimum=2)
    s = check_positive_int(s, "s")
    if s > d:
        raise PrivacyParameterError(f"s (items per user) must be at most d={d}, got s={s}")
    return GroupEvent(item_event(lam, d, n_users, m, slots=slots), s)


def user_epsilon(
    lam: float, d: int, n_users: int, m: float, s: int, delta: float, *, accountant: Accountant | None = None
) -> float:
    """Upper bound on a user's epsilon at ``delta`` (Theorem 3), priced by ``accountant`` (variation ratio).

    Parameters
    ----------
    lam : float, in (0, 1]
        Poisson sampling rate lambda.
    d : int, >= 2
        Number of items.
    n_users : int, >= 1
        Number of users.
    m : float, in (0, M_MAX]
        Expected blanket messages per user.
    s : int, in [1, d]
        Number of items each user holds.
    delta : float, in (0, 1)
        Target delta.
    accountant : Accountant or None
        Accountant that prices `user_event` (a fresh copy is used);
        `VariationRatioAccountant` by default.

    Returns
    -------
    float
        Epsilon of the user's whole report at ``delta``.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    segmented-multimessage-shuffle.txt §5.1, Theorem 3.

    Examples
    --------
    For s = 1 the upper bound lies above Proposition 1's lower bound (the two counts it
    reads are a post-processing of the three the upper bound prices); more items cost more:

    >>> eps1 = user_epsilon(0.5, 10, 1000, 2.5, 1, 1e-6)
    >>> proposition1_lower(0.5, 10, 1000, 2.5, 1e-6) <= eps1
    True
    >>> user_epsilon(0.5, 10, 1000, 2.5, 2, 1e-6) > 2 * eps1
    True
    """
    acc = accountant.fresh() if accountant is not None else VariationRatioAccountant()
    return acc.compose(user_event(lam, d, n_users, m, s)).get_epsilon(delta)


def theorem3_guarantee(lam: float, d: int, n_users: int, m: float, s: int, item_epsilon: float) -> tuple[float, float]:
    """Theorem 3 as stated: with delta' = D_{e^eps'}(P || Q) (upper), the user is (s eps', s e^(s eps') delta')-DP.

    Parameters
    ----------
    lam : float, in (0, 1]
        Poisson sampling rate lambda.
    d : int, >= 2
        Number of items.
    n_users : int, >= 1
        Number of users.
    m : float, in (0, M_MAX]
        Expected blanket messages per user.
    s : int, >= 1
        Number of items each user holds.
    item_epsilon : float, >= 0
        The per-item epsilon eps'.

    Returns
    -------
    (float, float)
        (s eps', min(1, s e^(s eps') delta')).

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    segmented-multimessage-shuffle.txt §5.1, Theorem 3.

    Examples
    --------
    >>> eps, delta = theorem3_guarantee(0.5, 10, 1000, 2.5, 2, 0.5)
    >>> eps, delta < 1e-12
    (1.0, True)
    """
    event = item_event(lam, d, n_users, m)
    delta_item = release_divergence(event.params, event.n, event.gamma, 1e-18).upper(
        check_nonnegative(item_epsilon, "item_epsilon")
    )
    return group_composition(item_epsilon, delta_item, check_positive_int(s, "s"))


def level_constraint_met(lam: float, level: float, delta: float, d: int, n_users: int, m: float, s: int) -> bool:
    """Eq. 7: whether D_{e^(E/s)}(P || Q) <= delta / (s e^E) for the level E = ``level`` (upper bound on D).

    Parameters
    ----------
    lam : float, in (0, 1]
        Poisson sampling rate lambda of the level.
    level : float, >= 0
        The level's privacy budget E.
    delta : float, in (0, 1)
        Target delta.
    d : int, >= 2
        Number of items.
    n_users : int, >= 1
        Number of users.
    m : float, in (0, M_MAX]
        Expected blanket messages per user.
    s : int, in [1, d]
        Number of items each user holds.

    Returns
    -------
    bool
        True if the user's event is (``level``, ``delta``)-DP by the accountant's upper bound.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    segmented-multimessage-shuffle.txt §5.2, Eq. 7.

    Examples
    --------
    >>> level_constraint_met(0.5, 1.0, 1e-6, 10, 1000, 2.5, 2)
    True
    >>> level_constraint_met(0.5, 0.01, 1e-6, 10, 1000, 2.5, 2)
    False
    """
    delta = check_delta(delta)
    level = check_nonnegative(level, "level")
    acc = VariationRatioAccountant().compose(user_event(lam, d, n_users, m, s))
    return acc.get_delta(level) <= delta


def proposition1_lower(lam: float, d: int, n_users: int, m: float, delta: float) -> float:
    """Proposition 1: a lower bound on the epsilon of one item (s = 1) at ``delta``.

    Parameters
    ----------
    lam : float, in (0, 1]
        Poisson sampling rate lambda.
    d : int, >= 2
        Number of items.
    n_users : int, >= 1
        Number of users.
    m : float, in (0, M_MAX]
        Expected blanket messages per user.
    delta : float, in (0, 1)
        Target delta.

    Returns
    -------
    float
        Lower bound on the item's epsilon: the counts on the two items when every other user holds
        one of the other d - 2 items (0 for d = 2 with other users, whose reports always land there).

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    segmented-multimessage-shuffle.txt §5.1, Proposition 1.

    Examples
    --------
    >>> low = proposition1_lower(0.5, 10, 1000, 2.5, 1e-6)
    >>> 0 < low <= user_epsilon(0.5, 10, 1000, 2.5, 1, 1e-6)
    True
    """
    lam, d = check_sampling_rate(lam), check_positive_int(d, "d", minimum=2)
    calls, gamma = blanket_slots(n_users, m)
    delta = check_delta(delta)
    if d == 2 and n_users > 1:
        return 0.0  # the others' own reports always land on the two items: the pair below is not attained
    # the others on the d - 2 other items, and the counts on the two items alone: a post-processing of
    # the real output (the other items dropped)
    pair = DominatingPair(lam, 0.0, 1.0 - lam, lam, math.inf, 2.0 * gamma / d, calls)
    return pair_epsilon(pair, delta, DEFAULT_RTOL, upper=False)


__all__ = [
    "M_MAX",
    "SLOT_RULES",
    "blanket_slots",
    "check_blanket_rate",
    "check_sampling_rate",
    "item_event",
    "level_constraint_met",
    "poisson_item_parameters",
    "proposition1_lower",
    "theorem3_guarantee",
    "user_epsilon",
    "user_event",
]
