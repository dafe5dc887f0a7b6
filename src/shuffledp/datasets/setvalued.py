"""Set-valued data for the segmented paper's experiments (segmented-multimessage-shuffle.txt §6, "Datasets").

* `uniform_item_sets` — the synthetic data: every user holds s distinct items drawn
  uniformly from a domain of d items (§6 uses d = T = 128, s in {4, 8}).
* `read_msnbc` / `load_msnbc` — the UCI "MSNBC.com Anonymous Web Data" file
  ``msnbc990928.seq`` (paper ref. [36]): comment lines start with ``%``, the first other
  line names the 17 page categories, then one line per user session holding the
  categories (1-based) of the pages visited, in order, with repeats.  A user's set is the
  distinct categories of the session.  The file is not on these machines
  (../shared/data/README.md); the loader is tested on generated files.
* `msnbc_like_sets` — a documented stand-in, named ``msnbc-like (synthetic)`` in
  every output: 17 categories with Zipf(1) popularity and session sets of size
  1 + Geometric (mean 2, at most 17, as §6 reports for MSNBC).
* `fix_set_size` — §6's "item padding or random selection" to exactly s items.

Sets are returned as (n, s) int64 arrays of distinct item ids in {0..d-1} (the layout of
`check_item_sets`, which the segmented protocol uses too).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from shuffledp._util.validation import check_positive_int, check_rng
from shuffledp.datasets._paths import data_root, existing_file
from shuffledp.errors import DataError, DomainError, ShapeError

#: Categories of the MSNBC data (frontpage, news, ..., travel).
MSNBC_CATEGORIES = 17
#: Name used in every output produced from `msnbc_like_sets`.
MSNBC_LIKE_NAME = "msnbc-like (synthetic)"
#: Mean raw set size of the MSNBC-like generator (§6: "an average of 2 items per user").
MSNBC_LIKE_MEAN_SIZE = 2.0
#: Largest n * d the generators accept: they draw an (n, d) table of float64 keys
#: (8 bytes each, 0.8 GB at the cap; §6 needs n * d = 50,000 * 128 = 6.4e6).
MAX_TABLE_ENTRIES = 10**8


@dataclass(frozen=True)
class MSNBCData:
    """The parsed file: category names and each session's distinct categories (0-based ids).

    Parameters
    ----------
    categories : tuple of str
        The category names of the file's first non-comment line.
    sets : tuple of numpy.ndarray
        One sorted int64 array of distinct 0-based category ids per session.
    path : pathlib.Path
        The file that was read.

    Examples
    --------
    >>> import numpy as np
    >>> data = MSNBCData(("news", "sports"), (np.array([0, 1]),), Path("x.seq"))
    >>> len(data.categories), data.sets[0].tolist()
    (2, [0, 1])
    """

    categories: tuple[str, ...]
    sets: tuple[np.ndarray, ...]
    path: Path


def _check_sizes(n: int, d: int, s: int) -> tuple[int, int, int]:
    n = check_positive_int(n, "n")
    d = check_positive_int(d, "d", minimum=2)
    s = check_positive_int(s, "s")
    if s > d:
        raise DataError(f"s (items per user) must be at most d={d}, got s={s}")
    if n * d > MAX_TABLE_ENTRIES:
        raise DataError(
            f"n * d must be at most {MAX_TABLE_ENTRIES:,} (the generator draws an (n, d) table of float64 keys, "
            f"0.8 GB at the cap), got n={n:,}, d={d:,}: generate at most n={MAX_TABLE_ENTRIES // d:,} users per call"
        )
    return n, d, s


def uniform_item_sets(n: int, d: int, s: int, rng: np.random.Generator | None = None) -> np.ndarray:
    """``n`` users, each with ``s`` distinct items uniform over {0..d-1}: an (n, s) int64 array.

    Parameters
    ----------
    n : int, >= 1
        Number of users.
    d : int, >= 2
        Number of items in the domain (§6: d = 128).
    s : int, in [1, d]
        Items per user (§6: 4 or 8).
    rng : numpy.random.Generator or None
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        (n, s) int64 array; each row holds s distinct items in {0..d-1}.

    Raises
    ------
    ShuffleDPError
        ``DataError`` if s > d or n * d > `MAX_TABLE_ENTRIES`, a parameter error for a
        non-positive size.

    References
    ----------
    segmented-multimessage-shuffle.txt §6, "Datasets" (synthetic data).

    Examples
    --------
    >>> import numpy as np
    >>> sets = uniform_item_sets(1000, 8, 3, np.random.default_rng(0))
    >>> sets.shape, bool(all(len(set(row)) == 3 for row in sets.tolist()))
    ((1000, 3), True)
    >>> freq = item_frequencies(sets, 8)  # each item is held with probability s / d = 0.375
    >>> bool(abs(freq - 0.375).max() < 0.06)
    True
    """
    n, d, s = _check_sizes(n, d, s)
    keys = check_rng(rng).random((n, d))
    return np.argpartition(keys, s - 1, axis=1)[:, :s].astype(np.int64) if s < d else np.argsort(keys, axis=1)


def _as_path(path: object, name: str = "path") -> Path:
    """``path`` as a Path; a value that is not a str or os.PathLike is a DataError."""
    if not isinstance(path, (str, os.PathLike)):
        raise DataError(f"{name} must be a file path (str or os.PathLike), got {path!r} of type {type(path).__name__}")
    return Path(path)


def msnbc_path(root: str | os.PathLike[str] | None = None) -> Path:
    """Where the MSNBC file is looked for: ``<data root>/msnbc/msnbc990928.seq``.

    Parameters
    ----------
    root : str, os.PathLike or None
        The data root; None uses the library's default data root.

    Returns
    -------
    pathlib.Path
        The expected location of the file (it may not exist).

    Examples
    --------
    >>> msnbc_path("/data").as_posix()
    '/data/msnbc/msnbc990928.seq'
    """
    return data_root(root) / "msnbc" / "msnbc990928.seq"


def read_msnbc(path: str | os.PathLike[str]) -> MSNBCData:
    """Parse a file in the UCI ``msnbc990928.seq`` format (module docstring); DataError names file and line.

    Parameters
    ----------
    path : str or os.PathLike
        The sequence file.

    Returns
    -------
    MSNBCData
        Category names and each session's distinct categories, 0-based.

    Raises
    ------
    DataError
        If ``path`` is not a path or the file is missing, is not ASCII text, has no category
        line or sessions, or a session holds a token that is not a category number in
        [1, number of categories] (the message names file and line).

    References
    ----------
    segmented-multimessage-shuffle.txt §6, "Datasets" (MSNBC, ref. [36]).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     file = Path(tmp) / "msnbc990928.seq"
    ...     _ = file.write_text("% comment\\nfrontpage news tech\\n1 1 3\\n2\\n")
    ...     data = read_msnbc(file)
    >>> data.categories, [s.tolist() for s in data.sets]
    (('frontpage', 'news', 'tech'), [[0, 2], [1]])
    """
    path = existing_file(_as_path(path), "MSNBC sequence file (UCI msnbc990928.seq)")
    categories: tuple[str, ...] | None = None
    sets: list[np.ndarray] = []
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                text = raw.decode("ascii").strip()
            except UnicodeDecodeError:
                raise DataError(
                    f"{path}:{number}: the UCI msnbc990928.seq format is ASCII text, got the bytes {raw[:40]!r}"
                ) from None
            if not text or text.startswith("%"):
                continue
            if categories is None:
                categories = tuple(text.split())
                if len(categories) < 2:
                    raise DataError(f"{path}:{number}: expected the category names line, got {text!r}")
                continue
            tokens = text.split()
            if not all(tok.isdigit() for tok in tokens):  # plain digits only (int() would take "+1", "1_0")
                raise DataError(f"{path}:{number}: a session must list category numbers, got {text!r}")
            visits = [int(tok) for tok in tokens]  # parsing: one line per session
            if min(visits) < 1 or max(visits) > len(categories):  # before int64: no overflow
                raise DataError(f"{path}:{number}: category numbers must lie in [1, {len(categories)}], got {text!r}")
            sets.append(np.unique(np.array(visits, dtype=np.int64)) - 1)
    if categories is None or not sets:
        raise DataError(f"{path}: no category line or no sessions found (UCI msnbc990928.seq format)")
    return MSNBCData(categories, tuple(sets), path)


def load_msnbc(path: str | os.PathLike[str] | None = None, *, root: str | os.PathLike[str] | None = None) -> MSNBCData:
    """`read_msnbc` of ``path`` (default `msnbc_path` of ``root``).

    Parameters
    ----------
    path : str, os.PathLike or None
        The sequence file; None looks it up under ``root``.
    root : str, os.PathLike or None
        The data root used when ``path`` is None.

    Returns
    -------
    MSNBCData
        The parsed file.

    Raises
    ------
    DataError
        If ``path`` or ``root`` is not a path, or the file is missing or malformed (see `read_msnbc`).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     file = msnbc_path(tmp)
    ...     file.parent.mkdir()
    ...     _ = file.write_text("a b\\n2 2\\n")
    ...     len(load_msnbc(root=tmp).sets)
    1
    """
    if root is not None:
        _as_path(root, "root")
    return read_msnbc(msnbc_path(root) if path is None else path)


def fix_set_size(
    sets: list[np.ndarray] | tuple[np.ndarray, ...], d: int, s: int, rng: np.random.Generator | None = None
) -> np.ndarray:
    """Exactly ``s`` items per user (§6): a larger set keeps a uniform random s-subset; a smaller
    one is padded with distinct items drawn uniformly from the items it lacks.

    Padding with real items (not dummies outside the domain) keeps the domain at d, as §6
    reports T = 17 for MSNBC; the estimation target is then the padded data's frequency.

    Parameters
    ----------
    sets : list or tuple of numpy.ndarray
        One array of distinct items in {0..d-1} per user (at least one user, no empty set).
    d : int, >= 2
        Number of items in the domain.
    s : int, in [1, d]
        Items per user after padding or sampling.
    rng : numpy.random.Generator or None
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        (len(sets), s) int64 array of distinct items per row.

    Raises
    ------
    DataError
        If s > d, ``sets`` is empty, or a set is empty or holds an item outside [0, d - 1].

    References
    ----------
    segmented-multimessage-shuffle.txt §6, "Datasets" (item padding or random selection).

    Examples
    --------
    >>> import numpy as np
    >>> fixed = fix_set_size([np.array([0, 1, 2, 3]), np.array([5])], 8, 2, np.random.default_rng(1))
    >>> fixed.shape, set(fixed[0].tolist()) <= {0, 1, 2, 3}, 5 in fixed[1].tolist()
    ((2, 2), True, True)
    """
    d = check_positive_int(d, "d", minimum=2)
    s = check_positive_int(s, "s")
    if s > d:
        raise DataError(f"s (items per user) must be at most d={d}, got s={s}")
    if len(sets) == 0:
        raise DataError("sets must hold at least one user's set, got none")
    member = np.zeros((len(sets), d), dtype=bool)
    for i, items in enumerate(sets):  # parsing layout only: one row per user
        items = np.asarray(items)
        if items.ndim != 1 or (items.size and not np.issubdtype(items.dtype, np.integer)):
            raise DataError(f"sets[{i}] must be a 1-d array of integer items in [0, {d - 1}], got {items.tolist()!r}")
        if items.size == 0 or items.min() < 0 or items.max() >= d:
            raise DataError(f"sets[{i}] must hold items in [0, {d - 1}], got {items.tolist()}")
        member[i, items] = True
    return _pad_or_sample(member, s, check_rng(rng))


def _pad_or_sample(held: np.ndarray, s: int, rng: np.random.Generator) -> np.ndarray:
    """s items per row of the (n, d) membership ``held``: held items first in random order, then the rest."""
    keys = rng.random(held.shape) - held  # held items get keys in [-1, 0), the others in [0, 1)
    return np.argsort(keys, axis=1)[:, :s].astype(np.int64)


def msnbc_like_sets(
    n: int, rng: np.random.Generator | None = None, *, s: int = 4, d: int = MSNBC_CATEGORIES
) -> np.ndarray:
    """MSNBC-like users (`MSNBC_LIKE_NAME`): sessions over ``d`` = 17 categories, fixed to ``s`` items.

    Category j (0-based) has popularity proportional to 1 / (j + 1) (Zipf, exponent 1); a
    session's raw set has 1 + Geometric(1 / 2) categories (mean 2, capped at d), drawn
    without replacement by popularity (Gumbel top-k); then `fix_set_size` pads or
    samples to ``s`` items.  Not real data: a skewed set-valued stand-in for MSNBC.

    Parameters
    ----------
    n : int, >= 1
        Number of users.
    rng : numpy.random.Generator or None
        Source of randomness.
    s : int, in [1, d]
        Items per user after padding or sampling.
    d : int, >= 2
        Number of categories.

    Returns
    -------
    numpy.ndarray
        (n, s) int64 array of distinct categories per row.

    Raises
    ------
    ShuffleDPError
        ``DataError`` if s > d or n * d > `MAX_TABLE_ENTRIES`, a parameter error for a
        non-positive size.

    References
    ----------
    segmented-multimessage-shuffle.txt §6, "Datasets" (MSNBC statistics).

    Examples
    --------
    >>> import numpy as np
    >>> sets = msnbc_like_sets(2000, np.random.default_rng(0), s=1)
    >>> freq = item_frequencies(sets, MSNBC_CATEGORIES)
    >>> sets.shape, bool(freq[0] > freq[8] > freq[16])  # Zipf popularity is kept
    ((2000, 1), True)
    """
    n, d, s = _check_sizes(n, d, s)
    rng = check_rng(rng)
    log_weight = -np.log(np.arange(1, d + 1, dtype=np.float64))
    order = np.argsort(-(log_weight + rng.gumbel(size=(n, d))), axis=1)
    size = np.minimum(rng.geometric(1.0 / MSNBC_LIKE_MEAN_SIZE, size=n), d)
    held = np.zeros((n, d), dtype=bool)
    np.put_along_axis(held, order, np.arange(d)[None, :] < size[:, None], axis=1)
    return _pad_or_sample(held, s, rng)


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
        If ``items`` is not 2-D (ragged rows included) or holds no user.
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
    try:
        arr = np.asarray(items)
    except ValueError:  # ragged rows: numpy cannot form an array
        lengths = sorted({len(row) for row in items}) if all(hasattr(row, "__len__") for row in items) else "mixed"
        raise ShapeError(
            f"items must be an (n_users, s) array with s={s} items in every row, got rows of lengths {lengths}"
        ) from None
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


def item_frequencies(items: np.ndarray, d: int) -> np.ndarray:
    """Fraction of users holding each item (the estimation target of §6's MSE).

    Parameters
    ----------
    items : numpy.ndarray
        (n, s) integer array of distinct item ids in {0..d-1} per user (n, s >= 1).
    d : int, >= 1
        Number of items in the domain.

    Returns
    -------
    numpy.ndarray
        Length-d float64 array; entry j is the fraction of the n users holding item j.

    Raises
    ------
    ShapeError
        If ``items`` is not 2-d with at least one user and one item per user.
    DomainError
        If an id is not an integer in [0, d - 1] (nothing is rounded or dropped).
    DataError
        If a user's row repeats an item (it would be counted twice).
    PrivacyParameterError
        If ``d`` is not a positive integer.

    References
    ----------
    segmented-multimessage-shuffle.txt §6 (MSE of frequency estimation).

    Examples
    --------
    >>> import numpy as np
    >>> item_frequencies(np.array([[0, 1], [1, 2]]), 4)
    array([0.5, 1. , 0.5, 0. ])
    >>> item_frequencies(np.array([[0, 4]]), 4)
    Traceback (most recent call last):
    ...
    shuffledp.errors.DomainError: items[0, 1]=4 is outside the item domain [0, 3]
    """
    d = check_positive_int(d, "d")
    try:
        arr = np.asarray(items)
    except ValueError:  # ragged rows: numpy cannot form an array
        raise ShapeError(
            "items must be an (n, s) array of item ids with s >= 1, got rows of different lengths"
        ) from None
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise ShapeError(f"items must be an (n, s) array of item ids with s >= 1, got shape {arr.shape}")
    arr = check_item_sets(arr, d, arr.shape[1])
    return np.bincount(arr.reshape(-1), minlength=d).astype(np.float64) / arr.shape[0]


__all__ = [
    "check_item_sets",
    "MSNBCData",
    "MSNBC_CATEGORIES",
    "MSNBC_LIKE_MEAN_SIZE",
    "MSNBC_LIKE_NAME",
    "MAX_TABLE_ENTRIES",
    "fix_set_size",
    "item_frequencies",
    "load_msnbc",
    "msnbc_like_sets",
    "msnbc_path",
    "read_msnbc",
    "uniform_item_sets",
]
