"""The randomizer registry: every name builds a working randomizer of the registered class."""

import math

import numpy as np
import pytest

from shuffledp.accounting import shuffle_epsilon
from shuffledp.errors import PrivacyParameterError
from shuffledp.params import BlanketDecomposition
from shuffledp.randomizers.categorical import SubsetExponential
from shuffledp.randomizers.registry import available_randomizers, make_randomizer, randomizer_class, size_argument


@pytest.mark.parametrize("name", available_randomizers())
def test_every_registered_randomizer_builds_randomizes_and_amplifies(name):
    size = 2 if size_argument(name) == "dim" else 6
    R = make_randomizer(name, 1.5, size)
    assert isinstance(R, randomizer_class(name)) and R.epsilon == 1.5 and R.name == name
    rng = np.random.default_rng(3)
    X = R.domain.sample_uniform(500, rng)
    Y = R.randomize(X, rng)
    assert len(Y) == 500
    assert np.all(np.isfinite(R.estimate(Y)))
    params = R.amplification_parameters()
    assert isinstance(params, BlanketDecomposition) and math.exp(params.eps0) <= np.exp(1.5) * (1 + 1e-12)
    generic = shuffle_epsilon(1_000, 1e-6, eps0=1.5)
    assert shuffle_epsilon(1_000, 1e-6, params=params) <= generic * (1 + 1e-6)


def test_size_argument_and_defaults():
    assert size_argument("minkowski") == "dim" and size_argument("krr") == "k"
    assert size_argument("binary_rr") is None and size_argument("geometric") == "high"
    assert (
        make_randomizer("geometric", 1.0, 9).domain.describe() == make_randomizer("geometric", 2.0, 9).domain.describe()
    )
    R = make_randomizer("subset_exponential", 1.0, 10, size_in=3)
    assert isinstance(R, SubsetExponential) and R.size_in == 3


def test_unknown_name_lists_the_available_ones():
    with pytest.raises(PrivacyParameterError, match="unknown randomizer 'nope'; available: binary_rr, geometric"):
        make_randomizer("nope", 1.0)
    with pytest.raises(PrivacyParameterError, match="unknown randomizer"):
        size_argument("nope")


@pytest.mark.parametrize("name", ["laplace", "staircase", "square_wave", "unary", "subset_exponential", "privhs"])
def test_a_size_beyond_what_amplification_parameters_computes_is_refused(name):
    """Issue 16: laplace at dim 1e8 raised MemoryError, privhs and subset_exponential ran for minutes."""
    from shuffledp.errors import PrivacyParameterError
    from shuffledp.randomizers.registry import make_randomizer, max_size

    cap = max_size(name)
    assert cap is not None
    with pytest.raises(PrivacyParameterError, match=rf"must be an integer in \[\d, [^]]+\]; got {cap + 1}$"):
        make_randomizer(name, 3.0, dim=cap + 1)
