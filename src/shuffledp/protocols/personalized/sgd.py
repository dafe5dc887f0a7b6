"""Algorithm 1 of the E-APES paper: shuffled noisy SGD with a personalized (eps_i, delta_i) per client.

The n samples are split into m clients of n/m samples; each epoch visits the clients in
one random order pi (fixed across epochs, as the algorithm draws pi once), and step i
adds Gaussian noise N(0, sigma_i^2 I) with sigma_i = (2C/m) sqrt(2 log(1.25/delta_pi(i))) / eps_pi(i)
to the mean of the client's clipped gradients (line 7 exactly as printed: 2C/m, the
paper's scale; the replace-one sensitivity of a mean over n/m clipped gradients is
2C m / n, equal to 2C/m only when n = m^2).  The model is multinomial logistic regression
(the paper's network is not needed to exercise the algorithm).  The Gaussian mechanism is
not pure-DP, so no clone capacity applies: its central guarantee is E-APES's only, and
`personalized_sgd` returns it per client (for one epoch) beside the model, with the rigorous
bound marked unavailable and why (`PersonalizedSGDRun`).

References
----------
personalized-shuffle-eapes.txt §4.1 Algorithm 1, Table 2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from shuffledp._util.validation import check_rng
from shuffledp.errors import DataError, PrivacyParameterError, ShapeError
from shuffledp.protocols.personalized._guarantees import check_population, check_target_delta, eapes_by_victim

__all__ = ["PersonalizedSGDRun", "personalized_sgd"]

#: Why `PersonalizedSGDRun` carries no rigorous central bound.
NO_RIGOROUS_BOUND = (
    "the Gaussian mechanism is not pure-DP, so no clone capacity applies: "
    "no rigorous shuffle bound, E-APES (an approximation) only"
)


@dataclass(frozen=True)
class PersonalizedSGDRun:
    """The model of one run of Algorithm 1 and, per client, its central guarantee.

    Parameters
    ----------
    theta : numpy.ndarray
        The model, shape (features, classes).
    eps, delta : numpy.ndarray
        The clients' local budgets (eps_i, delta_i), shape (m,).
    central_delta : float or None
        The delta at which ``eapes`` is read (None when not asked for).
    eapes : numpy.ndarray
        Per client, the E-APES epsilon at ``central_delta`` of *one epoch* (the other clients'
        (eps_j, delta_j) enter; an approximation, not a bound; the epochs compose on top);
        empty when ``central_delta`` is None.
    upper : None
        The rigorous bound: unavailable for the Gaussian mechanism (see ``upper_unavailable``).
    upper_unavailable : str
        Why there is no rigorous bound.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(40, 2)), np.repeat([0, 1], 20)
    >>> run = personalized_sgd(X, y, np.full(4, 1.0), np.full(4, 1e-5), rng, epochs=1, central_delta=1e-4)
    >>> run.theta.shape, run.eapes.shape, run.upper is None
    ((2, 2), (4,), True)
    """

    theta: np.ndarray
    eps: np.ndarray
    delta: np.ndarray
    central_delta: float | None
    eapes: np.ndarray
    upper: None = None
    upper_unavailable: str = NO_RIGOROUS_BOUND


def _softmax_gradients(theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-sample gradients of the cross-entropy of softmax(X theta): shape (rows, d, classes)."""
    logits = X @ theta
    logits -= logits.max(axis=1, keepdims=True)
    prob = np.exp(logits)
    prob /= prob.sum(axis=1, keepdims=True)
    prob[np.arange(y.size), y] -= 1.0
    return X[:, :, None] * prob[:, None, :]


