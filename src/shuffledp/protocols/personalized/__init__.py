"""Personalized LDP in the shuffle model (E-APES paper §4): budget populations and Algorithms 1-3.

The accounting lives in `shuffledp.accounting.personalized`.
"""

from shuffledp.protocols.personalized._guarantees import eapes_by_victim
from shuffledp.protocols.personalized.budgets import TABLE3, group_budgets, read_budgets, table3_budgets
from shuffledp.protocols.personalized.estimators import PersonalizedRun, personalized_average, personalized_frequency
from shuffledp.protocols.personalized.sgd import PersonalizedSGDRun, personalized_sgd

__all__ = [
    "TABLE3",
    "PersonalizedRun",
    "PersonalizedSGDRun",
    "eapes_by_victim",
    "group_budgets",
    "personalized_average",
    "personalized_frequency",
    "personalized_sgd",
    "read_budgets",
    "table3_budgets",
]
