"""Experiment registry: name -> function producing an `ExperimentOutput`.

Each experiment module registers itself with `register`; the catalog
(`EXPERIMENT_MODULES`) lists the modules imported on first use, so the
CLI stays fast and the registry has no import cycles.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from shuffledp.errors import ExperimentError

__all__ = [
    "Claim",
    "Experiment",
    "ExperimentContext",
    "ExperimentOutput",
    "NOT_TESTABLE",
    "VERDICTS",
    "combined_verdict",
    "all_experiments",
    "get_experiment",
    "register",
    "share_verdict",
]

#: Modules that define experiments (imported lazily by `all_experiments`).
EXPERIMENT_MODULES: tuple[str, ...] = (
    "shuffledp.experiments.table7",
    "shuffledp.experiments.amplification_bounds",
    "shuffledp.experiments.fl_composition",
    "shuffledp.experiments.metric_synthetic",
    "shuffledp.experiments.metric_location",
    "shuffledp.experiments.metric_boost",
    "shuffledp.experiments.metric_compromised",
    "shuffledp.experiments.personalized_bounds",
    "shuffledp.experiments.personalized_estimation",
    "shuffledp.experiments.personalized_sgd",
    "shuffledp.experiments.segmented_synthetic",
    "shuffledp.experiments.segmented_msnbc",
    "shuffledp.experiments.pic_crowdsourcing",
    "shuffledp.experiments.pic_social",
    "shuffledp.experiments.pic_costs",
    "shuffledp.experiments.pic_fl_incentives",
)


@dataclass
class ExperimentContext:
    """What an experiment gets: its options, a seeded RNG and a progress factory."""

    quick: bool
    seed: int
    out_dir: Path
    progress: Any  # shuffledp._util.progress.ProgressReporter

    def rng(self, *stream: int) -> np.random.Generator:
        """An independent generator for a named sub-stream of the run's seed."""
        return np.random.default_rng([self.seed, *stream])


#: A claim our run cannot decide (e.g. differences within the run's noise, or a quick run too short for it).
NOT_TESTABLE = "not testable"
#: What a reproduction can say of a claim of the paper.
VERDICTS = ("held", "partly", "not", NOT_TESTABLE)


@dataclass(frozen=True)
class Claim:
    """One claim of the paper, what we measured, and whether the claim held (``VERDICTS``).

    Examples
    --------
    >>> Claim("accuracy 96.78% after 50 epochs", "0.62 at 50 epochs", "not").verdict
    'not'
    """

    claim: str
    ours: str
    verdict: str

    def __post_init__(self) -> None:
        _check_verdicts({self.verdict})


def _check_verdicts(verdicts: set[str]) -> None:
    unknown = verdicts.difference(VERDICTS)
    if unknown:
        raise ExperimentError(f"verdict must be one of {', '.join(VERDICTS)}, got {sorted(unknown)[0]!r}")


def combined_verdict(verdicts: Iterable[str]) -> str:
    """One verdict for several (``VERDICTS``): held if every one held, not if none held even in part, else partly.

    The rule of an experiment's verdict from its claims' (REPORT.md) and of a claim's from its cases
    (`share_verdict`); no verdict at all is ``"not"`` (nothing was shown to hold).  Verdicts
    ``NOT_TESTABLE`` are left out (they say nothing either way; each stays listed on its own), and
    only they give ``NOT_TESTABLE``.

    Examples
    --------
    >>> combined_verdict(["held", "held"]), combined_verdict(["held", "not"]), combined_verdict(["partly", "partly"])
    ('held', 'partly', 'partly')
    >>> combined_verdict(["not", "not"]), combined_verdict([])
    ('not', 'not')
    >>> combined_verdict(["not", "not testable"]), combined_verdict(["not testable", "not testable"])
    ('not', 'not testable')
    """
    seen = set(verdicts)
    _check_verdicts(seen)
    if seen == {NOT_TESTABLE}:
        return NOT_TESTABLE
    seen.discard(NOT_TESTABLE)
    if seen == {"held"}:
        return "held"
    return "partly" if seen - {"not"} else "not"


def share_verdict(held: int, total: int) -> str:
    """The verdict of a claim checked case by case: held in every case (of at least one), partly in some, not in none.

    Examples
    --------
    >>> share_verdict(3, 3), share_verdict(1, 3), share_verdict(0, 3), share_verdict(0, 0)
    ('held', 'partly', 'not', 'not')
    """
    if not 0 <= held <= total:
        raise ExperimentError(f"held must be in [0, total = {total}], got {held}")
    return combined_verdict(["held"] * held + ["not"] * (total - held))


@dataclass
class ExperimentOutput:
    """Tidy results plus their presentation; ``claims`` open the reproduction report (`Claim`)."""

    columns: list[str]
    rows: list[dict[str, Any]]
    summary_markdown: str
    figure: Any = None  # matplotlib.figure.Figure | None
    parameters: dict[str, Any] = field(default_factory=dict)
    claims: list[Claim] = field(default_factory=list)
    #: One line: whether the paper's findings held (``reproduce`` puts it in REPORT.md; empty: none).
    findings: str = ""


@dataclass(frozen=True)
class Experiment:
    name: str
    title: str
    paper: str
    run: Callable[[ExperimentContext], ExperimentOutput]
    #: Modules the run imports beyond the library's dependencies, and the optional extra that installs them.
    requires: tuple[str, ...] = ()
    extra: str = ""

    def missing_requirement(self) -> str:
        """Why the experiment cannot run here (a module of its optional extra is not installed), or "".

        Examples
        --------
        >>> Experiment("x", "X", "-", print, requires=("no_such_module_here",), extra="fl").missing_requirement()
        "needs no_such_module_here, not installed: pip install 'shuffledp[fl]'"
        """
        missing = [m for m in self.requires if importlib.util.find_spec(m) is None]
        if not missing:
            return ""
        return f"needs {', '.join(missing)}, not installed: pip install 'shuffledp[{self.extra}]'"


_REGISTRY: dict[str, Experiment] = {}


def register(
    name: str, title: str, paper: str, *, requires: tuple[str, ...] = (), extra: str = ""
) -> Callable[[Callable], Callable]:
    """Decorator: register ``func(ctx) -> ExperimentOutput`` under ``name``.

    ``requires``: modules of the optional extra ``extra`` the run imports (`Experiment.missing_requirement`).
    """

    def wrap(func: Callable[[ExperimentContext], ExperimentOutput]) -> Callable:
        if name in _REGISTRY and _REGISTRY[name].run is not func:
            raise ExperimentError(f"experiment {name!r} is registered twice")
        _REGISTRY[name] = Experiment(name=name, title=title, paper=paper, run=func, requires=requires, extra=extra)
        return func

    return wrap


def all_experiments() -> dict[str, Experiment]:
    for module in EXPERIMENT_MODULES:
        importlib.import_module(module)
    return dict(sorted(_REGISTRY.items()))


def get_experiment(name: str) -> Experiment:
    experiments = all_experiments()
    if name not in experiments:
        raise ExperimentError(f"unknown experiment {name!r}; available: {', '.join(experiments)}")
    return experiments[name]
