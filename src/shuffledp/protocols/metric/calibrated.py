"""The four mechanisms of the metric paper's experiments tuned to one (epsilon, delta) (§6.1).

Geo-Local at eps_geo = eps (pure); RR-Shuffle with p from Theorem 3.1 (absent where its validity
condition fails); Geo-Shuffle with the largest eps_geo whose guarantee is eps; SGDL-Shuffle at eps
(Theorem 5.1).  ``geo_method`` / ``rr_method`` pick Geo-Shuffle's / RR-Shuffle's guarantee:
``"theorem-4.1"`` / ``"theorem-3.1"`` (the defaults here: this helper reproduces the paper's §6 calibration,
which is NOT a valid bound for datasets far apart) or ``"certified"`` (valid for every pair; at k = 1000 it
certifies no gain over the local epsilon).  SGDL-Shuffle is always run at eps (Theorem 5.1's claim; its
certified guarantee is `shuffledp.protocols.metric.SGDLShuffle.shuffle_epsilon`).
"""

from __future__ import annotations

from shuffledp.errors import ValidityConditionError
from shuffledp.protocols.metric.baselines import GeoLocal
from shuffledp.protocols.metric.geo_shuffle import GeoShuffle
from shuffledp.protocols.metric.rr_shuffle import RRShuffle
from shuffledp.protocols.metric.sgdl_shuffle import SGDLShuffle

__all__ = ["MECHANISMS", "calibrated_mechanisms"]

#: Mechanism names in the paper's table order.
MECHANISMS = ("geo-local", "rr-shuffle", "geo-shuffle", "sgdl-shuffle")


def calibrated_mechanisms(
    epsilon: float, delta: float, n: int, k: int, *, geo_method: str = "theorem-4.1", rr_method: str = "theorem-3.1"
) -> dict[str, object]:
    """name -> mechanism at (epsilon, delta) for n users with values in {0..k}; RR-Shuffle's entry is the
    `shuffledp.errors.ValidityConditionError` (naming the minimum n) where Theorem 3.1 cannot reach epsilon.

    Parameters
    ----------
    epsilon : float, > 0
        The common target epsilon.
    delta : float, in (0, 1)
        The common target delta.
    n : int, >= 1
        Number of users.
    k : int, >= 1
        Largest value.
    geo_method : {"theorem-4.1", "certified"}
        Geo-Shuffle's analysis.
    rr_method : {"theorem-3.1", "certified"}
        RR-Shuffle's analysis (``"certified"`` never raises: p = 2 / (1 + e^eps) always qualifies).

    Returns
    -------
    dict
        `MECHANISMS` -> mechanism (or, for "rr-shuffle", the `ValidityConditionError`).

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §6.1.

    Examples
    --------
    >>> mechs = calibrated_mechanisms(0.5, 1e-4, 100, 10)
    >>> tuple(mechs) == MECHANISMS, type(mechs["rr-shuffle"]).__name__  # n = 100 is too few for RR-Shuffle
    (True, 'ValidityConditionError')
    >>> mechs["sgdl-shuffle"].epsilon, mechs["geo-shuffle"].epsilon <= 0.5
    (0.5, True)
    """
    try:
        rr: object = RRShuffle.for_epsilon(epsilon, delta, k, n, method=rr_method)
    except ValidityConditionError as exc:
        rr = exc
    return {
        "geo-local": GeoLocal(epsilon, k),
        "rr-shuffle": rr,
        "geo-shuffle": GeoShuffle.for_epsilon(epsilon, delta, n, k, method=geo_method),
        "sgdl-shuffle": SGDLShuffle(epsilon, delta, n, k),
    }
