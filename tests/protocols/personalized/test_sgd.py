"""Algorithm 1 (issue 10): learns with little noise, degrades with a lot, line 7's noise scale, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from shuffledp.errors import DataError, PrivacyParameterError, ShapeError
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
    good = personalized_sgd(X, y, np.full(30, 50.0), np.full(30, 1e-5), rng, epochs=5).theta
    bad = personalized_sgd(X, y, np.full(30, 1e-4), np.full(30, 1e-5), rng, epochs=5).theta
    assert accuracy(good, X, y) > 0.9
    assert accuracy(bad, X, y) < 0.8


def test_noise_scale_is_line_7():
    # X = 0: every gradient is 0, theta moves only by the noise: total variance T * m * (lr sigma)^2 per entry
    rng = np.random.default_rng(1)
    m, eps, delta, lr, C, T = 10, 0.5, 1e-5, 0.05, 2.0, 4
    X, y = np.zeros((100, 50)), np.zeros(100, dtype=int)
    y[:50] = 1
    theta = personalized_sgd(X, y, np.full(m, eps), np.full(m, delta), rng, epochs=T, lr=lr, clip=C).theta
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
    with pytest.raises(PrivacyParameterError, match="central_delta must be a number"):
        personalized_sgd(X, y, np.ones(6), np.full(6, 1e-5), rng, central_delta="1e-4")


def test_returns_the_clients_eapes_beside_theta_and_no_rigorous_bound():
    from shuffledp.accounting.personalized import eapes_epsilon

    rng = np.random.default_rng(2)
    X, y = blobs(rng, 60)
    eps, delta = np.array([0.5, 1.0, 1.0, 2.0, 0.5, 1.0]), np.array([1e-5, 1e-5, 1e-6, 1e-5, 1e-5, 1e-5])
    run = personalized_sgd(X, y, eps, delta, rng, epochs=1, central_delta=1e-3)
    assert run.theta.shape == (2, 3) and run.eps.tolist() == eps.tolist() and run.delta.tolist() == delta.tolist()
    expected = [eapes_epsilon(np.delete(eps, i), 1e-3, others_deltas=np.delete(delta, i)) for i in range(6)]
    assert (
        np.allclose(run.eapes, expected, rtol=1e-12, atol=0) and run.central_delta == 1e-3
    )  # same (eps, delta): same value
    assert run.upper is None and "not pure-DP" in run.upper_unavailable
    assert personalized_sgd(X, y, eps, delta, rng, epochs=1).eapes.size == 0  # asked for only with central_delta
    lone = personalized_sgd(X, y, np.ones(1), np.full(1, 1e-5), rng, epochs=1, central_delta=1e-3)
    assert lone.eapes.tolist() == [np.inf]  # no other client: no amplification


def test_refuses_empty_nonfinite_and_string_input_and_accepts_rng_none():
    rng = np.random.default_rng(0)
    X, y = blobs(rng, 60)
    with pytest.raises(ShapeError, match="n >= 1"):
        personalized_sgd(np.zeros((0, 2)), np.zeros(0, int), np.ones(1), np.full(1, 1e-5), rng)
    with pytest.raises(ShapeError, match="eps must hold at least one"):
        personalized_sgd(X, y, np.ones(0), np.ones(0), rng)
    bad = X.copy()
    bad[7, 1] = np.nan
    with pytest.raises(DataError, match=r"X must be finite, got nan at row 7, column 1"):
        personalized_sgd(bad, y, np.ones(6), np.full(6, 1e-5), rng)
    with pytest.raises(DataError, match="X must hold numbers"):
        personalized_sgd(X.astype(str), y, np.ones(6), np.full(6, 1e-5), rng)
    with pytest.raises(PrivacyParameterError, match="central_delta"):
        personalized_sgd(X, y, np.ones(6), np.full(6, 1e-5), rng, central_delta=2.0)
    assert personalized_sgd(X, y, np.ones(6), np.full(6, 1e-5), None, epochs=1).theta.shape == (2, 3)
