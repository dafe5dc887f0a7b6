"""Validation helpers shared by every public boundary.

One rule for numbers: a real-valued parameter is a real number (numpy scalars included), never a
bool or a numeric string (`check_real`), as a count is an integer and never ``'10000'``
(`check_positive_int`); a value of the wrong type raises `ParameterTypeError` (a
PrivacyParameterError and a TypeError).  The command line parses its own text before calling the API.

One wording of a range error (`range_message`), in the library, at the command line and in its
--help: ``NAME must be a number in [LOW, HIGH); got VALUE`` (``an integer`` for counts), with the
interval written by `Interval` (square bracket: end included; round: excluded).
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from shuffledp.errors import ArgumentTypeError, ParameterTypeError, PrivacyParameterError, ShapeError, ShuffleDPError

#: Smallest epsilon accepted anywhere: below 2^-52, e^epsilon rounds to exactly 1 in
#: float64, so such a guarantee cannot be told apart from epsilon = 0 (p = e^eps0 must be > 1).
EPSILON_MIN = 2.0**-52
#: Largest count (n, rounds, dimension) accepted at the command line: every integer up
#: to 2^53 is exact in float64, larger ones are not.
COUNT_MAX = 2**53
#: Seeds are one unsigned 64-bit word (numpy's SeedSequence takes any such integer).
SEED_MAX = 2**64 - 1


def _shown(value: Any) -> str:
    """``repr(value)``, cut to 80 characters."""
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def range_message(name: str, allowed: str, value: Any, note: str = "") -> str:
    """The one wording of a range error: ``{name} must be {allowed}; got {value!r}``, then `` ({note})``.

    Examples
    --------
    >>> range_message("--eps-geo", "a number in [2^-52, 100]", "0")
    "--eps-geo must be a number in [2^-52, 100]; got '0'"
    """
    return f"{name} must be {allowed}; got {_shown(value)}" + (f" ({note})" if note else "")


def bound_text(x: float) -> str:
    """A range end as errors and --help write it: ``700``, ``1e-6``, ``2^53``, ``2^-52``, ``inf``.

    Examples
    --------
    >>> [bound_text(x) for x in (700.0, 1e-6, 1e-300, 2**53, 2**64 - 1, 2.0**-52, math.inf, 0.5)]
    ['700', '1e-6', '1e-300', '2^53', '2^64 - 1', '2^-52', 'inf', '0.5']
    """
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if float(x).is_integer() and abs(x) >= 2**32:
        for minus in (0, 1):
            k = int(x + minus).bit_length() - 1
            if int(x) + minus == 2**k:
                return f"2^{k}" + (" - 1" if minus else "")
    if 0 < x < 1e-12 and math.frexp(x)[0] == 0.5:
        return f"2^{math.frexp(x)[1] - 1}"
    return re.sub(r"e([+-])0*(\d)", lambda m: "e" + m.group(1).replace("+", "") + m.group(2), f"{x:g}")


@dataclass(frozen=True)
class Interval:
    """The accepted range of a number, written the same way in every error and --help.

    Parameters
    ----------
    low, high : float
        The ends (``high`` may be ``math.inf``, always excluded).
    low_open, high_open : bool
        Whether each end is excluded: ``(`` / ``)``; included ends are ``[`` / ``]``.
    integer : bool
        Integers only (integer-valued floats such as ``1e6`` are accepted).

    Examples
    --------
    >>> delta = Interval(1e-300, 1.0, high_open=True)
    >>> str(delta), delta.allowed, 0.5 in delta, 1.0 in delta
    ('[1e-300, 1)', 'a number in [1e-300, 1)', True, False)
    >>> delta.check(0.0, "delta")
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyParameterError: delta must be a number in [1e-300, 1); got 0.0
    >>> Interval(1, 2**53, integer=True).check("10000", "n")
    Traceback (most recent call last):
    ...
    shuffledp.errors.ParameterTypeError: n must be an integer in [1, 2^53]; got '10000'
    """

    low: float
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False
    integer: bool = False

    def __str__(self) -> str:
        left = "(" if self.low_open else "["
        right = ")" if self.high_open or math.isinf(self.high) else "]"
        return f"{left}{bound_text(self.low)}, {bound_text(self.high)}{right}"

    @property
    def allowed(self) -> str:
        """What the range accepts, as errors and --help write it: ``a number in [1e-6, 700]``."""
        return f"{'an integer' if self.integer else 'a number'} in {self}"

    def __contains__(self, x: Any) -> bool:
        """Whether the number ``x`` (an int of any size, or a float) lies in the range."""
        if not isinstance(x, numbers.Integral):
            x = float(x)
            if not math.isfinite(x) or (self.integer and not x.is_integer()):
                return False
        low_ok = x > self.low if self.low_open else x >= self.low
        high_ok = x < self.high if self.high_open else x <= self.high
        return low_ok and high_ok

    def error(
        self, name: str, value: Any, note: str = "", cls: type[ShuffleDPError] = PrivacyParameterError
    ) -> ShuffleDPError:
        """The error for ``value`` outside the range (`range_message`), of class ``cls``."""
        return cls(range_message(name, self.allowed, value, note))

    def check(self, value: Any, name: str, note: str = "", cls: type[ShuffleDPError] = PrivacyParameterError) -> Any:
        """``value`` as a float (an int if `integer`) in the range; a wrong type raises `ParameterTypeError`.

        A number is a real number (numpy scalars included), never a bool or a string; an integer
        is an int or an integer-valued float.  Out of range raises ``cls`` with the same words.
        """
        if isinstance(value, (bool, np.bool_, str, bytes)) or not isinstance(value, numbers.Real):
            raise self.error(name, value, note, ParameterTypeError)
        number = int(value) if isinstance(value, numbers.Integral) else float(value)
        if number not in self:
            raise self.error(name, value, note, cls)
        return int(number) if self.integer else float(number)


def check_real(value: Any, name: str) -> float:
    """``value`` as a float if it is a real number (numpy scalars included); never a bool or a numeric string.

    Examples
    --------
    >>> check_real(np.float32(0.5), "low")
    0.5
    >>> check_real("0", "low")
    Traceback (most recent call last):
    ...
    shuffledp.errors.ParameterTypeError: low must be a number; got '0'
    """
    if isinstance(value, (bool, np.bool_, str, bytes)) or not isinstance(value, numbers.Real):
        raise ParameterTypeError(range_message(name, "a number", value))
    return float(value)


#: Epsilons accepted by `check_epsilon`.
EPSILON_RANGE = Interval(EPSILON_MIN)


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float, or raise if it is not a number in `EPSILON_RANGE` = [2^-52, inf).

    Examples
    --------
    >>> check_epsilon(0, "eps0")
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyParameterError: eps0 must be a number in [2^-52, inf); got 0
    """
    tiny = isinstance(epsilon, numbers.Real) and 0 < epsilon < EPSILON_MIN
    return EPSILON_RANGE.check(epsilon, name, "below 2^-52, e^epsilon rounds to 1 in float64" if tiny else "")


