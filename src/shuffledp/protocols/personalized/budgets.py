"""Personalized budget populations: Table 3 of the E-APES paper and the three-group split of §4.2.

Table 3 writes N(mu, sigma^2) but its caption calls the second number the standard
deviation; we read N(0.5, 0.2) as mean 0.5, standard deviation 0.2 (the caption's words).
Values outside the clip range are replaced by the nearest end (as the table says).

References
----------
personalized-shuffle-eapes.txt §4.1 Table 3; §4.2 (f_c = 0.54, f_m = 0.37, f_l = 0.09).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from shuffledp._util.validation import check_epsilon, check_positive_int
from shuffledp.accounting.personalized import MAX_BUDGET, MIN_BUDGET
from shuffledp.errors import DataError, PrivacyParameterError
from shuffledp.params import EPS0_RANGE

__all__ = ["TABLE3", "group_budgets", "read_budgets", "table3_budgets"]

#: name -> (kind, a, b, clip low, clip high): uniform U(a, b) or normal N(mean a, sd b).
TABLE3 = {
    "uniform1": ("uniform", 0.05, 1.0, 0.05, 1.0),
    "uniform2": ("uniform", 0.01, 2.0, 0.01, 2.0),
    "gauss1": ("normal", 0.5, 0.2, 0.05, 1.0),
    "gauss2": ("normal", 1.0, 0.2, 0.01, 2.0),
    "gauss3": ("normal", 1.0, 0.5, 0.01, 2.0),
}


def table3_budgets(name: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` local budgets drawn from the Table 3 distribution ``name``, clipped to its range.

    Parameters
    ----------
    name : {"uniform1", "uniform2", "gauss1", "gauss2", "gauss3"}
        A key of `TABLE3`.
    n : int, >= 1
        Number of users.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        ``n`` float64 budgets within the distribution's clip range.

    Raises
    ------
    PrivacyParameterError
        For an unknown ``name`` or ``n`` < 1.

    References
    ----------
    personalized-shuffle-eapes.txt §4.1, Table 3.

    Examples
    --------
    >>> b = table3_budgets("gauss1", 1000, np.random.default_rng(0))
    >>> float(b.min()) >= 0.05 and float(b.max()) <= 1.0
    True
    """
    if name not in TABLE3:
        raise PrivacyParameterError(f"distribution must be one of {', '.join(TABLE3)}, got {name!r}")
    n = check_positive_int(n, "n")
    kind, a, b, lo, hi = TABLE3[name]
    draw = rng.uniform(a, b, n) if kind == "uniform" else rng.normal(a, b, n)
    return np.clip(draw, lo, hi)


def group_budgets(
    n: int, f_c: float, f_m: float, eps_c: float, eps_m: float, eps_l: float, rng: np.random.Generator
) -> np.ndarray:
    """Conservative / moderate / liberal users in fractions f_c, f_m, 1 - f_c - f_m, randomly placed (§4.2).

    Parameters
    ----------
    n : int, >= 1
        Number of users.
    f_c, f_m : float, >= 0 with f_c + f_m <= 1
        Fractions of conservative and moderate users (§4.2: 0.54 and 0.37); the counts are
        round(n f_c) and round(n f_m), the liberal users the rest.
    eps_c, eps_m, eps_l : float
        The budgets of the three groups.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        ``n`` budgets in uniformly random order.

    Raises
    ------
    PrivacyParameterError
        For ``n`` < 1 or fractions out of range.

    References
    ----------
    personalized-shuffle-eapes.txt §4.2.

    Examples
    --------
    >>> b = group_budgets(100, 0.54, 0.37, 0.1, 0.5, 1.0, np.random.default_rng(0))
    >>> [int((b == e).sum()) for e in (0.1, 0.5, 1.0)]
    [54, 37, 9]
    """
    n = check_positive_int(n, "n")
    if not (f_c >= 0.0 and f_m >= 0.0 and f_c + f_m <= 1.0):
        raise PrivacyParameterError(f"f_c and f_m must be >= 0 with f_c + f_m <= 1, got f_c={f_c!r}, f_m={f_m!r}")
    for name, eps in (("eps_c", eps_c), ("eps_m", eps_m), ("eps_l", eps_l)):
        check_epsilon(eps, name)
    n_c = round(n * f_c)
    n_m = min(round(n * f_m), n - n_c)  # rounding both up could exceed n (e.g. n = 3, 0.5 / 0.5)
    budgets = np.concatenate((np.full(n_c, eps_c), np.full(n_m, eps_m), np.full(n - n_c - n_m, eps_l)))
    return rng.permutation(budgets)


def read_budgets(path: str | Path) -> np.ndarray:
    """Local budgets from a file: one budget in [1e-6, 700] per line (text/CSV), or a 1-D ``.npy`` array.

    Blank lines carry no budget and are skipped; any other line must be one number (no
    header, no second column).  A missing or empty file, or a bad value, raises
    `DataError` naming the file and the line (the array index for ``.npy``).

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
    ...     _ = f.write("0.5\\n1.25\\n")
    >>> read_budgets(f.name).tolist()
    [0.5, 1.25]
    >>> os.remove(f.name)
    """
    path = Path(path)
    if path.is_dir():
        raise DataError(f"{path}: is a directory (expected a file of budgets: one per line, or a .npy array)")
    if not path.is_file():
        raise DataError(f"{path}: no such file (expected one budget per line, or a .npy array)")
    if path.suffix.lower() == ".npy":
        try:
            values = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError):  # text, pickles, truncated files: numpy's messages speak of pickling
            raise DataError(
                f"{path}: not a valid .npy array file (expected a 1-D numeric array saved by numpy.save)"
            ) from None
        if values.ndim != 1 or values.dtype.kind not in "iuf":
            raise DataError(f"{path}: expected a 1-D numeric array, got shape {values.shape} dtype {values.dtype}")
        label, numbers, values = "index", np.arange(values.size), values.astype(float)
        texts = values
    else:
        lines = path.read_text(errors="replace").splitlines()
        numbers = [i + 1 for i, line in enumerate(lines) if line.strip()]
        texts = np.array([lines[i - 1].strip() for i in numbers], dtype=str)
        label = "line"
        try:
            values = texts.astype(float)
        except ValueError:
            for number, text in zip(numbers, texts.tolist()):
                try:
                    float(text)
                except ValueError:
                    raise DataError(f"{path}: line {number}: a budget must be one number, got {text!r}") from None
            raise  # pragma: no cover - numpy and float() agree on what parses
    if values.size == 0:
        raise DataError(f"{path}: the file holds no budget (expected one budget per line)")
    bad = np.flatnonzero(~(np.isfinite(values) & (values >= MIN_BUDGET) & (values <= MAX_BUDGET)))
    if bad.size:
        i = int(bad[0])
        raise EPS0_RANGE.error(f"{path}: {label} {numbers[i]}: a budget", str(texts[i]), cls=DataError)
    return values
