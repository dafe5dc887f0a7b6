"""Metric-privacy accounting of the shuffle protocols of Athanasiou, Chatzikokolakis, Palamidessi,
*Enhancing Metric Privacy With a Shuffler* (PoPETs 2025), the "metric paper".

Guarantees are (epsilon, delta)-d_X-privacy (Definition 4): Pr[M(X) in S] <= e^(eps d) Pr[M(X') in S] + delta,
d the Manhattan distance of the datasets (Eq. 1).

* SGDL(beta, p) pmf (§4.1): the difference of two independent NB(beta, 1 - p).  The paper's series
  sum_k C(beta+k-1, k) C(beta+k-|r|-1, k-|r|) p^(2k-|r|) is (1-p)^(2 beta) p^m C(beta+m-1, m)
  2F1(beta, beta+m; m+1; p^2), m = |r|.  Pfaff's transformation turns it into a *finite sum of
  positive terms* for integer beta (no cancellation, any p):

      pmf(m) = ((1-p)/(1+p))^beta p^m sum_{j=0}^{beta-1} C(beta-1, j) Gamma(beta+m) Gamma(beta+j)
               / (Gamma(beta)^2 Gamma(m+j+1)) (p^2/(1-p^2))^j,

  summed in log space over the window of j that carries the mass (the terms are log-concave in j;
  the cut tails are bounded by geometric series and checked negligible).  For beta in (0, 1]
  (SGDL-Shuffle's 1/n) the hypergeometric series itself has positive, decreasing terms.
* RR-Shuffle: a certified epsilon (the default: the exact divergence of the released count over every pair of
  datasets, see `rr_shuffle_certified_epsilon`) beside Theorem 3.1 as printed (valid for nearby datasets only),
  with its inverse; the compromised shuffler likewise (certified, beside Theorem 7.1); the theorems keep their
  validity conditions (`shuffledp.errors.ValidityConditionError` names the minimum n / p or maximum eps).
* Geo-Shuffle: c of Proposition 2; a certified epsilon (the default: valid for every pair of datasets,
  see `geo_shuffle_certified_epsilon`) beside Theorem 4.1 as printed (max over d of ln g(-alpha, d)/d,
  valid only for sums a few noise deviations apart); their inverse; Proposition 5 (compromised shuffler).
* SGDL-Shuffle: c (Lemma C.1, see `sgdl_shuffle_c` for why the paper's value is not used as is); a certified
  epsilon (the default, `sgdl_shuffle_certified_epsilon`) beside Theorem 5.1's claim, and its inverse (the largest
  noise epsilon certified, `sgdl_shuffle_noise_epsilon`); Theorem 7.2 (compromised shuffler).
* Two dimensions (Appendix D, Theorem D.1 and Proposition 7).

The package mirrors `shuffledp.protocols.metric`: `sgdl` (the SGDL distribution), `rr_shuffle`, `geo_shuffle`,
`sgdl_shuffle`, `compromised` (all three when the shuffler is compromised), `planar` (two dimensions); the pieces
they share are private (``_common``).  Everything public is re-exported here.
"""

from __future__ import annotations

