"""Experiments: one module per table or figure of the papers."""

from shuffledp.experiments.registry import (
    Claim,
    ExperimentContext,
    ExperimentOutput,
    all_experiments,
    get_experiment,
    register,
)
from shuffledp.experiments.runner import reproduce, run_experiment

__all__ = [
    "Claim",
    "ExperimentContext",
    "ExperimentOutput",
    "all_experiments",
    "get_experiment",
    "register",
    "reproduce",
    "run_experiment",
]
