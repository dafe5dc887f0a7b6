"""The local-randomizer contract (DESIGN.md, "Core contracts").

Every randomizer is vectorised over rows: ``randomize`` takes all n inputs at
once and never loops in Python per report.  Subclasses implement
``_randomize`` (validated input in, reports out) and, when reports are not
already unbiased, ``estimate``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from shuffledp._util.validation import EPSILON_MIN, Interval, check_epsilon, check_rng
from shuffledp.errors import PrivacyParameterError
from shuffledp.params import BlanketDecomposition
from shuffledp.randomizers.domains import Domain

__all__ = ["DiscreteRandomizer", "LocalRandomizer", "MAX_DISCRETE_EPSILON"]


class LocalRandomizer(ABC):
    """An epsilon-LDP local randomizer R: domain -> outputs (DESIGN.md, "Core contracts").

    For all inputs x, x' and output sets S, P[R(x) in S] <= e^epsilon P[R(x') in S].
    Subclasses implement ``_randomize`` and, where reports are biased, ``estimate``.

    Attributes
    ----------
    epsilon : float
        The local guarantee, finite and > 0 (at most ``max_epsilon`` where set).
    domain : Domain
        The input domain (`shuffledp.randomizers.domains`).

    Examples
    --------
    >>> import numpy as np
    >>> from shuffledp.randomizers import Laplace, LocalRandomizer
    >>> R = Laplace(epsilon=1.0, dim=2)
    >>> isinstance(R, LocalRandomizer), R.epsilon, R.domain.describe()
    (True, 1.0, '[-1, 1]^2')
    >>> R.randomize(np.zeros((5, 2)), np.random.default_rng(0)).shape
    (5, 2)
    """

    #: Short registry name used by the CLI and experiments.
    name: str = ""

    #: Largest epsilon the class computes exactly (None: no limit of its own).  Classes whose
    #: parameters use e^epsilon set 700, so an overflow becomes a named error.
    max_epsilon: float | None = None

    def __init__(self, epsilon: float, domain: Domain) -> None:
        self.epsilon = check_epsilon(epsilon)
        if self.max_epsilon is not None and self.epsilon > self.max_epsilon:
            raise _epsilon_overflow(self, self.max_epsilon, epsilon)
        self.domain = domain

    def randomize(self, X: Any, rng: np.random.Generator | None = None, *, clip: bool = False) -> np.ndarray:
        """Randomize every row of ``X`` independently (vectorised: no loop per report).

        Parameters
        ----------
        X : array_like
            The inputs, one per row, in `domain` (shape (n, d) for vector
            domains, (n,) for categories and integers, (n, k) 0/1 for sets).
        rng : numpy.random.Generator or None
            Source of randomness; None draws a fresh generator from OS entropy.
        clip : bool, default False
            Project inputs outside the domain onto it instead of raising (the
            only way data is ever changed, and only on request).

        Returns
        -------
        numpy.ndarray
            One report per row.

        Raises
        ------
        DomainError
            For an input outside `domain` (naming the first offending row),
            unless ``clip=True``.
        ShapeError
            When ``X`` does not have the domain's shape.
        """
        X = self.domain.check(X, clip=clip)
        return self._randomize(X, check_rng(rng))

    @abstractmethod
    def _randomize(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Randomize validated inputs."""

    def estimate(self, Y: Any) -> np.ndarray:
        """Unbiased per-report estimates of the inputs (identity by default).

        Parameters
        ----------
        Y : array_like
            Reports of `randomize`.

        Returns
        -------
        numpy.ndarray
            Estimates with E[estimate(R(x))] = x (one-hot or membership vectors for
            categorical and set-valued randomizers).
        """
        return np.asarray(Y, dtype=np.float64)

    def amplification_parameters(self) -> BlanketDecomposition:
        """What this randomizer offers a shuffle: (eps0, beta, common_ratio) of `BlanketDecomposition`.

        eps0 bounds the density ratio between two inputs, beta their largest total variation,
        common_ratio how far the other users' laws cover the victim's common part.  The generic
        eps0-LDP values (beta = tanh(eps0/2), no common part) are always valid; subclasses
        override with their own beta and common ratio, each a proven property of the mechanism
        (checked against exact enumeration by the soundness tests).

        Returns
        -------
        BlanketDecomposition
            For the amplification bounds of `shuffledp.accounting` (docs/which-bound.md).
        """
        return BlanketDecomposition.from_ldp(self.epsilon)

    def shuffle_event(self, n: int, gamma: float = 1.0):
        """The privacy event of one shuffled release of ``n`` reports of this randomizer.

        Returns ``shuffledp.accounting.events.ShuffleEvent(self.amplification_parameters(), n, gamma)``,
        to be priced by an accountant of `shuffledp.accounting.accountants` with the bound proven for
        these parameters.  (The events
        module is imported on call, so importing the randomizers never loads the accountant.)
        """
        from shuffledp.accounting.events import ShuffleEvent

        return ShuffleEvent(self.amplification_parameters(), n, gamma)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(epsilon={self.epsilon:g}, domain={self.domain.describe()!r})"


#: Largest epsilon a discrete randomizer accepts: e^epsilon stays finite and e^-epsilon a
#: normal float64, so every probability it draws (down to about e^-epsilon) is exact.
MAX_DISCRETE_EPSILON = 700.0


def _epsilon_overflow(randomizer: LocalRandomizer, top: float, epsilon: Any) -> PrivacyParameterError:
    """The range error of an epsilon above ``top``, where e^epsilon overflows float64 for ``randomizer``."""
    note = f"for {type(randomizer).__name__}: beyond {top:g} e^epsilon overflows float64"
    return Interval(EPSILON_MIN, top).error("epsilon", epsilon, note)


class DiscreteRandomizer(LocalRandomizer):
    """A randomizer with finitely many inputs and outputs we can tabulate.

    ``transition_matrix()`` returns P with P[i, j] = Pr[R(input_i) = output_j]
    over the representative inputs ``transition_inputs()`` (all inputs, or all
    inputs up to symmetry); ``output_index(Y)`` maps reports to columns.  The
    exact privacy audit reads the matrix and samples against it
    (`shuffledp.audit`).  Rare events are drawn through the exact
    primitives of `shuffledp.randomizers._sampling`, so every probability
    of the matrix is realized at any accepted epsilon (<= ``MAX_DISCRETE_EPSILON``).
    """

    def __init__(self, epsilon: float, domain: Domain) -> None:
        super().__init__(epsilon, domain)
        if self.epsilon > MAX_DISCRETE_EPSILON:
            raise _epsilon_overflow(self, MAX_DISCRETE_EPSILON, epsilon)

    @abstractmethod
    def transition_matrix(self) -> np.ndarray:
        """Rows: inputs; columns: outputs; each row sums to 1."""

    def log_transition_matrix(self) -> np.ndarray:
        """Natural log of `transition_matrix` (subclasses override where it underflows)."""
        with np.errstate(divide="ignore"):
            return np.log(self.transition_matrix())

    @abstractmethod
    def transition_inputs(self) -> np.ndarray:
        """The inputs of the rows of `transition_matrix`, as `randomize` accepts them."""

    @abstractmethod
    def transition_outputs(self) -> np.ndarray:
        """One report per column of `transition_matrix` (`output_index` inverts it)."""

    @abstractmethod
    def output_index(self, Y: np.ndarray) -> np.ndarray:
        """Column of `transition_matrix` holding each report (-1: a report outside the table)."""
