"""Input domains of local randomizers.

A domain knows membership, how to describe itself in an error message, how to
clip (only when the caller explicitly asks), and how to draw uniform points.
``check`` is the one boundary every randomizer calls before touching data:
it raises `DomainError` naming the first offending
row instead of silently changing anything.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np

from shuffledp._util.validation import as_index_array, as_points
from shuffledp.errors import DomainError, ShapeError

__all__ = ["Box", "Categorical", "Domain", "IntegerRange", "L2Ball", "Subsets", "UnitSphere"]


class Domain(ABC):
    """A set of admissible inputs, vectorised over rows.

    Concrete domains: `Box`, `L2Ball`, `UnitSphere`,
    `Categorical`, `IntegerRange`, `Subsets`.
    """

    @abstractmethod
    def coerce(self, X: Any) -> np.ndarray:
        """Return ``X`` as the canonical array type, or raise ``ShapeError``."""

    @abstractmethod
    def contains(self, X: np.ndarray) -> np.ndarray:
        """Boolean mask: which rows of a coerced ``X`` lie in the domain."""

    @abstractmethod
    def describe(self) -> str:
        """Short human-readable description used in error messages."""

    def clip(self, X: np.ndarray) -> np.ndarray:
        raise DomainError(f"clip=True is not supported for the domain {self.describe()}")

    @abstractmethod
    def sample_uniform(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` points drawn uniformly from the domain."""

    def _quick_all_inside(self, X: np.ndarray) -> bool:
        """Cheap sufficient test that every row is inside (False means: check row by row)."""
        return False

    def check(self, X: Any, *, clip: bool = False, name: str = "X") -> np.ndarray:
        """Coerce ``X`` and verify every row lies in the domain.

        With ``clip=True`` rows outside are projected onto the domain instead
        (the only way data is ever changed, and only on request).

        Parameters
        ----------
        X : array_like
            The rows to check.
        clip : bool, default False
            Project rows outside onto the domain instead of raising.
        name : str, default "X"
            Name of the argument in error messages.

        Returns
        -------
        numpy.ndarray
            ``X`` coerced to the domain's array type (projected if ``clip``).

        Raises
        ------
        ShapeError
            When ``X`` does not have the domain's shape.
        DomainError
            For a row outside the domain (naming the first one), unless ``clip``;
            also when ``clip`` is asked of a domain that cannot project.

        Examples
        --------
        >>> from shuffledp.randomizers import Box
        >>> Box(2).check([[0.5, 2.0]], clip=True)
        array([[0.5, 1. ]])
        >>> Box(2).check([[0.5, 0.5], [0.5, 2.0]])
        Traceback (most recent call last):
            ...
        shuffledp.errors.DomainError: X[1] = [0.5 2. ] lies outside the input domain [-1, 1]^2 ...
        """
        arr = self.coerce(X)
        if self._quick_all_inside(arr):
            return arr
        inside = self.contains(arr)
        if inside.all():
            return arr
        if clip:
            return self.clip(arr)
        row = int(np.flatnonzero(~inside)[0])
        shown = np.array2string(np.asarray(arr[row]), precision=6)
        finite = np.isfinite(arr).reshape(len(arr), -1).all(axis=1) if np.issubdtype(arr.dtype, np.number) else None
        if finite is not None and not finite[row]:  # clip=True refuses NaN and inf: advise what works
            raise DomainError(
                f"{name}[{row}] = {shown} is not finite (NaN or inf; {int((~finite).sum())} of {len(arr)} rows are "
                f"not); drop or impute such rows before randomizing (clip=True projects finite values only)"
            )
        raise DomainError(
            f"{name}[{row}] = {shown} lies outside "
            f"the input domain {self.describe()} ({int((~inside).sum())} of {len(arr)} rows are outside; "
            "pass clip=True to project them onto the domain)"
        )