def personalized_sgd(
    X: np.ndarray,
    y: np.ndarray,
    eps: np.ndarray,
    delta: np.ndarray,
    rng: np.random.Generator | None = None,
    *,
    epochs: int = 50,
    lr: float = 0.05,
    clip: float = 2.0,
    central_delta: float | None = None,
) -> PersonalizedSGDRun:
    """Run Algorithm 1 with m = len(eps) clients; returns theta and the clients' E-APES guarantees.

    Parameters
    ----------
    X : array (n, d) ; y : int array (n,) of labels 0..K-1
        Finite numeric features and their labels, n >= 1.
    eps, delta : arrays (m,), the clients' budgets (eps > 0, delta in (0, 1)); m divides n
    rng : numpy.random.Generator, optional
        Source of randomness (None: a fresh generator seeded from OS entropy).
    epochs, lr, clip : T, eta and C of Table 2 (defaults 50, 0.05, 2)
    central_delta : float in (0, 1), optional
        When given, each client's E-APES epsilon of one epoch at this delta is computed.

    Returns
    -------
    PersonalizedSGDRun
        The model theta, shape (features, classes), after ``epochs`` passes, the clients'
        budgets, their E-APES epsilons (with ``central_delta``) and no rigorous bound (the
        Gaussian mechanism has no clone capacity; the reason is stated).

    Raises
    ------
    ShapeError
        For mismatched shapes, no sample or no client, or if m does not divide n.
    DataError
        If ``X`` is not finite numbers or ``y`` is not integer labels >= 0.
    PrivacyParameterError
        For a budget, delta, ``central_delta``, ``epochs``, ``lr`` or ``clip`` out of range.

    References
    ----------
    personalized-shuffle-eapes.txt §4.1, Algorithm 1 and Table 2.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(-2, 1, (200, 2)), rng.normal(2, 1, (200, 2))])
    >>> y = np.repeat([0, 1], 200)
    >>> run = personalized_sgd(X, y, np.full(20, 5.0), np.full(20, 1e-5), rng, epochs=5)
    >>> float(np.mean(np.argmax(X @ run.theta, axis=1) == y)) > 0.9
    True
    """
    X = np.asarray(X)
    y = np.asarray(y)
    eps = check_population(eps, "eps")
    delta = np.asarray(delta, dtype=np.float64).ravel()
    m = eps.size
    rng = check_rng(rng)
    if X.ndim != 2 or y.shape != (X.shape[0],) or X.shape[0] == 0:
        raise ShapeError(f"X must be (n, d) and y (n,) with n >= 1, got {X.shape} and {y.shape}")
    if X.dtype.kind not in "biuf":
        raise DataError(f"X must hold numbers, got dtype {X.dtype}")
    X = X.astype(np.float64)
    if not np.isfinite(X).all():
        bad = np.argwhere(~np.isfinite(X))[0]
        raise DataError(f"X must be finite, got {float(X[tuple(bad)])!r} at row {int(bad[0])}, column {int(bad[1])}")
    if central_delta is not None:
        central_delta = check_target_delta(central_delta, "central_delta")
    if delta.size != m:
        raise ShapeError(f"delta must have one entry per client ({m}), got {delta.size}")
    if not np.all((delta > 0.0) & (delta < 1.0)):
        raise PrivacyParameterError(f"delta must lie in (0, 1), got {delta[~((delta > 0) & (delta < 1))][0]!r}")
    if X.shape[0] % m:
        raise ShapeError(f"the number of samples ({X.shape[0]}) must be a multiple of the number of clients ({m})")
    if not np.issubdtype(y.dtype, np.integer) or y.min() < 0:
        raise DataError("y must hold integer labels 0..K-1")
    if not (
        math.isfinite(lr) and lr > 0 and math.isfinite(clip) and clip > 0 and int(epochs) == epochs and epochs >= 1
    ):
        raise PrivacyParameterError(f"epochs >= 1, lr > 0 and clip > 0 are required, got {epochs!r}, {lr!r}, {clip!r}")
    classes = int(y.max()) + 1
    clients = np.split(rng.permutation(X.shape[0]), m)  # line 1: disjoint subsets of size n/m
    sigma = (2.0 * clip / m) * np.sqrt(2.0 * np.log(1.25 / delta)) / eps  # line 7, per client
    order = rng.permutation(m)  # line 3
    theta = np.zeros((X.shape[1], classes))
    for _ in range(int(epochs)):
        for i in order:
            idx = clients[i]
            g = _softmax_gradients(theta, X[idx], y[idx])
            norms = np.sqrt(np.einsum("rdk,rdk->r", g, g))
            g /= np.maximum(1.0, norms / clip)[:, None, None]  # line 11
            noise = rng.normal(0.0, sigma[i], theta.shape)
            theta -= lr * (g.mean(axis=0) + noise)  # line 13
    if central_delta is None:
        return PersonalizedSGDRun(theta, eps, delta, None, np.empty(0))
    _, first, inverse = np.unique(np.column_stack((eps, delta)), axis=0, return_index=True, return_inverse=True)
    eapes = eapes_by_victim(eps, central_delta, first, delta)[inverse.ravel()]  # one call per distinct (eps_i, delta_i)
    return PersonalizedSGDRun(theta, eps, delta, central_delta, eapes)
