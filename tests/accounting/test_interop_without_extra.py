"""Without the optional extra ``shuffledp[interop]`` (dp-accounting), the conversions say how to get it.

Runs whether or not dp-accounting is installed: its import is made to fail.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from shuffledp.accounting.pld import PrivacyLossDistribution
from shuffledp.errors import OptionalDependencyError, ShuffleDPError


@pytest.fixture
def no_dp_accounting(monkeypatch):
    for name in ("dp_accounting", "dp_accounting.pld"):
        monkeypatch.setitem(sys.modules, name, None)  # import of a None entry raises ImportError


def test_conversions_name_the_extra(no_dp_accounting):
    ours = PrivacyLossDistribution(step=0.5, offset=-1, pmf=np.array([0.25, 0.25, 0.5]), inf_mass=0.0)
    with pytest.raises(OptionalDependencyError, match=r"pip install 'shuffledp\[interop\]'") as info:
        ours.to_dp_accounting()
    assert isinstance(info.value, ImportError) and isinstance(info.value, ShuffleDPError)
    with pytest.raises(OptionalDependencyError, match="interop"):
        PrivacyLossDistribution.from_dp_accounting(object())
    assert ours.delta(0.0) > 0.0  # everything else works without it