@dataclass(frozen=True)
class Box(Domain):
    """The cube [low, high]^dim (the l-infinity ball; [-1,1]^d by default), rows of an (n, dim) array.

    Examples
    --------
    >>> from shuffledp.randomizers import Box
    >>> box = Box(2)
    >>> box.describe(), box.l1_diameter
    ('[-1, 1]^2', 4.0)
    """

    dim: int
    low: float = -1.0
    high: float = 1.0

    def __post_init__(self) -> None:
        if self.dim < 1 or not (self.low < self.high):
            raise ValueError(f"Box needs dim >= 1 and low < high, got {self}")

    def coerce(self, X: Any) -> np.ndarray:
        return as_points(X, self.dim)

    def contains(self, X: np.ndarray) -> np.ndarray:
        return np.all((self.low <= X) & (self.high >= X), axis=1)

    def _quick_all_inside(self, X: np.ndarray) -> bool:
        # NaN makes min/max NaN and both comparisons False, so NaN rows reach contains().
        return X.size > 0 and bool(X.min() >= self.low) and bool(X.max() <= self.high)

    def clip(self, X: np.ndarray) -> np.ndarray:
        if not np.all(np.isfinite(X)):
            raise DomainError("cannot clip non-finite values (NaN or inf) into the domain")
        return np.clip(X, self.low, self.high)

    def sample_uniform(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return rng.uniform(self.low, self.high, size=(n, self.dim))

    def describe(self) -> str:
        return f"[{self.low:g}, {self.high:g}]^{self.dim}"

    @property
    def l1_diameter(self) -> float:
        """Largest l1 distance between two points: dim (high - low)."""
        return self.dim * (self.high - self.low)

    @property
    def l2_diameter(self) -> float:
        """Largest l2 distance between two points: sqrt(dim) (high - low)."""
        return float(np.sqrt(self.dim) * (self.high - self.low))


def _squared_norms(X: np.ndarray) -> np.ndarray:
    """Squared l2 norm of each row: column by column at d <= 3 (einsum is 2x slower there).

    A row too large to square (1e200) gets ``inf``, which every ball refuses, without a warning.
    """
    with np.errstate(over="ignore"):
        if X.ndim != 2 or X.shape[1] > 3:
            return np.einsum("ij,ij->i", X, X)
        sq = X[:, 0] * X[:, 0]
        for k in range(1, X.shape[1]):
            sq += X[:, k] * X[:, k]
        return sq


@dataclass(frozen=True)
class L2Ball(Domain):
    """The Euclidean ball {x : ||x||_2 <= radius} in R^dim, rows of an (n, dim) array.

    Examples
    --------
    >>> from shuffledp.randomizers import L2Ball
    >>> L2Ball(2).contains(L2Ball(2).coerce([[0.6, 0.8], [0.8, 0.8]]))
    array([ True, False])
    """

    dim: int
    radius: float = 1.0

    def __post_init__(self) -> None:
        if self.dim < 1 or not self.radius > 0:
            raise ValueError(f"L2Ball needs dim >= 1 and radius > 0, got {self}")

    def coerce(self, X: Any) -> np.ndarray:
        return as_points(X, self.dim)

    def contains(self, X: np.ndarray) -> np.ndarray:
        return _squared_norms(X) <= self.radius**2

    def clip(self, X: np.ndarray) -> np.ndarray:
        if not np.all(np.isfinite(X)):
            raise DomainError("cannot clip non-finite values (NaN or inf) into the domain")
        norms = np.linalg.norm(X, axis=1, keepdims=True)
        return X * np.minimum(1.0, self.radius / np.maximum(norms, np.finfo(float).tiny))

    def sample_uniform(self, n: int, rng: np.random.Generator) -> np.ndarray:
        g = rng.standard_normal((n, self.dim))
        g /= np.linalg.norm(g, axis=1, keepdims=True)
        return g * self.radius * rng.random((n, 1)) ** (1.0 / self.dim)

    def describe(self) -> str:
        return f"the l2 ball of radius {self.radius:g} in R^{self.dim}"


@dataclass(frozen=True)
class UnitSphere(Domain):
    """Unit vectors {x : ||x||_2 = 1} in R^dim; a norm within ``atol`` of 1 is accepted.

    Randomizers that need exact unit vectors (PrivUnit) renormalise accepted rows.

    Examples
    --------
    >>> from shuffledp.randomizers import UnitSphere
    >>> UnitSphere(2).check([[0.6, 0.8]])
    array([[0.6, 0.8]])
    """

    dim: int
    atol: float = 1e-9

    def __post_init__(self) -> None:
        if self.dim < 2 or not 0 <= self.atol < 1:
            raise ValueError(f"UnitSphere needs dim >= 2 and 0 <= atol < 1, got {self}")

    def coerce(self, X: Any) -> np.ndarray:
        return as_points(X, self.dim)

    def contains(self, X: np.ndarray) -> np.ndarray:
        return np.abs(np.linalg.norm(X, axis=1) - 1.0) <= self.atol

    def clip(self, X: np.ndarray) -> np.ndarray:
        norms = np.linalg.norm(X, axis=1, keepdims=True)
        if not np.all(np.isfinite(X)) or np.any(norms == 0):
            raise DomainError("cannot project zero or non-finite rows onto the unit sphere")
        return X / norms

    def sample_uniform(self, n: int, rng: np.random.Generator) -> np.ndarray:
        g = rng.standard_normal((n, self.dim))
        return g / np.linalg.norm(g, axis=1, keepdims=True)

    def describe(self) -> str:
        return f"the unit sphere in R^{self.dim} (| ||x||_2 - 1 | <= {self.atol:g})"


@dataclass(frozen=True)
class Categorical(Domain):
    """The categories {0, ..., k-1}, given as a 1-d integer array.

    Examples
    --------
    >>> from shuffledp.randomizers import Categorical
    >>> Categorical(3).check([0, 2, 1])
    array([0, 2, 1])
    """

    k: int

    def __post_init__(self) -> None:
        if self.k < 2:
            raise ValueError(f"Categorical needs k >= 2 categories, got k={self.k}")

    def coerce(self, X: Any) -> np.ndarray:
        return as_index_array(X)

    def contains(self, X: np.ndarray) -> np.ndarray:
        return (X >= 0) & (self.k > X)

    def sample_uniform(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return rng.integers(0, self.k, size=n)

    def describe(self) -> str:
        return f"the categories {{0, ..., {self.k - 1}}}"


@dataclass(frozen=True)
class IntegerRange(Domain):
    """The integers {low, ..., high}, given as a 1-d integer array.

    Examples
    --------
    >>> from shuffledp.randomizers import IntegerRange
    >>> IntegerRange(0, 4).check([5, 2], clip=True)
    array([4, 2])
    """

    low: int
    high: int

    def __post_init__(self) -> None:
        if not self.low < self.high:
            raise ValueError(f"IntegerRange needs low < high, got {self}")

    def coerce(self, X: Any) -> np.ndarray:
        return as_index_array(X)

    def contains(self, X: np.ndarray) -> np.ndarray:
        return (self.low <= X) & (self.high >= X)

    def clip(self, X: np.ndarray) -> np.ndarray:
        return np.clip(X, self.low, self.high)

    def sample_uniform(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return rng.integers(self.low, self.high + 1, size=n)

    def describe(self) -> str:
        return f"the integers {{{self.low}, ..., {self.high}}}"


@dataclass(frozen=True)
class Subsets(Domain):
    """Subsets of {0, ..., k-1} of exactly ``size`` items, as an (n, k) 0/1 matrix.

    Examples
    --------
    >>> from shuffledp.randomizers import Subsets
    >>> Subsets(4, 2).contains(Subsets(4, 2).coerce([[1, 0, 1, 0], [1, 1, 1, 0]]))
    array([ True, False])
    """

    k: int
    size: int

    def __post_init__(self) -> None:
        if self.k < 2 or not 1 <= self.size <= self.k:
            raise ValueError(f"Subsets needs k >= 2 and 1 <= size <= k, got {self}")

    def coerce(self, X: Any) -> np.ndarray:
        arr = np.asarray(X)
        if arr.ndim != 2 or arr.shape[1] != self.k:
            raise ShapeError(f"X must be an (n, {self.k}) 0/1 membership matrix, got shape {arr.shape}")
        return arr

    def contains(self, X: np.ndarray) -> np.ndarray:
        binary = np.all((X == 0) | (X == 1), axis=1)
        return binary & (X.sum(axis=1) == self.size)

    def sample_uniform(self, n: int, rng: np.random.Generator) -> np.ndarray:
        order = np.argsort(rng.random((n, self.k)), axis=1)[:, : self.size]
        out = np.zeros((n, self.k), dtype=np.int8)
        np.put_along_axis(out, order, 1, axis=1)
        return out

    def describe(self) -> str:
        return f"subsets of {{0, ..., {self.k - 1}}} with exactly {self.size} items (0/1 rows)"
