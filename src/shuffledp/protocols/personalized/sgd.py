"""Algorithm 1 of the E-APES paper: shuffled noisy SGD with a personalized (eps_i, delta_i) per client.

The n samples are split into m clients of n/m samples; each epoch visits the clients in
one random order pi (fixed across epochs, as the algorithm draws pi once), and step i
adds Gaussian noise N(0, sigma_i^2 I) with sigma_i = (2C/m) sqrt(2 log(1.25/delta_pi(i))) / eps_pi(i)
to the mean of the client's clipped gradients (line 7 exactly as printed: 2C/m, the
paper's scale; the replace-one sensitivity of a mean over n/m clipped gradients is
2C m / n, equal to 2C/m only when n = m^2).  The model is multinomial logistic regression
(the paper's network is not needed to exercise the algorithm).  The Gaussian mechanism is
not pure-DP, so no clone capacity applies: its central guarantee is E-APES's only.

References
----------
personalized-shuffle-eapes.txt §4.1 Algorithm 1, Table 2.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp.accounting.personalized import check_budgets
from shuffledp.errors import DataError, PrivacyParameterError, ShapeError


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
    rng: np.random.Generator,
    *,
    epochs: int = 50,
    lr: float = 0.05,
    clip: float = 2.0,
) -> np.ndarray:
    """Run Algorithm 1 with m = len(eps) clients; returns theta, shape (features, classes).

    Parameters
    ----------
    X : array (n, d) ; y : int array (n,) of labels 0..K-1
    eps, delta : arrays (m,), the clients' budgets (eps > 0, delta in (0, 1)); m divides n
    rng : numpy.random.Generator
    epochs, lr, clip : T, eta and C of Table 2 (defaults 50, 0.05, 2)

    Returns
    -------
    numpy.ndarray
        The model theta, shape (features, classes), after ``epochs`` passes.

    Raises
    ------
    ShapeError
        For mismatched shapes, or if m does not divide n.
    DataError
        If ``y`` is not integer labels >= 0.
    PrivacyParameterError
        For a budget, delta, ``epochs``, ``lr`` or ``clip`` out of range.

    References
    ----------
    personalized-shuffle-eapes.txt §4.1, Algorithm 1 and Table 2.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(-2, 1, (200, 2)), rng.normal(2, 1, (200, 2))])
    >>> y = np.repeat([0, 1], 200)
    >>> theta = personalized_sgd(X, y, np.full(20, 5.0), np.full(20, 1e-5), rng, epochs=5)
    >>> float(np.mean(np.argmax(X @ theta, axis=1) == y)) > 0.9
    True
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    eps = check_budgets(eps, "eps")
    delta = np.asarray(delta, dtype=np.float64).ravel()
    m = eps.size
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ShapeError(f"X must be (n, d) and y (n,), got {X.shape} and {y.shape}")
    if delta.size != m:
        raise ShapeError(f"delta must have one entry per client ({m}), got {delta.size}")
    if not np.all((delta > 0.0) & (delta < 1.0)):
        raise PrivacyParameterError(f"delta must lie in (0, 1), got {delta[~((delta > 0) & (delta < 1))][0]!r}")
    if X.shape[0] % m:
        raise ShapeError(f"the number of samples ({X.shape[0]}) must be a multiple of the number of clients ({m})")
    if not np.issubdtype(y.dtype, np.integer) or y.min() < 0:
        raise DataError("y must hold integer labels 0..K-1")
    if not (math.isfinite(lr) and lr > 0 and math.isfinite(clip) and clip > 0 and int(epochs) == epochs and epochs >= 1):
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
    return theta
