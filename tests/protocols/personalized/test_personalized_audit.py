"""Issue 10 acceptance: the privacy audit of `shuffledp.audit` passes for the personalized randomizers.

The personalized protocols draw their local reports inline (Algorithm 3: binary RR with
flip probability 1/(1 + e^eps_i); Algorithm 2: x_i + Lap((high - low)/eps_i)), not through
a registry randomizer.  So the audit here runs the protocols' own code: an adapter whose
sampler *is* `personalized_frequency` / `personalized_average` (every user at the audited
budget, all with the same input, so the shuffle does not change the report law), and whose
declared law is the textbook randomizer at that budget (binary RR's matrix; Laplace on
[-1, 1] with scale 2/eps).  Budgets: the smallest, median and largest of a draw of each
Table 3 distribution.  Broken variant: a user who reports at a larger budget than declared
(2 eps + 0.5 for RR, so that the flip probabilities differ by far more than the chi-square
test's resolution at 20,000 reports even at eps = 0.05; 2 eps for Laplace).
"""

import numpy as np
import pytest

from shuffledp.audit import audit_continuous, exact_audit
from shuffledp.errors import AuditError
from shuffledp.protocols.personalized import TABLE3, personalized_average, personalized_frequency, table3_budgets
from shuffledp.randomizers import BinaryRandomizedResponse, Laplace


def _budgets():
    out = set()
    for name in TABLE3:
        draw = table3_budgets(name, 2000, np.random.default_rng(7))
        out.update(round(float(v), 4) for v in (draw.min(), np.median(draw), draw.max()))
    return sorted(out)


BUDGETS = _budgets()


class _ProtocolRR(BinaryRandomizedResponse):
    """Declares binary RR at ``epsilon``; samples with Algorithm 3's code at ``reported`` (default: the same)."""

    def __init__(self, epsilon, reported=None):
        super().__init__(epsilon)
        self.reported = epsilon if reported is None else reported

    def _randomize(self, X, rng):
        return personalized_frequency(np.asarray(X), np.full(len(X), self.reported), rng).reports


class _ProtocolLaplace(Laplace):
    """Declares Laplace on [-1, 1] at ``epsilon``; samples with Algorithm 2's code at ``reported``."""

    def __init__(self, epsilon, reported=None):
        super().__init__(epsilon, dim=1)
        self.reported = epsilon if reported is None else reported

    def _randomize(self, X, rng):
        return personalized_average(X[:, 0], np.full(len(X), self.reported), -1.0, 1.0, rng).reports[:, None]


def test_budgets_span_table3():
    assert len(BUDGETS) >= 8 and min(BUDGETS) <= 0.06 and max(BUDGETS) >= 1.9


@pytest.mark.parametrize("eps", BUDGETS)
def test_algorithm3_randomizer_passes_the_exact_audit(eps):
    assert exact_audit(_ProtocolRR(eps), n_samples=20_000) == pytest.approx(eps, rel=1e-9)


@pytest.mark.parametrize("eps", [0.05, 0.5, 1.0])
def test_algorithm3_user_reporting_above_the_declared_budget_is_caught(eps):
    with pytest.raises(AuditError, match="does not realize its transition matrix"):
        exact_audit(_ProtocolRR(eps, reported=2 * eps + 0.5), n_samples=20_000)


def test_algorithm3_control_same_code_at_the_declared_budget_passes():
    """Control for the test above: the adapter with reported == declared is the honest one."""
    assert exact_audit(_ProtocolRR(1.0, reported=1.0), n_samples=20_000) == pytest.approx(1.0)


@pytest.mark.parametrize("eps", [min(BUDGETS), 0.5, 1.0, max(BUDGETS)])
def test_algorithm2_randomizer_passes_the_continuous_audit(eps):
    result = audit_continuous(
        _ProtocolLaplace(eps), n_samples=200_000, bins_per_dim=16, coords=1, rng=np.random.default_rng(2)
    )
    assert result.passed, result
    if eps >= 0.5:  # the audit has power: it sees most of the loss
        assert result.epsilon_lower > 0.5 * eps, result


@pytest.mark.parametrize("eps", [0.5, 1.0])
def test_algorithm2_user_reporting_above_the_declared_budget_is_caught(eps):
    result = audit_continuous(
        _ProtocolLaplace(eps, reported=2 * eps),
        n_samples=200_000,
        bins_per_dim=16,
        coords=1,
        rng=np.random.default_rng(2),
    )
    assert not result.passed, result


class _InexactRR(BinaryRandomizedResponse):
    """Broken variant: Algorithm 3's flip drawn as ``rng.random() < p`` (cannot realize p < 2^-53)."""

    def _randomize(self, X, rng):
        x = np.asarray(X)
        flip = 1.0 / (1.0 + np.exp(np.full(x.size, self.epsilon)))
        return rng.permutation(np.where(rng.random(x.size) < flip, 1 - x, x))


def test_algorithm3_is_exact_at_a_large_budget_where_a_float_threshold_is_caught():
    assert exact_audit(_ProtocolRR(40.0), n_samples=20_000) == pytest.approx(40.0, rel=1e-9)
    with pytest.raises(AuditError, match="does not realize its transition matrix"):
        exact_audit(_InexactRR(40.0), n_samples=20_000)
