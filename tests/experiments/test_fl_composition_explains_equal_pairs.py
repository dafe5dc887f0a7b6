"""fl-composition says why a sampled Minkowski budget equals the generic one, and only when it does."""

import re

from shuffledp.experiments.fl_composition import _pair_notes


def test_equal_budgets_get_the_single_round_reason():
    sampled = {("generic", 1.0): 4.277, ("minkowski", 1.0): 4.277, ("generic", 3.0): 3.0, ("minkowski", 3.0): 3.4}
    notes = [line for line in _pair_notes(sampled) if line]
    assert len(notes) == 1 and notes[0].startswith("Target 1:")
    own, generic = map(float, re.search(r"epsilon ([0-9.]+) vs ([0-9.]+)", notes[0]).groups())
    assert own == generic  # at eps0 = 4.277 the own decomposition gives no gain for one round


def test_different_budgets_need_no_note():
    sampled = {("generic", 1.0): 1.7, ("minkowski", 1.0): 1.96, ("generic", 3.0): 3.25, ("minkowski", 3.0): 3.41}
    assert _pair_notes(sampled) == []