from shuffledp.accounting.metric._common import (
    DEFAULT_MAX_DISTANCE,
    MAX_DISTANCE,
    MAX_EPSILON,
    CertifiedEpsilon,
    check_noise_epsilon,  # noqa: F401 (the protocols' validator import path, not API)
)
from shuffledp.accounting.metric.compromised import (
    compromised_local_epsilons,
)
from shuffledp.accounting.metric.geo_shuffle import (
    GEO_SHUFFLE_METHODS,
    geo_shuffle_alpha,
    geo_shuffle_c,
    geo_shuffle_certificate,
    geo_shuffle_certified_epsilon,
    geo_shuffle_compromised_epsilon,
    geo_shuffle_conditioned_noise,
    geo_shuffle_epsilon,
    geo_shuffle_epsilon_paper,
    geo_shuffle_epsilons_by_distance,
    geo_shuffle_local_epsilon,
    geo_shuffle_variation_ratio_epsilon,
)
from shuffledp.accounting.metric.planar import (
    axis_budget,
    planar_guarantee,
)
from shuffledp.accounting.metric.profile import (
    PROFILE_PROTOCOLS,
    DistanceProfile,
    metric_profile,
)
from shuffledp.accounting.metric.rr_shuffle import (
    RR_LOCAL_METHODS,
    RR_MIN_P,
    RR_SHUFFLE_METHODS,
    rr_minimum_lambda,
    rr_shuffle_certificate,
    rr_shuffle_certified_epsilon,
    rr_shuffle_certified_local_epsilon,
    rr_shuffle_epsilon,
    rr_shuffle_epsilon_paper,
    rr_shuffle_local_epsilon,
    rr_shuffle_local_epsilon_paper,
    rr_shuffle_probability,
    rr_shuffle_probability_paper,
)
from shuffledp.accounting.metric.sgdl import (
    MAX_SGDL_OUTCOME,
    log_sgdl_mgf,
    log_sgdl_pmf,
    sgdl_pmf,
    sgdl_shift_divergence,
)
from shuffledp.accounting.metric.sgdl_shuffle import (
    SGDL_SHUFFLE_METHODS,
    sgdl_shuffle_c,
    sgdl_shuffle_c_paper,
    sgdl_shuffle_certificate,
    sgdl_shuffle_certified_epsilon,
    sgdl_shuffle_conditioned_noise,
    sgdl_shuffle_epsilon,
    sgdl_shuffle_epsilon_paper,
    sgdl_shuffle_local_epsilon,
    sgdl_shuffle_noise_epsilon,
    sgdl_shuffle_report_epsilon,
)

__all__ = [
    "DEFAULT_MAX_DISTANCE",
    "DistanceProfile",
    "metric_profile",
    "PROFILE_PROTOCOLS",
    "MAX_SGDL_OUTCOME",
    "RR_MIN_P",
    "MAX_EPSILON",
    "MAX_DISTANCE",
    "axis_budget",
    "CertifiedEpsilon",
    "geo_shuffle_certificate",
    "rr_shuffle_certificate",
    "sgdl_shuffle_certificate",
    "compromised_local_epsilons",
    "geo_shuffle_alpha",
    "geo_shuffle_c",
    "geo_shuffle_compromised_epsilon",
    "GEO_SHUFFLE_METHODS",
    "geo_shuffle_certified_epsilon",
    "geo_shuffle_conditioned_noise",
    "geo_shuffle_epsilon",
    "geo_shuffle_epsilon_paper",
    "geo_shuffle_epsilons_by_distance",
    "geo_shuffle_local_epsilon",
    "geo_shuffle_variation_ratio_epsilon",
    "log_sgdl_mgf",
    "log_sgdl_pmf",
    "planar_guarantee",
    "rr_minimum_lambda",
    "RR_SHUFFLE_METHODS",
    "rr_shuffle_certified_epsilon",
    "rr_shuffle_epsilon",
    "rr_shuffle_epsilon_paper",
    "RR_LOCAL_METHODS",
    "rr_shuffle_certified_local_epsilon",
    "rr_shuffle_local_epsilon",
    "rr_shuffle_local_epsilon_paper",
    "rr_shuffle_probability",
    "rr_shuffle_probability_paper",
    "sgdl_pmf",
    "sgdl_shift_divergence",
    "sgdl_shuffle_c",
    "sgdl_shuffle_c_paper",
    "SGDL_SHUFFLE_METHODS",
    "sgdl_shuffle_certified_epsilon",
    "sgdl_shuffle_conditioned_noise",
    "sgdl_shuffle_epsilon",
    "sgdl_shuffle_epsilon_paper",
    "sgdl_shuffle_report_epsilon",
    "sgdl_shuffle_local_epsilon",
    "sgdl_shuffle_noise_epsilon",
]
