"""Privacy-amplification accounting for the shuffle model.

Privacy events (`events`) describe what a protocol released;
accountants (`VariationRatioAccountant`, `CloneAccountant`,
`ClosedFormAccountant`, `PLDAccountant`) price them, and `calibrate` is
the one inverse.  Bounds (`shuffle_epsilon`, `shuffle_epsilon_lower`, `available_methods`),
their inverse (`local_epsilon`), the exact curve of shuffled binary RR
(`binary_rr_exact_epsilon`), composition over rounds (``composed_*``,
``*_composition``, `shuffle_pld`) and the population left to hide among
(`anonymous_population`, `matching_population`).  Modules are imported on
first use (randomizers import `shuffledp.params` and never this package).

Examples
--------
>>> from shuffledp.accounting import (
...     ComposedEvent, PLDAccountant, ShuffleEvent, VariationRatio, local_epsilon, shuffle_epsilon)
>>> round(shuffle_epsilon(10_000, 1e-6, eps0=2.0), 4)
0.1144
>>> round(local_epsilon(1.0, 10_000, 1e-6), 3)
5.47
>>> rounds = ComposedEvent([ShuffleEvent(VariationRatio.from_ldp(2.0), 10_000)] * 2)
>>> round(PLDAccountant().compose(rounds).get_epsilon(1e-6), 3)
0.166
"""

from shuffledp._util.lazy import lazy_exports

_BOUNDS = "shuffledp.accounting.bounds"
_COMPOSITION = "shuffledp.accounting.composition"
_POPULATION = "shuffledp.accounting.population"
_ACCOUNTANTS = "shuffledp.accounting.accountants"
_EVENTS = "shuffledp.accounting.events"
_EXPORTS = {
    "VariationRatio": "shuffledp.params",
    "Accountant": _ACCOUNTANTS,
    "CloneAccountant": _ACCOUNTANTS,
    "ClosedFormAccountant": _ACCOUNTANTS,
    "PLDAccountant": "shuffledp.accounting.pld_accountant",
    "VariationRatioAccountant": _ACCOUNTANTS,
    "calibrate": _ACCOUNTANTS,
    "ShuffleEvent": _EVENTS,
    "LinkedEvent": _EVENTS,
    "GroupEvent": _EVENTS,
    "ComposedEvent": _EVENTS,
    "SelfComposedEvent": _EVENTS,
    "SampledEvent": _EVENTS,
    "PersonalizedShuffleEvent": _EVENTS,
    "best_composed_epsilon": _COMPOSITION,
    "available_methods": _BOUNDS,
    "shuffle_epsilon": _BOUNDS,
    "shuffle_epsilon_lower": _BOUNDS,
    "local_epsilon": "shuffledp.accounting.inverse",
    "binary_rr_exact_delta": "shuffledp.accounting.exact_rr",
    "binary_rr_exact_epsilon": "shuffledp.accounting.exact_rr",
    "COMPOSITION_METHODS": _COMPOSITION,
    "PrivacyLossDistribution": _COMPOSITION,
    "advanced_composition": _COMPOSITION,
    "basic_composition": _COMPOSITION,
    "composed_local_epsilon": _COMPOSITION,
    "composed_shuffle_epsilon": _COMPOSITION,
    "group_composition": _COMPOSITION,
    "shuffle_pld": _COMPOSITION,
    "tight_composition_epsilon": _COMPOSITION,
    "anonymous_population": _POPULATION,
    "matching_population": _POPULATION,
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = sorted(_EXPORTS)
