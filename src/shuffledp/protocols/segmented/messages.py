"""Step 3 of Algorithm 2 (lines 7-18): users' messages and the in-process shuffler.

Every user reports each of its s items with probability lambda of its level (the Poisson
randomizer, Eq. 2) and makes ceil(m) blanket calls, each sending an item uniform over the
d items with probability m / ceil(m).  Vectorised over users: one Bernoulli matrix for the
items, one binomial count of blankets per user.  The shuffler is a uniform permutation of
all messages (drawn from ``rng``: an in-process simulation, not a deployment shuffler).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from shuffledp._util.validation import check_rng
from shuffledp.errors import DataError, DomainError, ShapeError


def check_item_sets(items: Any, d: int, s: int) -> np.ndarray:
    """Users' sets as an (n, s) integer array of distinct items in {0..d-1} (exactly s per user).

    Exactly s: the number of messages reveals how many items a user reported, so a neighbour
    with a different set size is not covered by Theorem 3 (whose inputs all have s items);
    pad or sample sets to s items beforehand (as §6 does).

    Parameters
    ----------
    items : array_like
        (n_users, s) integer item ids.
    d : int, >= 2
        Number of items.
    s : int, >= 1
        Items per user.

    Returns
    -------
    numpy.ndarray
        ``items`` as an (n_users, s) int64 array.

    Raises
    ------
    ShapeError
        If ``items`` is not 2-D or holds no user.
    DataError
        If a row does not hold exactly s distinct items.
    DomainError
        If an id is not an integer in [0, d - 1].

    References
    ----------
    segmented-multimessage-shuffle.txt §5 (Theorem 3's inputs), §6 (padding to s items).

    Examples
    --------
    >>> check_item_sets([[0, 3], [2, 1]], d=4, s=2).dtype
    dtype('int64')
    >>> check_item_sets([[0, 0]], d=4, s=2)
    Traceback (most recent call last):
    ...
    shuffledp.errors.DataError: items[0] repeats an item ([0, 0]): a user's set has s distinct items
    """
    arr = np.asarray(items)
    if arr.ndim != 2:
        raise ShapeError(f"items must be an (n_users, s) array of item ids, got shape {arr.shape}")
    if arr.shape[1] != s:
        what = "more" if arr.shape[1] > s else "fewer"
        raise DataError(f"items must hold exactly s={s} items per user, got {arr.shape[1]} ({what} than s)")
    if arr.shape[0] == 0:
        raise ShapeError("items must hold at least one user, got none")
    if not np.issubdtype(arr.dtype, np.integer):
        raise DomainError(f"items must be integer item ids in [0, {d - 1}], got dtype {arr.dtype}")
    bad = (arr < 0) | (arr >= d)
    if np.any(bad):
        row, col = (int(v) for v in np.argwhere(bad)[0])
        raise DomainError(f"items[{row}, {col}]={int(arr[row, col])} is outside the item domain [0, {d - 1}]")
    ordered = np.sort(arr, axis=1)
    repeated = np.any(ordered[:, 1:] == ordered[:, :-1], axis=1)
    if np.any(repeated):
        row = int(np.flatnonzero(repeated)[0])
        raise DataError(f"items[{row}] repeats an item ({arr[row].tolist()}): a user's set has s distinct items")
    return arr.astype(np.int64, copy=False)


def user_messages(
    items: np.ndarray, level_index: np.ndarray, lambdas: np.ndarray, m: float, d: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 2 lines 8-16 for all users at once: (input-dependent messages, blanket messages).

    Each item of a user at level k is sent with probability lambdas[k]; each user makes
    ceil(m) blanket calls, each sending a uniform item with probability m / ceil(m).

    Parameters
    ----------
    items : numpy.ndarray
        (n_users, s) int64 item ids (see `check_item_sets`).
    level_index : numpy.ndarray
        Each user's level, an index into ``lambdas``.
    lambdas : numpy.ndarray
        Sampling rate lambda_k in (0, 1] of each level.
    m : float, > 0
        Expected blanket messages per user.
    d : int, >= 2
        Number of items.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The reported items and the blanket items (int64, unshuffled).

    References
    ----------
    segmented-multimessage-shuffle.txt §5, Algorithm 2 lines 8-16; Eq. 2.

    Examples
    --------
    At lambda = 1 every item is sent; the blankets number Binomial(n ceil(m), m / ceil(m)):

    >>> import numpy as np
    >>> items = np.tile(np.arange(3), (2000, 1))
    >>> sent, blankets = user_messages(items, np.zeros(2000, np.int64), np.ones(1), 2.5, 8, np.random.default_rng(0))
    >>> sent.size, bool(abs(blankets.size - 5000) < 4 * np.sqrt(6000 * (5 / 6) * (1 / 6)))
    (6000, True)
    """
    rate = np.asarray(lambdas, dtype=np.float64)[level_index]
    kept = rng.random(items.shape) < rate[:, None]  # line 11: r <= lambda (r uniform on [0, 1))
    calls = math.ceil(m)
    per_user = rng.binomial(calls, m / calls, size=items.shape[0])  # lines 13-15
    blankets = rng.integers(0, d, size=int(per_user.sum()))  # line 16: uniform(T)
    return items[kept], blankets


def shuffle(*batches: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
    """Line 18: a uniform permutation of all messages.

    Parameters
    ----------
    *batches : numpy.ndarray
        Message arrays to pool.
    rng : numpy.random.Generator or None
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        The concatenated messages in uniformly random order.

    References
    ----------
    segmented-multimessage-shuffle.txt §5, Algorithm 2 line 18.

    Examples
    --------
    >>> import numpy as np
    >>> out = shuffle(np.array([0, 1]), np.array([2]), rng=np.random.default_rng(0))
    >>> sorted(out.tolist())
    [0, 1, 2]
    """
    return check_rng(rng).permutation(np.concatenate(batches))


__all__ = ["check_item_sets", "shuffle", "user_messages"]
