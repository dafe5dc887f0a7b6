"""The four mechanisms of the metric paper's experiments tuned to one (epsilon, delta) (§6.1).

Geo-Local at eps_geo = eps (pure); RR-Shuffle with p from Theorem 3.1 (absent where its validity
condition fails); Geo-Shuffle with the largest eps_geo whose guarantee is eps; SGDL-Shuffle at eps
(Theorem 5.1).  ``geo_method`` picks Geo-Shuffle's guarantee: ``"theorem-4.1"`` (the default here: this
helper reproduces the paper's §6 calibration, which is NOT a valid bound for datasets far apart) or
``"certified"`` (valid for every pair; at k = 1000 it certifies no gain over Geo-Local).
"""

from __future__ import annotations

from shuffledp.errors import ValidityConditionError
from shuffledp.protocols.metric.baselines import GeoLocal
from shuffledp.protocols.metric.geo_shuffle import GeoShuffle
from shuffledp.protocols.metric.rr_shuffle import RRShuffle
from shuffledp.protocols.metric.sgdl_shuffle import SGDLShuffle

#: Mechanism names in the paper's table order.
MECHANISMS = ("geo-local", "rr-shuffle", "geo-shuffle", "sgdl-shuffle")


def calibrated_mechanisms(
    epsilon: float, delta: float, n: int, k: int, *, geo_method: str = "theorem-4.1"
) -> dict[str, object]:
    """name -> mechanism at (epsilon, delta) for n users with values in {0..k}; RR-Shuffle's entry is the
    :class:`~shuffledp.errors.ValidityConditionError` (naming the minimum n) where Theorem 3.1 cannot reach epsilon."""
    try:
        rr: object = RRShuffle.for_epsilon(epsilon, delta, k, n)
    except ValidityConditionError as exc:
        rr = exc
    return {
        "geo-local": GeoLocal(epsilon, k),
        "rr-shuffle": rr,
        "geo-shuffle": GeoShuffle.for_epsilon(epsilon, delta, n, k, method=geo_method),
        "sgdl-shuffle": SGDLShuffle(epsilon, delta, n, k),
    }
