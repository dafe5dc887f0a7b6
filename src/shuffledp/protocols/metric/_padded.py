"""The shifted, truncated unary encoding shared by Geo-Shuffle and SGDL-Shuffle (Eq. 3 and Eq. 6).

x' = clip(x + N + c, 0, k + 2c) is sent as U(x', k + 2c) (Algorithm 1); the analyst returns
sum B - n c.  Subclasses say how the noise N is drawn and what c is.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

import numpy as np

from shuffledp._util.validation import check_rng
from shuffledp.protocols.metric._base import UnaryShuffleProtocol, check_counts, check_values, quantized_ones
from shuffledp.randomizers.unary import thermometer_encode


class PaddedUnaryProtocol(UnaryShuffleProtocol):
    """Users send U(clip(x + N + c, 0, k + 2c), k + 2c); the analyst subtracts n c.

    Subclasses set ``c`` and implement `noise`; see `GeoShuffle` and `SGDLShuffle`.

    Parameters
    ----------
    n : int, >= 1
        Number of users.
    k : int, >= 1
        Largest value.

    References
    ----------
    metric-privacy-shuffler.txt §4.1 Eq. 3 and Algorithm 3; §5.2 Eq. 6 and Algorithm 4.

    Examples
    --------
    Every user's message has k + 2c bits and its count of ones is x':

    >>> import numpy as np
    >>> from shuffledp.protocols.metric import SGDLShuffle
    >>> proto = SGDLShuffle(0.5, 1e-4, 100, 10)
    >>> x = np.arange(100) % 11
    >>> msgs = proto.randomize(x, np.random.default_rng(0))
    >>> msgs.shape == (100, 10 + 2 * proto.c)
    True
    """

    c: int

    @property
    def width(self) -> int:
        """Bits per user (the communication cost): k + 2c, or ceil((k + 2c) / Q) with granularity Q (Appendix G)."""
        return -(-(self.k + 2 * self.c) // self.granularity)

    @abstractmethod
    def noise(self, size: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        """Independent draws of one user's noise N (int64)."""

    def shifted(self, x: Any, rng: np.random.Generator | None = None, repetitions: int | None = None) -> np.ndarray:
        """x' of every user (Eq. 3 / Eq. 6): shape (n,), or (repetitions, n)."""
        x = check_values(x, self.k, self.n)
        rng = check_rng(rng)
        shape = (self.n,) if repetitions is None else (self._repetitions(repetitions), self.n)
        return np.clip(x + self.noise(shape, rng) + self.c, 0, self.k + 2 * self.c)

    def randomize(self, x: Any, rng: np.random.Generator | None = None) -> np.ndarray:
        """Every user's message U(x', k + 2c) (U_Q(x', width) with granularity Q): an (n, width) int8 thermometer code
        (at most `MAX_MATERIALIZED_BITS` bits)."""
        self._check_materialize()
        rng = check_rng(rng)
        return thermometer_encode(quantized_ones(self.shifted(x, rng), self.granularity, rng), self.width)

    def ones(self, x: Any, rng: np.random.Generator | None = None, repetitions: int | None = None) -> Any:
        """sum_i x'_i (sum_i U_Q's count with granularity Q): the number of ones in the shuffled bits."""
        rng = check_rng(rng)
        totals = quantized_ones(self.shifted(x, rng, repetitions), self.granularity, rng).sum(axis=-1)
        return int(totals) if repetitions is None else totals.astype(np.int64)

    def debias(self, ones: Any) -> Any:
        """The analyst (Algorithms 3-4): sum B - n c (Q sum B - n c with granularity Q, Appendix G)."""
        ones = check_counts(ones, self.n * self.width)
        return self.granularity * ones.astype(np.float64) - self.n * self.c
