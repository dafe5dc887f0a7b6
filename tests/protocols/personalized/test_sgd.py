"""Algorithm 1 (issue 10): learns with little noise, degrades with a lot, line 7's noise scale, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from shuffledp.errors import PrivacyParameterError, ShapeError
from shuffledp.protocols.personalized import personalized_sgd


def blobs(rng, n=600):
    centers = np.array([[-3, 0], [3, 0], [0, 3]])
    y = np.repeat([0, 1, 2], n // 3)
    return centers[y] + rng.normal(0, 1, (n, 2)), y


def accuracy(theta, X, y):
    return float(np.mean(np.argmax(X @ theta, axis=1) == y))


def test_learns_with_weak_noise_and_not_with_strong():
    rng = np.random.default_rng(0)
    X, y = blobs(rng)
    good = personalized_sgd(X, y, np.full(30, 50.0), np.full(30, 1e-5), rng, epochs=5)
    bad = personalized_sgd(X, y, np.full(30, 1e-4), np.full(30, 1e-5), rng, epochs=5)
    assert accuracy(good, X, y) > 0.9
    assert accuracy(bad, X, y) < 0.8


def test_noise_scale_is_line_7():
    # X = 0: every gradient is 0, theta moves only by the noise: total variance T * m * (lr sigma)^2 per entry
    rng = np.random.default_rng(1)
    m, eps, delta, lr, C, T = 10, 0.5, 1e-5, 0.05, 2.0, 4
    X, y = np.zeros((100, 50)), np.zeros(100, dtype=int)
    y[:50] = 1
    theta = personalized_sgd(X, y, np.full(m, eps), np.full(m, delta), rng, epochs=T, lr=lr, clip=C)
    sigma = 2 * C / m * np.sqrt(2 * np.log(1.25 / delta)) / eps
    ratio = theta.var() / (T * m * (lr * sigma) ** 2)
    assert 0.8 < ratio < 1.2  # 100 entries: sd of the ratio ~ 0.14


def test_bad_input():
    rng = np.random.default_rng(0)
    X, y = blobs(rng, 60)
    with pytest.raises(ShapeError, match="multiple"):
        personalized_sgd(X, y, np.ones(7), np.full(7, 1e-5), rng)
    with pytest.raises(ShapeError, match="delta"):
        personalized_sgd(X, y, np.ones(6), np.full(5, 1e-5), rng)
    with pytest.raises(PrivacyParameterError, match="delta"):
        personalized_sgd(X, y, np.ones(6), np.full(6, 1.0), rng)
    with pytest.raises(PrivacyParameterError, match="eps"):
        personalized_sgd(X, y, np.zeros(6), np.full(6, 1e-5), rng)
