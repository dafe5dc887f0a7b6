"""Step 3 of Algorithm 2 (lines 7-18): users' messages and the in-process shuffler.

Every user reports each of its s items with probability lambda of its level (the Poisson
randomizer, Eq. 2) and makes ceil(m) blanket calls, each sending an item uniform over the
d items with probability m / ceil(m).  Vectorised over users: one Bernoulli matrix for the
items, one binomial count of blankets per user.  The shuffler is a uniform permutation of
all messages (drawn from ``rng``: an in-process simulation, not a deployment shuffler).
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._util.validation import check_positive_int, check_rng
from shuffledp.accounting.segmented import check_blanket_rate
from shuffledp.datasets.setvalued import check_item_sets
from shuffledp.errors import ShapeError
from shuffledp.protocols.segmented._checks import check_lambdas, check_level_index


def user_messages(
    items: np.ndarray, level_index: np.ndarray, lambdas: np.ndarray, m: float, d: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 2 lines 8-16 for all users at once: (input-dependent messages, blanket messages).

    Each item of a user at level k is sent with probability lambdas[k]; each user makes
    ceil(m) blanket calls, each sending a uniform item with probability m / ceil(m).

    Parameters
    ----------
    items : numpy.ndarray
        (n_users, s) integer item ids, s distinct per row (see `check_item_sets`).
    level_index : numpy.ndarray
        Each user's level, an integer index into ``lambdas`` (length n_users).
    lambdas : numpy.ndarray
        Sampling rate lambda_k in (0, 1] of each level (see `check_lambdas`).
    m : float, in (0, M_MAX]
        Expected blanket messages per user.
    d : int, >= 2
        Number of items.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The reported items and the blanket items (int64, unshuffled).

    Raises
    ------
    ShapeError, DataError, DomainError
        For malformed ``items`` (see `check_item_sets`) or ``level_index`` (see
        `check_level_index`), or a ``level_index`` whose length is not n_users.
    PrivacyParameterError
        For ``lambdas``, ``m`` or ``d`` out of range.

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
    d = check_positive_int(d, "d", minimum=2)
    items = np.asarray(items)
    if items.ndim != 2 or items.shape[1] == 0:
        raise ShapeError(f"items must be an (n_users, s) array of item ids with s >= 1, got shape {items.shape}")
    items = check_item_sets(items, d, items.shape[1])
    lambdas = check_lambdas(lambdas)
    level_index = check_level_index(level_index, lambdas.size)
    if level_index.size != items.shape[0]:
        raise ShapeError(f"level_index must give one level per user ({items.shape[0]}), got {level_index.size}")
    m = check_blanket_rate(m)
    rng = check_rng(rng)
    rate = lambdas[level_index]
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

    Raises
    ------
    ShapeError
        If no batch is given or a batch is not a 1-d integer array.

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
    if not batches:
        raise ShapeError("shuffle needs at least one batch of messages, got none")
    arrays = [np.asarray(b) for b in batches]
    for i, arr in enumerate(arrays):
        if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
            raise ShapeError(
                f"batches[{i}] must be a 1-d integer array of item ids, got shape {arr.shape}, dtype {arr.dtype}"
            )
    return check_rng(rng).permutation(np.concatenate(arrays))


__all__ = ["check_item_sets", "shuffle", "user_messages"]
