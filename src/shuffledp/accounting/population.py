"""Who amplifies whom: the anonymous population n' of a PIC group (PIC §5.2-5.3).

Shuffling hides a victim only among the group's users whose reports the adversary
cannot attribute.  Corrupted users C reveal their own reports (Theorem 5.2:
n' = |G - C|), and post-computation communication may de-anonymise a further set U
(§5.3: n' = |G - C - U|).  Pass the result as ``n`` to
`shuffle_epsilon` or
`local_epsilon`.

**The one rule for n'** (`PrivacyLedger` applies it too, to the pool the victim hides in):
n' = |G| - |C| - |U|, and counts that leave no anonymous user (|C| + |U| >= |G|) are refused,
naming them.  The victim is honest and anonymous by assumption, so such counts contradict the
question asked; answering 1 would silently replace the user's adversary by a weaker one.
"""

from __future__ import annotations

from shuffledp._util.validation import check_positive_int
from shuffledp.errors import PrivacyParameterError


def anonymous_population(group_size: int, corrupted: int = 0, deanonymized: int = 0) -> int:
    """n' = |G| - |C| - |U|: the victim plus the other users who stay anonymous (PIC §5.3).

    Parameters
    ----------
    group_size : int, >= 1
        |G|, users in the victim's group.
    corrupted : int, >= 0
        |C|, corrupted users (they reveal their own reports).
    deanonymized : int, >= 0
        |U|, users exposed by post-computation communication.

    Returns
    -------
    int, >= 1

    Raises
    ------
    PrivacyParameterError
        If a count is out of range, or corrupted + deanonymized >= group_size (the victim
        itself is honest and anonymous).

    References
    ----------
    pic-usenix25.txt §5.2 Theorem 5.2 (n' = |G - C|) and §5.3 (n' = |G - C - U|).

    Examples
    --------
    >>> anonymous_population(100, corrupted=5, deanonymized=3)
    92
    """
    size = check_positive_int(group_size, "group_size")
    bad = check_positive_int(corrupted, "corrupted", minimum=0)
    lost = check_positive_int(deanonymized, "deanonymized", minimum=0)
    remaining = size - bad - lost
    if remaining < 1:
        raise PrivacyParameterError(
            f"corrupted + deanonymized = {bad + lost} must be < group_size = {size}: the victim itself is an "
            "honest, anonymous member of its group"
        )
    return remaining


def matching_population(group_size: int, corrupted: int) -> int:
    """Worst-case n' after one-to-one matching: n' >= |G| - 2|C|.

    Each corrupted user de-anonymises at most its one match, so |U| <= |C|.

    Parameters
    ----------
    group_size : int, >= 1
    corrupted : int, >= 0, 2 corrupted < group_size

    Returns
    -------
    int, >= 1

    Raises
    ------
    PrivacyParameterError
        If a count is out of range or 2 corrupted >= group_size.

    References
    ----------
    pic-usenix25.txt §5.3 (one-to-one matching).

    Examples
    --------
    >>> matching_population(100, 5)
    90
    """
    return anonymous_population(group_size, corrupted, check_positive_int(corrupted, "corrupted", minimum=0))


__all__ = ["anonymous_population", "matching_population"]
