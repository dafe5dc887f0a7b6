"""Wrong argument types and non-finite inputs get the right error class and advice that works."""

from __future__ import annotations

import numpy as np
import pytest

from shuffledp.errors import ArgumentTypeError, DomainError, ShapeError
from shuffledp.randomizers import KRandomizedResponse, Laplace, MinkowskiResponse, PrivUnit


@pytest.mark.parametrize("rng", [0, 42, "seed", np.random.RandomState(0)])
def test_an_rng_that_is_not_a_generator_is_a_type_error(rng):
    for R, X in ((MinkowskiResponse(1.0, dim=2), np.zeros((3, 2))), (KRandomizedResponse(1.0, 3), np.array([0, 1]))):
        with pytest.raises(ArgumentTypeError, match="rng must be a numpy.random.Generator") as info:
            R.randomize(X, rng)
        assert isinstance(info.value, TypeError) and not isinstance(info.value, ShapeError)


@pytest.mark.parametrize("R", [MinkowskiResponse(1.0, dim=2), Laplace(1.0, dim=2), PrivUnit(1.0, 2)])
def test_nan_advice_does_not_suggest_clip_which_refuses_nan(R):
    X = np.array([[0.0, 0.0], [np.nan, 0.0]]) if not isinstance(R, PrivUnit) else np.array([[1.0, 0.0], [np.nan, 0.0]])
    with pytest.raises(DomainError) as info:
        R.randomize(X, np.random.default_rng(0))
    message = str(info.value)
    assert "X[1]" in message and "not finite" in message and "pass clip=True" not in message
    with pytest.raises(DomainError):  # the advice is right: clipping does not help
        R.randomize(X, np.random.default_rng(0), clip=True)


def test_out_of_domain_finite_rows_still_advise_clip():
    R = MinkowskiResponse(1.0, dim=2)
    with pytest.raises(DomainError, match="pass clip=True"):
        R.randomize(np.array([[0.0, 0.0], [2.0, 0.0]]), np.random.default_rng(0))
    R.randomize(np.array([[0.0, 0.0], [2.0, 0.0]]), np.random.default_rng(0), clip=True)
