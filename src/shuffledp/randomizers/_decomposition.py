"""The `BlanketDecomposition` of a discrete randomizer, read off its transition matrix.

For every pair of inputs (x0, x1) with output laws R0, R1 (rows of the matrix) and e = e^eps0:
beta' = TV(R0, R1); the victim's common part is C = min(R0, R1) - |R0 - R1|/(e - 1); the
blanket every user's law contains is B = the column-wise minimum over all inputs, of which
r (Q0 + Q1) = |R0 - R1|/(e - 1) is already used, so the common part is covered up to the
ratio max_y C(y) / (B(y) - |R0 - R1|(y)/(e - 1)).  The decomposition takes the largest
beta' and the largest ratio over all pairs (the bound grows with both:
`shuffledp.accounting.blanket`), each rounded up.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp.params import BlanketDecomposition

#: Largest inputs^2 x outputs work array read off a matrix (otherwise the closed-form beta and ratio e^eps0 are used).
MAX_PAIR_ENTRIES = 20_000_000
#: Relative round-up of the beta and ratio computed in float64.
_ROUND_UP = 1e-9


def decomposition_from_matrix(M: np.ndarray, eps0: float, beta: float | None = None) -> BlanketDecomposition:
    """Largest total variation and common ratio over all input pairs of ``M`` (module docstring).

    Parameters
    ----------
    M : ndarray, shape (inputs, outputs)
        Transition matrix over *all* inputs (the blanket is the minimum over them).
    eps0 : float
        The randomizer's local epsilon (every ratio of M is at most e^eps0).
    beta : float, optional
        The exact largest total variation in closed form, used instead of the matrix's
        (rounded-up) value; it must be the largest over all pairs (the randomizer tests check it).

    Returns
    -------
    BlanketDecomposition

    Examples
    --------
    >>> e = math.exp(1.0)
    >>> krr = np.array([[e, 1, 1], [1, e, 1], [1, 1, e]]) / (e + 2)
    >>> d = decomposition_from_matrix(krr, 1.0)
    >>> round(d.beta, 6) == round((e - 1) / (e + 2), 6), round(d.common_ratio, 6)
    (True, 1.0)
    """
    M = np.asarray(M, dtype=np.float64)
    em1 = math.expm1(eps0)
    blanket = M.min(axis=0)
    closed_form, beta, ratio = beta, 0.0, 1.0
    rows = max(1, MAX_PAIR_ENTRIES // max(1, M.shape[0] * M.shape[1]))
    for start in range(0, M.shape[0], rows):
        R0 = M[start : start + rows, None, :]
        R1 = M[None, :, :]
        gap = np.abs(R0 - R1)
        tv = 0.5 * gap.sum(axis=2)
        beta = max(beta, float(tv.max()))
        common = np.minimum(R0, R1) - gap / em1
        room = blanket[None, None, :] - gap / em1
        with np.errstate(divide="ignore", invalid="ignore"):
            need = np.where(common > 1e-300, common / room, 1.0)
        need = np.where((room <= 0.0) & (common > 1e-300), np.inf, need)
        need = np.where(tv[:, :, None] > 0.0, need, 1.0)  # equal rows (the same input): nothing to hide
        ratio = max(ratio, float(need.max()))
    beta = min(beta * (1.0 + _ROUND_UP) if closed_form is None else closed_form, math.tanh(eps0 / 2.0))
    ratio = min(ratio * (1.0 + _ROUND_UP), math.exp(eps0))
    return BlanketDecomposition(eps0=eps0, beta=beta, common_ratio=ratio)


def matrix_is_small(inputs: int, outputs: int) -> bool:
    """Whether `decomposition_from_matrix` may be run on an inputs x outputs matrix."""
    return inputs * inputs * outputs <= MAX_PAIR_ENTRIES * 4


__all__ = ["MAX_PAIR_ENTRIES", "decomposition_from_matrix", "matrix_is_small"]
