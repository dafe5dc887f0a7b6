"""Metric privacy with a shuffler (Athanasiou, Chatzikokolakis, Palamidessi, PoPETs 2025).

RR-Shuffle, Geo-Shuffle and SGDL-Shuffle: local randomizers that send unary bit messages, the
shuffler of bits, and the analysts' debiased sums; Geo-Local and Geo-Central baselines.  Their
guarantees are computed in `shuffledp.accounting.metric`.
"""

from shuffledp.protocols.metric._base import (
    MAX_DRAWS,
    MAX_MATERIALIZED_BITS,
    UnaryShuffleProtocol,
    check_values,  # noqa: F401 (a validator kept at its old path, not API)
    shuffle_bits,
)
from shuffledp.protocols.metric.baselines import GeoCentral, GeoLocal
from shuffledp.protocols.metric.calibrated import MECHANISMS, calibrated_mechanisms
from shuffledp.protocols.metric.geo_shuffle import GeoShuffle
from shuffledp.protocols.metric.rr_shuffle import RRShuffle
from shuffledp.protocols.metric.sgdl_shuffle import SGDLShuffle, sgdl_noise

__all__ = [
    "GeoCentral",
    "GeoLocal",
    "GeoShuffle",
    "MAX_DRAWS",
    "MAX_MATERIALIZED_BITS",
    "MECHANISMS",
    "RRShuffle",
    "SGDLShuffle",
    "UnaryShuffleProtocol",
    "calibrated_mechanisms",
    "sgdl_noise",
    "shuffle_bits",
]
