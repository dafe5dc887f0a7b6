"""Each group's epsilon_c names the proven bound that priced it and passes an independent check that can fail.

gMission instance 0's group sizes (713 users, 532 workers), Minkowski Response at epsilon_c = 1
(what `make demo` runs): the bound is the three-class decomposition with Minkowski's own total
variation, and a discretised lower bound on the true delta at epsilon_c (a post-processing of the
real output) stays below delta.  The same check flags an epsilon_c taken too small.
"""

import math

from shuffledp.protocols.pic.computation import PicTask
from shuffledp.protocols.pic.round import RoundConfig, plan_groups
from shuffledp.randomizers import MinkowskiResponse
from shuffledp.shuffle_audit import minkowski_lower_delta


def test_gmission_groups_state_their_bound_and_pass_the_check():
    config = RoundConfig(PicTask("min-weight"), "minkowski", 1.0)
    _, plans = plan_groups(config, [("users", 713), ("workers", 532)])
    for p in plans:
        p.settle(p.threshold, p.threshold, {})
        assert p.method.startswith("three-class decomposition (own beta")
        assert p.epsilon_c <= 1.0 and p.target_met
        assert p.check_passed is True and 0.0 < p.check_delta <= p.delta


def test_the_check_fails_for_an_optimistic_epsilon():
    R = MinkowskiResponse(epsilon=3.3, dim=2, norm="linf")
    n, delta = 713, 0.01 / 713
    # half the certified epsilon is not a valid guarantee: the lower bound on delta exceeds delta there
    assert minkowski_lower_delta(R, n, 0.5) > delta
    assert math.isfinite(minkowski_lower_delta(R, n, 1.0))
