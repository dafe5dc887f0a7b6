"""Who amplifies whom: the anonymous population n' of a PIC group (PIC §5.2-5.3).

Shuffling hides a victim only among the group's users whose reports the adversary
cannot attribute.  Corrupted users C reveal their own reports (Theorem 5.2:
n' = |G - C|), and post-computation communication may de-anonymise a further set U
(§5.3: n' = |G - C - U|).  Pass the result as ``n`` to
:func:`~shuffledp.accounting.bounds.shuffle_epsilon` or
:func:`~shuffledp.accounting.inverse.local_epsilon`.
"""

from __future__ import annotations

from shuffledp._util.validation import check_positive_int
from shuffledp.errors import PrivacyParameterError


def anonymous_population(group_size: int, corrupted: int = 0, deanonymized: int = 0) -> int:
    """n' = |G| - |C| - |U|: the victim plus the other users who stay anonymous (PIC §5.3).

    The victim is honest and anonymous, so at least one user remains; counts that leave
    none raise :class:`PrivacyParameterError`.
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
    """Worst-case n' after one-to-one matching: each corrupted user de-anonymises at most
    its one match, so |U| <= |C| and n' >= |G| - 2|C| (PIC §5.3)."""
    return anonymous_population(group_size, corrupted, check_positive_int(corrupted, "corrupted", minimum=0))


__all__ = ["anonymous_population", "matching_population"]
