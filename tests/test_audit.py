"""The audit tools themselves."""

import math

import numpy as np
import pytest

from shuffledp.audit import exact_epsilon, extreme_pair
from shuffledp.randomizers.domains import Box, Categorical, L2Ball


def test_exact_epsilon_of_randomized_response_matrix():
    e = math.exp(1.3)
    k = 4
    P = (np.ones((k, k)) + (e - 1) * np.eye(k)) / (e + k - 1)
    assert exact_epsilon(P) == pytest.approx(1.3, abs=1e-12)


def test_exact_epsilon_is_infinite_when_an_output_is_impossible_for_one_input():
    assert exact_epsilon(np.array([[0.5, 0.5, 0.0], [0.4, 0.4, 0.2]])) == math.inf


def test_exact_epsilon_ignores_outputs_impossible_for_all_inputs():
    assert exact_epsilon(np.array([[0.5, 0.5, 0.0], [0.25, 0.75, 0.0]])) == pytest.approx(math.log(2))


def test_extreme_pairs():
    a, b = extreme_pair(Box(3))
    assert a.tolist() == [-1, -1, -1] and b.tolist() == [1, 1, 1]
    a, b = extreme_pair(L2Ball(2, 2.0))
    assert np.linalg.norm(a - b) == pytest.approx(4.0)
    with pytest.raises(TypeError, match="x0 and x1"):
        extreme_pair(Categorical(3))