def check_probability(value: Any, name: str, *, open_low: bool = True, open_high: bool = True) -> float:
    """Return ``value`` as a float in the interval (0, 1) (ends as requested); a number (`check_real`)."""
    return Interval(0.0, 1.0, low_open=open_low, high_open=open_high).check(value, name)


def check_nonnegative(value: Any, name: str) -> float:
    """Return ``value`` as a float, or raise if it is not a number in [0, inf) (e.g. an epsilon that may be 0)."""
    return Interval(0.0).check(value, name)


def check_rtol(value: Any, name: str = "rtol", low: float = 1e-12, high: float = 1e-2) -> float:
    """A relative precision in [low, high] (a number, `check_real`); raises PrivacyParameterError otherwise."""
    return Interval(low, high).check(value, name)


def check_positive_int(value: Any, name: str, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` as an int in [``minimum``, ``maximum``] (no upper limit if None).

    Integer-valued floats (``1e6``) are accepted; a string or a bool raises `ParameterTypeError`.
    """
    return Interval(minimum, math.inf if maximum is None else maximum, integer=True).check(value, name)


def check_rng(rng: np.random.Generator | None) -> np.random.Generator:
    """``None`` means a fresh generator seeded from OS entropy (DESIGN.md)."""
    if rng is None:
        return np.random.default_rng()
    if not isinstance(rng, np.random.Generator):
        shown = repr(rng) if len(repr(rng)) <= 40 else repr(rng)[:37] + "..."
        raise ArgumentTypeError(
            f"rng must be a numpy.random.Generator or None (e.g. numpy.random.default_rng(0)), got {type(rng).__name__} {shown}"
        )
    return rng


def as_points(X: Any, dim: int, name: str = "X") -> np.ndarray:
    """Return ``X`` as a float64 array of shape (n, dim).

    A single point of shape (dim,) is accepted only when ``dim > 1`` is ambiguous-free;
    1-d input of length n is accepted for dim == 1 as n points.
    """
    arr = np.asarray(X, dtype=np.float64) if not isinstance(X, np.ndarray) or X.dtype != np.float64 else X
    if arr.ndim == 1 and dim == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2 or arr.shape[1] != dim:
        raise ShapeError(f"{name} must have shape (n, {dim}), got shape {arr.shape}")
    return arr


def as_index_array(X: Any, name: str = "X") -> np.ndarray:
    """Return ``X`` as a 1-d int64 array (categorical inputs)."""
    arr = np.asarray(X)
    if arr.ndim != 1:
        raise ShapeError(f"{name} must be a 1-d array of category indices, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        if np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise ShapeError(f"{name} must hold integer category indices, got dtype {arr.dtype}")
    return arr.astype(np.int64, copy=False)
