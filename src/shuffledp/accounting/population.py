"""Who amplifies whom: the anonymous population n' of a PIC group (PIC §5.2-5.3).

Shuffling hides a victim only among the group's users whose reports the adversary
cannot attribute.  Corrupted users C reveal their own reports (Theorem 5.2:
n' = |G - C|), and post-computation communication may de-anonymise a further set U
(§5.3: n' = |G - C - U|).  Pass the result as ``n`` to
`shuffle_epsilon` or
`local_epsilon`.

**The one rule for n'** (used by `PrivacyLedger` too): n' = max(1, |G| - |C| - |U|).  |C| and
|U| count the users the adversary may attribute; they are assumptions (upper bounds: |U| <= k|C|
after k-neighbour computation, corrupted users counted over a whole group while the ledger's
bucket rule places them all in the victim's bucket) and may overlap.  The victim is never one of
them, so it always remains: when the counts cover every other member, the victim hides among
nobody and n' = 1, which every accountant prices as no amplification at all (the local epsilon
itself, a true guarantee).  Reporting infinity there would be false, and refusing would make the
worst case impossible to ask about; counts that are not integers >= 0 are refused.
"""

from __future__ import annotations

from shuffledp._util.validation import check_positive_int


def anonymous_population(group_size: int, corrupted: int = 0, deanonymized: int = 0) -> int:
    """n' = max(1, |G| - |C| - |U|): the victim plus the other users who stay anonymous (PIC §5.3).

    Parameters
    ----------
    group_size : int, >= 1
        |G|, users in the victim's group.
    corrupted : int, >= 0
        |C|, (at most this many) corrupted users, the victim not among them (they reveal their
        own reports).
    deanonymized : int, >= 0
        |U|, (at most this many) users exposed by post-computation communication.

    Returns
    -------
    int, >= 1
        1 when |C| + |U| >= |G|: the victim alone, no amplification (module docstring).

    Raises
    ------
    PrivacyParameterError
        If a count is not an integer in range.

    References
    ----------
    pic-usenix25.txt §5.2 Theorem 5.2 (n' = |G - C|) and §5.3 (n' = |G - C - U|).

    Examples
    --------
    >>> anonymous_population(100, corrupted=5, deanonymized=3)
    92
    >>> anonymous_population(100, corrupted=60, deanonymized=60)  # everyone else may be attributed
    1
    """
    size = check_positive_int(group_size, "group_size")
    bad = check_positive_int(corrupted, "corrupted", minimum=0)
    lost = check_positive_int(deanonymized, "deanonymized", minimum=0)
    return max(1, size - bad - lost)


def matching_population(group_size: int, corrupted: int) -> int:
    """Worst-case n' after one-to-one matching: n' >= |G| - 2|C|.

    Each corrupted user de-anonymises at most its one match, so |U| <= |C|.

    Parameters
    ----------
    group_size : int, >= 1
    corrupted : int, >= 0

    Returns
    -------
    int, >= 1
        max(1, group_size - 2 corrupted) (`anonymous_population`).

    Raises
    ------
    PrivacyParameterError
        If a count is not an integer in range.

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
