"""The local budgets of the three metric protocols when the shuffler is compromised (metric paper §7)."""

from __future__ import annotations

from shuffledp.accounting.metric.geo_shuffle import geo_shuffle_local_epsilon
from shuffledp.accounting.metric.rr_shuffle import rr_shuffle_local_epsilon, rr_shuffle_probability
from shuffledp.accounting.metric.sgdl_shuffle import sgdl_shuffle_local_epsilon
from shuffledp.errors import ValidityConditionError


def compromised_local_epsilons(
    epsilon_s: float, delta: float, n: int, k: int, *, geo_method: str = "certified", rr_method: str = "certified"
) -> dict[str, float | None]:
    """eps_L of the three protocols tuned to the same shuffle-model eps_S (§7, Figure 6).

    RR-Shuffle: with ``rr_method="certified"`` p from the certified inverse, then the certified local epsilon
    (`rr_shuffle_certified_local_epsilon`); with ``"theorem-3.1"`` the paper's pair, Theorem 3.1's inverse then
    Theorem 7.1 (None where either condition fails); Geo-Shuffle: eps_geo from the inverse of `geo_shuffle_epsilon`
    with ``geo_method`` (Proposition 5); SGDL-Shuffle: Theorem 7.2.  The paper's Figure 6 uses
    ``geo_method="theorem-4.1", rr_method="theorem-3.1"``.

    Parameters
    ----------
    epsilon_s : float, > 0
        The common shuffle-model epsilon.
    delta : float, in (0, 1)
        Target delta.
    n : int, >= 1
        Number of users.
    k : int, >= 1
        Largest value.
    geo_method : {"certified", "theorem-4.1"}
        Analysis of Geo-Shuffle.
    rr_method : {"certified", "theorem-3.1"}
        Analysis of RR-Shuffle (which p reaches eps_S).

    Returns
    -------
    dict
        ``{"rr-shuffle": float or None, "geo-shuffle": float, "sgdl-shuffle": float}``.

    Raises
    ------
    PrivacyParameterError
        For an argument out of range.

    References
    ----------
    metric-privacy-shuffler.txt §7, Theorems 7.1-7.2, Proposition 5, Figure 6.

    Examples
    --------
    >>> out = compromised_local_epsilons(0.5, 1e-4, 100, 10, geo_method="theorem-4.1", rr_method="theorem-3.1")
    >>> out["rr-shuffle"] is None, out["sgdl-shuffle"] == sgdl_shuffle_local_epsilon(0.5, 100)
    (True, True)
    """
    try:
        p = rr_shuffle_probability(epsilon_s, delta, k, n, method=rr_method)
        local_method = "certified" if rr_method == "certified" else "theorem-7.1"
        rr: float | None = rr_shuffle_local_epsilon(delta, p, k, method=local_method)
    except ValidityConditionError:
        rr = None
    return {
        "rr-shuffle": rr,
        "geo-shuffle": geo_shuffle_local_epsilon(epsilon_s, delta, n, k, method=geo_method),
        "sgdl-shuffle": sgdl_shuffle_local_epsilon(epsilon_s, n),
    }


__all__ = [
    "compromised_local_epsilons",
]
