"""Attack 2: an observer of both sides of the shuffler matches what goes in with what comes out.

With one HPKE layer the shuffler forwarded the bytes it received, so the observer recovered
the whole permutation.  With two layers (Prochlo), no byte string crosses the shuffler unchanged.
"""

import numpy as np
from pic_attack_harness import NetworkObserver, Rig

from shuffledp.protocols.pic.computation import PicTask


def test_a_network_observer_links_no_envelope_across_the_shuffler():
    rng = np.random.default_rng(2)
    observer = NetworkObserver()
    rig = Rig(PicTask("min-weight"), n=20, observer=observer)
    for g in (0, 1):
        rig.honest(g, 20, rng)
    rig.run_server()
    assert len(observer.inbound) == 40 and observer.outbound
    assert observer.links_by_bytes(window=16) == 0
