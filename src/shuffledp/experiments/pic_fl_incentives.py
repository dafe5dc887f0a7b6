"""Tables 5-6 of the PIC paper (§7.3, full version Appendix E): federated learning with Shapley incentives.

Needs the optional extra ``shuffledp[fl]`` (JAX + optax for per-user gradients): ``pip install 'shuffledp[fl]'``.

Data: MNIST when its IDX files are under ``<data root>/mnist/``, else scikit-learn's bundled
8x8 digits (1,797 images), named as the substitute in every output; fewer than `min_images` (114:
10 validation and 10 test images) is a DataError.  The paper's split of
MNIST's 60,000 images (50,000 train / 5,000 validation / 5,000 test, Appendix E) is kept as
fractions (5/6, 1/12, 1/12): digits give 1,497 / 150 / 150.  Each training sample is one
user (N users); each round samples s = round(N * 10,000 / 50,000) users (the paper's rate
1/5: s = 299 of N = 1,497 on the digits).  Global budgets (1, 0.01/N) and (3, 0.01/N).

The round (§7.3):

1. **Sample.**  The shuffler draws the round's s users, a uniformly random set of exactly s
   (fixed-size), and the server never learns who was drawn: this is the secret-sample
   condition of the subsampled-shuffle accounting (`SampledEvent`).
2. **Gradient.**  Each sampled user computes the gradient of the cross-entropy on its one
   sample with the published model (the CNN of `fl_model`: Table 4, with stride 1 on the 8x8 digits;
   ``jax.vmap(jax.grad(...))``).
3. **Subsample and clip.**  Each sampled user keeps k = `FL_DIM` = 6 of the d coordinates, the
   others set to zero (§7.3: the selected users "subsample 0.15% of the gradient vector
   dimensions"): its own uniformly random k-subset, drawn afresh every round from the user's
   own randomness (`user_coordinates`), independently of the other users and of its sample and
   gradient, so the positions, sent in clear with the report, say nothing about its data.  §7.3
   keeps 0.15% of d = 4,292, i.e. 6 coordinates (Appendix B: "the subsampled gradient vector has
   6 dimensions"); 0.15% of our d = 1,592 would be 2, so we keep the paper's 6 (0.38% of d) and
   every randomizer runs at the paper's dimension.  Values are clipped to [-c, c], c = 0.00015
   (§7.3, unscaled).
4. **Sanitize.**  Each randomizer takes the kept values divided by c (a point of its domain
   [-1, 1]^6) at the round's local epsilon; the server debiases (`estimate`) and multiplies
   by c.  Randomizers: §7.3's six (Minkowski Response with the l-inf cap at dimension 6,
   Laplace, Staircase and SquareWave with the budget split over the 6 coordinates, PrivHS,
   PrivUnit) plus PrivUnitG, the project's other vector baseline (not in the paper's tables).
   PlanarLaplace is 2-dimensional only (left out, as in the paper).
5. **Aggregate and update.**  The server's estimate of coordinate j of the users' mean clipped
   gradient is (d / (k s)) times the sum of the estimates of the reports that cover j
   (`aggregate`): a user covers j with probability k / d independently of its gradient, so the
   estimate is unbiased (the paper's "sum-and-average" up to the constant d / k, which Adam's
   per-coordinate normalisation all but cancels).  The model is updated with Adam, learning
   rate 0.05 decayed by 0.99 per round (Appendix E; optax).
6. **Shapley.**  The server's Shapley value of each report for the cosine-similarity utility
   with the validation gradient (mean gradient over the validation set, Appendix E), each
   user's gradient zero off its own coordinates: exact for s <= `EXACT_MAX_PLAYERS`, else the permutation
   estimator over `SHAPLEY_PERMUTATIONS` orders (`shuffledp.tasks.order_shapley`, the sparse-Gram form of
   `shuffledp.tasks.permutation_shapley`), once on the true (clipped, subsampled) gradients
   and once on the server's estimates, with the same orders.

Non-private references train on the true clipped values with the same sampled users: with
k = 6 (as every private run), with k = `coverage_k` (74 on the digits: each
coordinate covered about 14 times a round, as the paper's 10,000 x 6 reports cover its 4,292),
and with every coordinate.  They measure how much of the gap to the paper's accuracy is the
data's scale; no private run changes k.

Metrics (§7.3): gradient l2 error, the mean over the s users of ||g^_i - g_i||_2 **in units of
c** (the randomizers' domain; the paper's values are of that scale); the Shapley error
`SHAPLEY_ERROR`, the mean over users of |Shapley^_i - Shapley_i| (the paper's "Shapley l2 error"
sum_i ||Shapley^_i - Shapley_i||_2 / |S|: a value is a scalar, so its l2 norm is its absolute
value), both averaged over the rounds; test accuracy after the last round.

Noise floor (`shapley_errors`, `noise_floor`): a round's values sum to U(N) <= 1 over s users, so
they and any uninformed estimate's error are of order 1/s.  Each round also records the Shapley error
of estimates given to the wrong users (the no-information level) and how much a second set of
orders moves the error (the estimator's part).  A difference between two cells counts only beyond
`NOISE_Z` standard errors over the rounds (final accuracy: binomial errors of the test set); the
claims read it only there and are "not testable" otherwise, as is final accuracy in ``--quick``
(20 of 80 rounds: accuracies near chance).

Per-round local budgets (for the full 80 rounds; ``--quick`` runs the first `ROUNDS_QUICK` of
the same schedule):

* LDP model: the largest eps0 whose 80 rounds, each a secret fixed-size sample of s of N users
  whose one eps0-LDP report the server sees un-shuffled (n = 1: the plain LDP curve), compose to
  (eps, 0.01/N) by tight (PLD) composition (`ldp_round_event`).  The sampling is credited under the
  same secret-sample condition as the PIC model's: every user sends a real or a dummy report each
  round, so the server cannot tell who was sampled.  Plain composition without that credit,
  eps / 80, is printed beside it;
* PIC model: the largest eps0 whose 80 rounds, each a shuffle of a secret fixed-size sample
  of s of N users, compose to (eps, 0.01/N) by tight (PLD) composition
  (`composed_local_epsilon` with ``population``, as `fl_composition` computes it; the generic
  pair of any eps0-LDP randomizer).

Both are printed beside the paper's 0.2-0.75 and 4.0-6.0, and beside the PIC budgets of the
paper's own scale (s = 10,000 of N = 50,000), at which each randomizer's single-report error is
also measured (the ``PAPER_SCALE`` rows).

Time (2 cores shared with other jobs, digits, with the Shapley noise-floor levels of every round):
full mode (80 rounds, 31 trainings) 9 min 14 s wall, 4 min 41 s CPU, at load average 5-7, and 4 min 37 s
wall, 4 min 30 s CPU, on a quieter machine; ``--quick``
(20 rounds) 2 min 28 s wall, 1 min 12 s CPU, at load 7 (the levels add about 25 s of CPU).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from shuffledp.accounting import PLDAccountant, calibrate
from shuffledp.accounting.composition import composed_local_epsilon
from shuffledp.accounting.events import SampledEvent, SelfComposedEvent, ShuffleEvent
from shuffledp.datasets import DIGITS_SUBSTITUTE_NAME
from shuffledp.errors import DataError, DomainError
from shuffledp.experiments import fl_composition
from shuffledp.experiments.pic_common import LDP, NON_PRIVATE, PIC, findings_line, fmt_num
from shuffledp.experiments.plotting import PAGE_WIDTH, bar_style, legend_and_caption, log_ticks, page_style
from shuffledp.experiments.registry import (
    NOT_TESTABLE,
    Claim,
    ExperimentContext,
    ExperimentOutput,
    combined_verdict,
    register,
    share_verdict,
)
from shuffledp.params import VariationRatio
from shuffledp.randomizers.base import LocalRandomizer
from shuffledp.randomizers.registry import make_randomizer
from shuffledp.tasks import exact_shapley, shapley_error
from shuffledp.tasks.shapley import EXACT_MAX_PLAYERS, order_shapley

__all__ = [
    "COLUMNS",
    "NAME",
    "PAPER_TABLES",
    "RANDOMIZERS",
    "RoundBudgets",
    "aggregate",
    "checked_split",
    "claims",
    "clip_values",
    "chance_level",
    "coverage_k",
    "ldp_round_event",
    "min_images",
    "noise_floor",
    "quick_run",
    "reference_ks",
    "paper_scale_errors",
    "round_budgets",
    "run",
    "run_training",
    "sample_size",
    "sanitize",
    "scaled_split",
    "scatter",
    "shapley_errors",
    "user_coordinates",
]

NAME = "pic-fl-incentives"
#: (label, registry name): §7.3's randomizers (Tables 5-6) and PrivUnitG (ours, not in the tables).
RANDOMIZERS: tuple[tuple[str, str], ...] = (
    ("Minkowski", "minkowski"),
    ("Laplace", "laplace"),
    ("Staircase", "staircase"),
    ("SquareWave", "square_wave"),
    ("PrivHS", "privhs"),
    ("PrivUnit", "privunit"),
    ("PrivUnitG", "privunit_g"),
)
ROUNDS = fl_composition.ROUNDS
ROUNDS_QUICK = 20
TARGETS = fl_composition.TARGETS
#: k: coordinates kept per round (the paper's 6 = 0.15% of its d = 4,292).
FL_DIM = fl_composition.FL_DIM
#: §7.3: gradient values clipped at c.
CLIP = 0.00015
#: Appendix E: Adam's learning rate and its decay per round.
LEARNING_RATE, LR_DECAY = 0.05, 0.99
#: Appendix E's split of MNIST's 60,000 images (train, validation, test), kept as fractions.
PAPER_SPLIT = (50_000, 5_000, 5_000)
#: §7.3: s users sampled per round of the N = 50,000 training users.
PAPER_SAMPLE, PAPER_POPULATION = fl_composition.USERS_PER_ROUND, fl_composition.POPULATION
#: §7.3: the per-round local budgets the paper reports (LDP model, PIC model).
PAPER_LDP_RANGE, PAPER_PIC_RANGE = (0.2, 0.75), fl_composition.PAPER_PER_ROUND_RANGE
SHAPLEY_PERMUTATIONS = 256
#: How the run computes Shapley values (meta.json's ``shapley``).
SHAPLEY_METHOD = f"exact for s <= {EXACT_MAX_PLAYERS}, else order_shapley over {SHAPLEY_PERMUTATIONS} random orders"
#: Table 4's d on MNIST.
PAPER_DIM = 4_292
#: Label of the non-private run whose users keep `coverage_k` coordinates (each covered as often as in the paper).
PAPER_COVERAGE = "non-private, paper's coverage"
#: Label of the non-private run whose users keep every coordinate (clipping only, no subsampling).
ALL_COORDINATES = "non-private, all coordinates"
WIDER = (PAPER_COVERAGE, ALL_COORDINATES)
#: §7.3's "Shapley l2 error": mean over the s users of |Shapley^_i - Shapley_i| (a value is a scalar).
SHAPLEY_ERROR = "shapley_mean_abs_error"
#: The Shapley error of estimates given to the wrong users (no information about each user's gradient).
SHAPLEY_NO_INFORMATION = "shapley_error_no_information"
#: How much the estimator's orders alone move the Shapley error, and the true values (two sets of orders).
SHAPLEY_ESTIMATOR_SPREAD, SHAPLEY_VALUE_SPREAD = "shapley_error_estimator_spread", "shapley_value_estimator_spread"
#: Per-round levels the Shapley error is read against (private runs only).
SHAPLEY_LEVELS = (SHAPLEY_NO_INFORMATION, SHAPLEY_ESTIMATOR_SPREAD, SHAPLEY_VALUE_SPREAD)
METRICS = ("test_accuracy", "gradient_l2_error", SHAPLEY_ERROR)
#: Standard errors (over the rounds) a difference must exceed to count: about 95% two-sided.
NOISE_Z = 2.0
#: Test accuracy by chance: 10 classes.
CHANCE = 0.1
#: The fewest validation and test images a run accepts: one per class.
MIN_HELD_OUT = 10
#: ``dataset``: the images trained on (`DIGITS_SUBSTITUTE_NAME` or "mnist"); empty on the `PAPER_SCALE` rows (no data).
COLUMNS = ["dataset", "epsilon", "model", "randomizer", "local_epsilon", "round", "metric", "value"]
#: Rows of single-report errors at the PIC budgets of the paper's scale (s = 10,000 of N = 50,000).
PAPER_SCALE = "PIC at the paper's scale"
#: Inputs of that check: corners of [-1, 1]^6 (a clipped value at +-c), this many.
PAPER_SCALE_INPUTS = 20_000

#: Tables 5-6 (target eps -> model -> randomizer -> (test accuracy %, gradient l2 error, Shapley l2 error)).
PAPER_TABLES: dict[float, dict[str, dict[str, tuple[float, float, float]]]] = {
    1.0: {
        LDP: {"Staircase": (18.29, 15.30, 0.0586), "SquareWave": (13.91, 13.23, 0.0590),
              "PrivHS": (28.17, 2.44, 0.0587), "Laplace": (21.22, 2.53, 0.0575),
              "PrivUnit": (23.28, 2.37, 0.0592), "Minkowski": (18.10, 14.45, 0.0571)},
        PIC: {"Staircase": (32.51, 0.781, 0.0563), "SquareWave": (33.75, 0.604, 0.0585),
              "PrivHS": (65.47, 0.267, 0.0428), "Laplace": (72.6, 0.154, 0.0508),
              "PrivUnit": (74.02, 0.157, 0.0438), "Minkowski": (78.68, 0.093, 0.0363)},
    },
    3.0: {
        LDP: {"Staircase": (19.68, 5.09, 0.0519), "SquareWave": (18.24, 4.34, 0.0574),
              "PrivHS": (41.52, 0.850, 0.0561), "Laplace": (28.64, 0.845, 0.0575),
              "PrivUnit": (39.02, 0.803, 0.0537), "Minkowski": (20.73, 3.731, 0.0545)},
        PIC: {"Staircase": (44.58, 0.545, 0.0563), "SquareWave": (53.02, 0.407, 0.0552),
              "PrivHS": (74.49, 0.190, 0.0383), "Laplace": (74.86, 0.104, 0.0335),
              "PrivUnit": (77.42, 0.098, 0.0253), "Minkowski": (83.43, 0.055, 0.0219)},
    },
}  # fmt: skip


# --- the round's pieces (numpy; no JAX) ----------------------------------------------------------


def scaled_split(n_images: int) -> tuple[int, int, int]:
    """(train, validation, test) sizes: Appendix E's 50,000 / 5,000 / 5,000 of 60,000 as fractions of ``n_images``.

    Examples
    --------
    >>> scaled_split(1797), scaled_split(60_000)
    ((1497, 150, 150), (50000, 5000, 5000))
    """
    total = sum(PAPER_SPLIT)
    validation = round(n_images * PAPER_SPLIT[1] / total)
    test = round(n_images * PAPER_SPLIT[2] / total)
    return n_images - validation - test, validation, test


def sample_size(population: int) -> int:
    """s for N training users: the paper's rate 10,000 / 50,000, rounded (at least 1).

    Examples
    --------
    >>> sample_size(1497), sample_size(50_000)
    (299, 10000)
    """
    return max(1, round(population * PAPER_SAMPLE / PAPER_POPULATION))


def user_coordinates(n_users: int, dim: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """Each user's own k coordinates of a d-dimensional gradient: (n_users, k), rows sorted and distinct.

    Every row is a uniformly random k-subset of range(dim) drawn from ``rng`` alone, independently
    across users and of any data, so the positions a report carries say nothing about its user's sample.

    Examples
    --------
    >>> import numpy as np
    >>> user_coordinates(3, 10, 2, np.random.default_rng(0)).shape
    (3, 2)
    """
    if not 1 <= k <= dim:
        raise DomainError(f"k must be an integer in [1, dim={dim}], got {k!r}")
    return np.sort(np.argsort(rng.random((n_users, dim)), axis=1)[:, :k], axis=1)


def aggregate(estimates: np.ndarray, coords: np.ndarray, dim: int) -> np.ndarray:
    """The server's unbiased estimate of the users' mean (clipped) gradient from their k-coordinate reports.

    Coordinate j: (d / (k s)) * sum of the s users' estimates at j (0 from a user whose report does not
    cover j).  A user covers j with probability k / d, independently of its gradient, so each term has
    expectation (k / d) g_i[j] and the estimate has expectation mean_i g_i[j] (given unbiased estimates).

    Examples
    --------
    >>> aggregate(np.array([[1.0], [3.0]]), np.array([[0], [1]]), 2)   # d/(k s) = 1
    array([1., 3.])
    """
    s, k = coords.shape
    out = np.zeros(dim)
    np.add.at(out, coords, estimates)
    return out * (dim / (k * s))


def scatter(values: np.ndarray, coords: np.ndarray, dim: int) -> np.ndarray:
    """(s, d) gradients, zero off each user's coordinates, from (s, k) values at (s, k) ``coords``."""
    out = np.zeros((len(values), dim))
    np.put_along_axis(out, coords, values, axis=1)
    return out


def coverage_k(dim: int, sample: int) -> int:
    """k that covers each of ``dim`` coordinates as often per round as the paper's (10,000 x 6 / 4,292, about 14).

    Examples
    --------
    >>> coverage_k(1592, 299), coverage_k(4292, 10_000)
    (74, 6)
    """
    return min(dim, max(1, round(PAPER_SAMPLE * FL_DIM / PAPER_DIM * dim / sample)))


def reference_ks(dim: int, sample: int) -> dict[str, int]:
    """The non-private runs (label -> k kept per user): the private runs' k, the paper's coverage, all of d.

    Examples
    --------
    >>> reference_ks(1592, 299)
    {'non-private': 6, "non-private, paper's coverage": 74, 'non-private, all coordinates': 1592}
    """
    return {NON_PRIVATE: FL_DIM, PAPER_COVERAGE: coverage_k(dim, sample), ALL_COORDINATES: dim}


def clip_values(values: np.ndarray, clip: float) -> np.ndarray:
    """Each value clipped to [-clip, clip] (§7.3 clips gradient values, not the vector's norm).

    Examples
    --------
    >>> clip_values(np.array([[0.5, -2.0, 1e-5]]), 1e-4)
    array([[ 1.e-04, -1.e-04,  1.e-05]])
    """
    return np.clip(values, -clip, clip)


def sanitize(
    values: np.ndarray, randomizer: LocalRandomizer | None, clip: float, rng: np.random.Generator
) -> np.ndarray:
    """The server's estimates of clipped values in [-clip, clip]^k: randomized on [-1, 1]^k, debiased, rescaled.

    ``randomizer`` None: the non-private reference (the values themselves).
    """
    if randomizer is None:
        return np.asarray(values, dtype=np.float64)
    unit = np.asarray(values, dtype=np.float64) / clip
    return np.asarray(randomizer.estimate(randomizer.randomize(unit, rng))) * clip


def shapley_errors(
    true_values: np.ndarray, estimates: np.ndarray, coords: np.ndarray, validation: np.ndarray, seed: int
) -> dict[str, float]:
    """A round's Shapley error (§7.3's "Shapley l2 error") and the levels it is read against.

    User i's gradient is its (s, k) values at its own ``coords`` row, zero elsewhere; values for the
    cosine utility are exact (`shuffledp.tasks.exact_shapley`) for s <= `EXACT_MAX_PLAYERS`, else
    `shuffledp.tasks.order_shapley` over `SHAPLEY_PERMUTATIONS` uniform orders from ``seed``, the same
    orders for the true and the estimated gradients.  Returns:

    * `SHAPLEY_ERROR`: the paper's sum_i ||Shapley^_i - Shapley_i||_2 / |S| (`shuffledp.tasks.shapley_error`):
      a user's value is a scalar, so this is the mean absolute difference over the s users;
    * `SHAPLEY_NO_INFORMATION`: the same error when each user is given another user's estimate (a random
      permutation from ``seed``, at its own coordinates): what a report that says nothing about its own
      gradient scores;
    * `SHAPLEY_ESTIMATOR_SPREAD`: |the error - the error over a second, independent set of orders|, and
      `SHAPLEY_VALUE_SPREAD`: the mean |difference| of the true gradients' values over the two sets (both 0
      for exact values): how much the estimator alone moves the error and the values.
    """
    dim = len(validation)
    true_g, est_g = scatter(true_values, coords, dim), scatter(estimates, coords, dim)
    s = len(true_g)
    other_g = scatter(estimates[np.random.default_rng([seed, 2]).permutation(s)], coords, dim)
    if s <= EXACT_MAX_PLAYERS:
        true_phi, est_phi, other_phi = (exact_shapley(G, validation) for G in (true_g, est_g, other_g))
        true_phi2, est_phi2 = true_phi, est_phi
    else:
        first, second = (
            rng.permuted(np.broadcast_to(np.arange(s), (SHAPLEY_PERMUTATIONS, s)), axis=1)
            for rng in (np.random.default_rng(seed), np.random.default_rng([seed, 1]))
        )
        true_phi, est_phi, other_phi = (order_shapley(G, validation, first) for G in (true_g, est_g, other_g))
        true_phi2, est_phi2 = (order_shapley(G, validation, second) for G in (true_g, est_g))
    error = shapley_error(est_phi, true_phi)
    return {
        SHAPLEY_ERROR: error,
        SHAPLEY_NO_INFORMATION: shapley_error(other_phi, true_phi),
        SHAPLEY_ESTIMATOR_SPREAD: abs(error - shapley_error(est_phi2, true_phi2)),
        SHAPLEY_VALUE_SPREAD: shapley_error(true_phi2, true_phi),
    }


@dataclass(frozen=True)
class RoundBudgets:
    """Per-round local budgets for one global target (module docstring)."""

    target: float
    delta: float
    rounds: int
    sample: int
    population: int
    ldp_plain: float  # eps / rounds: basic composition, no credit for the sampling (printed only)
    ldp: float  # the LDP model's training budget: tight composition of secret-sample rounds of one un-shuffled report
    pic: float  # tight composition of secret-sample shuffled rounds


def ldp_round_event(eps0: float, sample: int, population: int, rounds: int) -> SelfComposedEvent:
    """The LDP model's ``rounds`` rounds: a secret sample of ``sample`` of ``population`` users, each sampled user's
    one eps0-LDP report seen by the server un-shuffled (a shuffle of n = 1 report: the plain LDP curve).

    The sampling is credited only under the secret-sample condition: every user sends a real or a dummy report
    each round, so the server cannot tell who was sampled.
    """
    return SelfComposedEvent(SampledEvent(ShuffleEvent(VariationRatio.from_ldp(eps0), 1), sample, population), rounds)


@lru_cache(maxsize=16)
def round_budgets(target: float, sample: int, population: int, rounds: int) -> RoundBudgets:
    """The LDP and PIC models' per-round local epsilon for global (target, 0.01 / population) over ``rounds``.

    Both credit the secret sample of ``sample`` of ``population`` users (rate s/N) by the same (PLD) accountant:
    the LDP model's user sends one report the server sees un-shuffled (`ldp_round_event`), the PIC model's is
    shuffled with the round's s reports (`composed_local_epsilon` with ``population``).
    """
    delta = 0.01 / population
    pic = composed_local_epsilon(target, sample, delta, rounds, method="tight", population=population)
    ldp = calibrate(
        lambda eps0: ldp_round_event(eps0, sample, population, rounds),
        target,
        delta,
        accountant=PLDAccountant(),
        context=f"LDP model over rounds={rounds}, each a secret sample of {sample} of {population} users",
    )
    return RoundBudgets(target, delta, rounds, sample, population, target / rounds, ldp, pic)


# --- training ------------------------------------------------------------------------------------


def min_images() -> int:
    """The fewest images whose split (`scaled_split`) leaves `MIN_HELD_OUT` validation and test images.

    Examples
    --------
    >>> n = min_images()
    >>> n, scaled_split(n), scaled_split(n - 1)[2] < MIN_HELD_OUT
    (114, (94, 10, 10), True)
    """
    return next(n for n in itertools.count(1) if min(scaled_split(n)[1:]) >= MIN_HELD_OUT)


def checked_split(n_images: int, source: str) -> tuple[int, int, int]:
    """`scaled_split` of ``n_images`` read from ``source``; a DataError naming the minimum for too few images."""
    train, validation, test = scaled_split(n_images)
    if min(validation, test) < MIN_HELD_OUT:
        raise DataError(
            f"{source}: pic-fl-incentives needs at least {min_images()} images, so that Appendix E's split leaves "
            f"{MIN_HELD_OUT} validation and {MIN_HELD_OUT} test images (one per class); got {n_images} "
            f"({train} training users, s = {sample_size(train)}, {validation} validation, {test} test images)"
        )
    return train, validation, test


@dataclass(frozen=True)
class _Data:
    name: str
    train: tuple[np.ndarray, np.ndarray]
    validation: tuple[np.ndarray, np.ndarray]
    test: tuple[np.ndarray, np.ndarray]
    source: str = ""  # the files read (or the scikit-learn data set)


def _load(rng: np.random.Generator) -> _Data:
    from shuffledp.datasets import mnist_or_digits

    data = mnist_or_digits()
    n_train, n_val, _ = checked_split(len(data.labels), data.source)
    order = rng.permutation(len(data.labels))
    parts = np.split(order, [n_train, n_train + n_val])
    X, y = data.images.astype(np.float32), data.labels
    return _Data(data.name, *((X[p], y[p]) for p in parts), source=data.source)


def run_training(
    model: Any,
    data: _Data,
    randomizer: LocalRandomizer | None,
    schedule: list[tuple[np.ndarray, np.ndarray]],
    rng: np.random.Generator,
    seed: int,
) -> list[dict[str, float]]:
    """Train from ``model.initial`` over ``schedule`` (per round: the sampled users, each one's coordinates).

    Returns per round: gradient_l2_error (units of c), `SHAPLEY_ERROR` and (private runs) its `SHAPLEY_LEVELS`
    (`shapley_errors`), test_accuracy after the update, clipped_share (of the kept true values, the share at
    least c in magnitude: clipped to +-c).  ``randomizer`` None (non-private): the estimates are the true
    values, so both errors are 0 exactly.
    """
    import jax.numpy as jnp

    from shuffledp.experiments.fl_model import adam

    optimizer = adam(LEARNING_RATE, LR_DECAY)
    theta = jnp.asarray(model.initial)
    state = optimizer.init(theta)
    (X, y), (Xv, yv), (Xt, yt) = data.train, data.validation, data.test
    out = []
    for t, (users, coords) in enumerate(schedule):
        G = np.asarray(model.per_user_gradients(theta, X[users], y[users]), dtype=np.float64)
        raw = np.take_along_axis(G, coords, axis=1)
        true = clip_values(raw, CLIP)
        est = sanitize(true, randomizer, CLIP, rng)
        errors = {"gradient_l2_error": 0.0, SHAPLEY_ERROR: 0.0}
        if randomizer is not None:
            v = np.asarray(model.mean_gradient(theta, Xv, yv), dtype=np.float64)
            errors = {
                "gradient_l2_error": float(np.linalg.norm(est - true, axis=1).mean() / CLIP),
                **shapley_errors(true, est, coords, v, seed + t),
            }
        updates, state = optimizer.update(
            jnp.asarray(aggregate(est, coords, model.dim), dtype=jnp.float32), state, theta
        )
        theta = theta + updates
        out.append(
            {
                **errors,
                "test_accuracy": model.accuracy(theta, Xt, yt),
                "clipped_share": float(np.mean(np.abs(raw) >= CLIP)),
            }
        )
    return out


def _rows(
    dataset: str, eps: float, model: str, label: str, local: float, per_round: list[dict[str, float]]
) -> list[dict[str, Any]]:  # fmt: skip
    base = {"dataset": dataset, "epsilon": eps, "model": model, "randomizer": label, "local_epsilon": local}
    return [
        {**base, "round": t + 1, "metric": m, "value": v}
        for t, metrics in enumerate(per_round)
        for m, v in metrics.items()
    ]


@register(
    NAME,
    "PIC Tables 5-6: federated learning with Shapley incentives (accuracy, gradient l2 error, Shapley error)",
    "PIC §7.3, Tables 4-6; full version Appendices B and E",
    requires=("jax", "optax"),
    extra="fl",
)
def run(ctx: ExperimentContext) -> ExperimentOutput:
    from shuffledp.experiments.fl_model import make_cnn

    data = _load(ctx.rng(0))
    population = len(data.train[1])
    s = sample_size(population)
    rounds = ROUNDS_QUICK if ctx.quick else ROUNDS
    model = make_cnn(data.train[0].shape[1:], ctx.rng(1))
    # the shuffler's secret samples, shared by every run; each sampled user's own coordinates (k per report)
    users = [np.sort(ctx.rng(2, t).choice(population, size=s, replace=False)) for t in range(rounds)]
    references = reference_ks(model.dim, s)
    plans = {
        k: [
            (u, user_coordinates(s, model.dim, k, ctx.rng(3, t) if k == FL_DIM else ctx.rng(6, k, t)))
            for t, u in enumerate(users)
        ]
        for k in {FL_DIM, *references.values()}
    }
    budgets = {t: round_budgets(t, s, population, ROUNDS) for t in TARGETS}
    paper_scale = {t: round_budgets(t, PAPER_SAMPLE, PAPER_POPULATION, ROUNDS) for t in TARGETS}
    cases: list[tuple[float, str, str, str]] = [(math.nan, NON_PRIVATE, label, "") for label in references]
    cases += [(t, m, label, name) for t in TARGETS for m in (LDP, PIC) for label, name in RANDOMIZERS]
    rows: list[dict[str, Any]] = []
    for i, (eps, m, label, name) in enumerate(ctx.progress.track(cases, NAME)):
        if m == NON_PRIVATE:
            local, randomizer = math.nan, None
        else:
            local = budgets[eps].ldp if m == LDP else budgets[eps].pic
            randomizer = make_randomizer(name, local, dim=FL_DIM)
        plan = plans[references[label] if m == NON_PRIVATE else FL_DIM]
        per_round = run_training(model, data, randomizer, plan, ctx.rng(4, i), ctx.seed)
        rows += _rows(data.name, eps, m, label, local, per_round)
    rows += paper_scale_errors({t: b.pic for t, b in paper_scale.items()}, ctx.rng(5))
    found = claims(rows, len(data.test[1]))
    parameters = {
        "data": data.name,
        "data_files": data.source,
        "split": {"train": population, "validation": len(data.validation[1]), "test": len(data.test[1])},
        "split_rule": "Appendix E's 50,000 / 5,000 / 5,000 of 60,000 as fractions of the images",
        "users_per_round": s,
        "sampling": "fixed-size secret sample of s of N users drawn by the shuffler each round (rate 10,000/50,000)",
        "rounds": rounds,
        "rounds_budgeted": ROUNDS,
        "model_dim": model.dim,
        "model": model.description,
        "model_stride": model.stride,
        "kept_coordinates": FL_DIM,
        "coordinates": "each sampled user draws its own k coordinates uniformly (independent of its data) every round",
        "aggregate": "per coordinate (d / (k s)) * sum of the reports covering it: unbiased for the mean clipped gradient",
        "non_private_references": {
            label: {"kept_coordinates": k, "reports_per_coordinate": s * k / model.dim} for label, k in references.items()
        },
        "paper_reports_per_coordinate": PAPER_SAMPLE * FL_DIM / PAPER_DIM,
        "clip": CLIP,
        "adam": {"learning_rate": LEARNING_RATE, "decay_per_round": LR_DECAY},
        "shapley": SHAPLEY_METHOD,
        "randomizers": [label for label, _ in RANDOMIZERS],
        "budgets": {
            f"{t:g}": {"delta": b.delta, "ldp_per_round": b.ldp, "ldp_plain_composition": b.ldp_plain,
                       "pic_per_round": b.pic, "ldp_paper_scale": paper_scale[t].ldp, "pic_paper_scale": paper_scale[t].pic}
            for t, b in budgets.items()
        },
        "paper_budgets": {"ldp": list(PAPER_LDP_RANGE), "pic": list(PAPER_PIC_RANGE)},
        "install": "pip install 'shuffledp[fl]'",
    }  # fmt: skip
    return ExperimentOutput(
        columns=COLUMNS,
        rows=rows,
        summary_markdown=_summary(rows, parameters, budgets, paper_scale),
        figure=_figure(rows),
        parameters=parameters,
        claims=found,
        findings=findings_line(found),
    )


def paper_scale_errors(budgets: dict[float, float], rng: np.random.Generator) -> list[dict[str, Any]]:
    """Each randomizer's mean single-report l2 error (units of c) at the PIC budgets of the paper's scale.

    Inputs: uniformly random corners of [-1, 1]^k, what clipping at c makes of values of magnitude >= c
    (the run's ``clipped_share`` rows say how many are).
    """
    X = rng.choice([-1.0, 1.0], size=(PAPER_SCALE_INPUTS, FL_DIM))
    rows = []
    for eps, local in budgets.items():
        for label, name in RANDOMIZERS:
            R = make_randomizer(name, local, dim=FL_DIM)
            error = float(np.linalg.norm(sanitize(X, R, 1.0, rng) - X, axis=1).mean())
            rows.append({"dataset": "", "epsilon": eps, "model": PAPER_SCALE, "randomizer": label, "local_epsilon": local,
                         "round": None, "metric": "single_report_l2_error", "value": error})  # fmt: skip
    return rows


# --- claims and summary --------------------------------------------------------------------------


def _table(rows: list[dict[str, Any]]) -> dict[tuple[float, str, str, str], float]:
    """(epsilon, model, randomizer, metric) -> errors averaged over the rounds, accuracy after the last round."""
    return {k: float(np.mean(v)) for k, v in _per_round(rows).items()}


def _per_round(rows: list[dict[str, Any]]) -> dict[tuple[float, str, str, str], list[float]]:
    """(epsilon, model, randomizer, metric) -> each round's value (test accuracy: the last round's alone)."""
    last = max(r["round"] for r in rows if r["round"] is not None)
    out: dict[tuple, list[float]] = {}
    for r in rows:
        if r["metric"] == "test_accuracy" and r["round"] != last:
            continue
        out.setdefault((r["epsilon"], r["model"], r["randomizer"], r["metric"]), []).append(r["value"])
    return out


def _standard_errors(rows: list[dict[str, Any]]) -> dict[tuple[float, str, str, str], float]:
    """(epsilon, model, randomizer, metric) -> standard error of the mean over the rounds (0 for one round).

    Each round draws new users, coordinates, randomness and estimator orders, so the rounds' spread
    holds the estimator's noise as well as the sampling's.
    """
    return {k: float(np.std(v, ddof=1) / math.sqrt(len(v))) if len(v) > 1 else 0.0 for k, v in _per_round(rows).items()}


def quick_run(rows: list[dict[str, Any]]) -> bool:
    """Whether ``rows`` stop before the `ROUNDS` the budgets are for (``--quick``)."""
    return max(r["round"] for r in rows if r["round"] is not None) < ROUNDS


def noise_floor(
    t: dict[tuple, float], se: dict[tuple, float], a: tuple, b: tuple, metric: str, test_size: int
) -> float:
    """The smallest difference between cells ``a`` and ``b`` (keys without the metric) that counts.

    Errors (averaged over the rounds): `NOISE_Z` standard errors of the difference of the two means.
    Final test accuracy (one run, ``test_size`` images): `NOISE_Z` binomial standard errors of the difference.

    Examples
    --------
    >>> a, b = (1.0, "PIC", "x"), (1.0, "PIC", "y")
    >>> round(noise_floor({}, {(*a, "e"): 3e-5, (*b, "e"): 4e-5}, a, b, "e", 150), 12)   # 2 * hypot(3, 4) e-5
    0.0001
    >>> round(noise_floor({(*a, "test_accuracy"): 0.5, (*b, "test_accuracy"): 0.5}, {}, a, b, "test_accuracy", 200), 4)
    0.1
    """
    if metric == "test_accuracy":
        pa, pb = t[(*a, metric)], t[(*b, metric)]
        return NOISE_Z * math.sqrt((pa * (1 - pa) + pb * (1 - pb)) / test_size)
    return NOISE_Z * math.hypot(se[(*a, metric)], se[(*b, metric)])


def _better(metric: str, a: float, b: float) -> bool:
    return a > b if metric == "test_accuracy" else a < b


def chance_level(test_size: int) -> float:
    """The highest test accuracy within `NOISE_Z` binomial standard errors of `CHANCE` on ``test_size`` images.

    An accuracy at or below it is "at chance level": the model learned nothing the test set can show.

    Examples
    --------
    >>> round(chance_level(150), 3)   # 0.1 + 2 sqrt(0.1 * 0.9 / 150)
    0.149
    """
    return CHANCE + NOISE_Z * math.sqrt(CHANCE * (1 - CHANCE) / test_size)


def _value(metric: str, value: float) -> str:
    return f"{100 * value:.1f}%" if metric == "test_accuracy" else fmt_num(value)


def _cell(t: dict[tuple, float], c: tuple[float, str, str]) -> str:
    """One (eps, randomizer, metric) cell, PIC beside LDP."""
    e, lab, metric = c
    return f"eps = {e:g} {lab} {metric}: PIC {_value(metric, t[(e, PIC, lab, metric)])}, LDP {_value(metric, t[(e, LDP, lab, metric)])}"


def _minkowski_verdict(
    t: dict[tuple, float], se: dict[tuple, float], e: float, labels: list[str], metric: str, test_size: int
) -> tuple[str, str]:
    """(verdict, what we saw) of "Minkowski Response is best on ``metric`` in the PIC model at eps = e".

    held: Minkowski is best by more than the noise floor; not: another is better by more than it;
    `NOT_TESTABLE`: the leader's margin is within it, or (accuracy) the leader is at chance level (`chance_level`).
    """
    sign = -1 if metric == "test_accuracy" else 1
    ranked = sorted(labels, key=lambda lab: sign * t[(e, PIC, lab, metric)])
    rival = ranked[1] if ranked[0] == "Minkowski" else ranked[0]
    mink, other = (e, PIC, "Minkowski"), (e, PIC, rival)
    gap = abs(t[(*mink, metric)] - t[(*other, metric)])
    floor = noise_floor(t, se, mink, other, metric, test_size)
    chance = metric == "test_accuracy" and t[(e, PIC, ranked[0], metric)] <= chance_level(test_size)
    verdict = NOT_TESTABLE if gap <= floor or chance else "held" if ranked[0] == "Minkowski" else "not"

    def at_chance(lab: str) -> str:  # accuracy: name each value at chance level
        low = metric == "test_accuracy" and t[(e, PIC, lab, metric)] <= chance_level(test_size)
        return " (at chance level)" if low else ""

    return verdict, (
        f"eps = {e:g}: best {ranked[0]} ({fmt_num(t[(e, PIC, ranked[0], metric)])}{at_chance(ranked[0])}), "
        + (f"next {rival}" if ranked[0] == "Minkowski" else f"Minkowski {fmt_num(t[(*mink, metric)])}")
        + at_chance(rival if ranked[0] == "Minkowski" else "Minkowski")
        + f", gap {fmt_num(gap)} {'within' if gap <= floor else 'beyond'} the noise floor {fmt_num(floor)}"
        + ("; every PIC model at chance level" if chance else "")
    )


def claims(rows: list[dict[str, Any]], test_size: int) -> list[Claim]:
    """§7.3's claims, each read only where a difference exceeds its noise floor (`noise_floor`).

    A cell or comparison within the floor is not testable (the cells where PIC is worse but within it are
    listed), and so is final accuracy in a quick run (the first `ROUNDS_QUICK` of `ROUNDS` rounds: accuracies
    near chance) and a final-accuracy cell whose better model is at chance level (`chance_level`: set aside,
    listed); `NOT_TESTABLE` where nothing is left.
    """
    t, se = _table(rows), _standard_errors(rows)
    quick = quick_run(rows)
    rounds = max(r["round"] for r in rows if r["round"] is not None)
    targets = sorted({r["epsilon"] for r in rows if r["model"] != NON_PRIVATE})
    labels = list(dict.fromkeys(r["randomizer"] for r in rows if r["model"] == PIC))
    tested = [m for m in METRICS if not (quick and m == "test_accuracy")]
    cells = [(e, lab, m) for e in targets for lab in labels for m in tested]
    beyond = [c for c in cells if abs(t[(c[0], PIC, c[1], c[2])] - t[(c[0], LDP, c[1], c[2])])
              > noise_floor(t, se, (c[0], PIC, c[1]), (c[0], LDP, c[1]), c[2], test_size)]  # fmt: skip
    chance = [c for c in beyond if c[2] == "test_accuracy"
              and max(t[(c[0], m, c[1], c[2])] for m in (LDP, PIC)) <= chance_level(test_size)]  # fmt: skip
    decided = [c for c in beyond if c not in chance]
    wins = [c for c in decided if _better(c[2], t[(c[0], PIC, c[1], c[2])], t[(c[0], LDP, c[1], c[2])])]
    worse = [
        c for c in cells if c not in beyond and _better(c[2], t[(c[0], LDP, c[1], c[2])], t[(c[0], PIC, c[1], c[2])])
    ]
    untested = f"; final accuracy not testable in quick mode ({rounds} of {ROUNDS} rounds)" if quick else ""
    out = [
        Claim(
            "PIC model beats the LDP model for every randomizer, on every metric and the final accuracy (Tables 5-6)",
            f"PIC better in {len(wins)} of the {len(decided)} (eps, randomizer, metric) cells whose difference "
            f"exceeds its noise floor; {len(cells) - len(beyond)} of {len(cells)} within it"
            + (f", PIC worse in {len(worse)} of those ({'; '.join(_cell(t, c) for c in worse)})" if worse else "")
            + (f"; {len(chance)} accuracy cells set aside, both models at or below chance level "
               f"({100 * chance_level(test_size):.1f}% on {test_size} test images): "
               + "; ".join(_cell(t, c) for c in chance) if chance else "")
            + untested,
            share_verdict(len(wins), len(decided)) if decided else NOT_TESTABLE,
        )
    ]  # fmt: skip
    accuracies = [t[(e, m, lab, "test_accuracy")] for e in targets for m in (LDP, PIC) for lab in labels]
    for metric, what in (
        ("gradient_l2_error", "the lowest gradient l2 error"),
        (SHAPLEY_ERROR, "the lowest Shapley error (mean |Shapley^_i - Shapley_i|, the paper's 'Shapley l2 error')"),
        ("test_accuracy", "the highest test accuracy"),
    ):
        claim = f"In the PIC model Minkowski Response has {what} (Tables 5-6, eps = 1 and 3)"
        if metric not in tested:
            out.append(Claim(claim, f"not testable in quick mode ({rounds} of {ROUNDS} rounds): final private "
                                    f"accuracies {100 * min(accuracies):.0f}-{100 * max(accuracies):.0f}%, chance "
                                    f"{100 * CHANCE:.0f}%", NOT_TESTABLE))  # fmt: skip
            continue
        found = [_minkowski_verdict(t, se, e, labels, metric, test_size) for e in targets]
        out.append(Claim(claim, "; ".join(text for _, text in found), combined_verdict(v for v, _ in found)))
    return out


def _summary(
    rows: list[dict[str, Any]],
    p: dict[str, Any],
    budgets: dict[float, RoundBudgets],
    paper_scale: dict[float, RoundBudgets],
) -> str:
    t, se = _table(rows), _standard_errors(rows)
    rounds = p["rounds"]
    clipped = float(
        np.mean([r["value"] for r in rows if r["metric"] == "clipped_share" and r["randomizer"] not in WIDER])
    )
    best_gradient = ", ".join(
        min((label for label, _ in RANDOMIZERS), key=lambda lab, e=e: t[(e, PIC, lab, "gradient_l2_error")])
        + f" at eps = {e:g}"
        for e in budgets
    )
    lines = [
        f"Data: {_data_text(p)}; {p['split']['train']:,} training users (one sample each), "
        f"{p['split']['validation']} validation, {p['split']['test']} test images ({p['split_rule']}). "
        f"s = {p['users_per_round']} users per round ({p['sampling']}). Model: {p['model']}, d = {p['model_dim']:,} "
        f"(the paper's: d = 4,292). Each round keeps k = {FL_DIM} coordinates ({p['coordinates']}; the paper's 0.15% "
        f"of 4,292), clipped at c = {CLIP:g}. Adam, learning rate {LEARNING_RATE:g}, decay {LR_DECAY:g} per round. "
        f"{rounds} rounds" + (f" (quick: the first {rounds} of the {ROUNDS}-round schedule, budgets for {ROUNDS})" if rounds < ROUNDS else "")
        + ". Install: `pip install 'shuffledp[fl]'`.",
        "",
        f"**Per-round local budgets** over {ROUNDS} rounds (global delta = 0.01/N; ours: s = {p['users_per_round']:,} "
        f"of N = {p['split']['train']:,}; the paper's scale: {PAPER_SAMPLE:,} of {PAPER_POPULATION:,}):",
        "",
        "| global eps | LDP, plain composition (eps / rounds) | LDP, sampled (ours; trained) | LDP, sampled "
        "(paper's scale) | paper LDP | PIC (ours; trained) | PIC (paper's scale) | paper PIC |",
        "|---|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    lo, hi = PAPER_LDP_RANGE
    plo, phi = PAPER_PIC_RANGE
    for e, b in budgets.items():
        lines.append(f"| {e:g} | {b.ldp_plain:.4g} | {b.ldp:.4g} | {paper_scale[e].ldp:.4g} | {lo:g}-{hi:g} | "
                     f"{b.pic:.4g} | {paper_scale[e].pic:.4g} | {plo:g}-{phi:g} |")  # fmt: skip
    lines += ["", _budget_text(budgets, paper_scale, p["users_per_round"])]
    lines += [
        "",
        "**Ours beside Tables 5-6** (test accuracy after the last round; errors averaged over the rounds, "
        f"+- {NOISE_Z:g} standard errors over the rounds; gradient error in units of c; Shapley error: the mean "
        "over the round's users of |Shapley^_i - Shapley_i|, which is what the paper's 'Shapley l2 error' "
        "sum_i ||Shapley^_i - Shapley_i||_2 / |S| is for scalar values; no-information level: the Shapley error "
        "when each user is given another user's estimate; ratio = ours / paper):",
        "",
        "| eps | model | randomizer | accuracy (ours / paper) | gradient l2 error (ours / paper / ratio) | "
        "Shapley error, mean abs (ours / paper / ratio) | Shapley error at no information |",
        "|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    for e in budgets:
        for m in (LDP, PIC):
            for label, _ in RANDOMIZERS:
                paper = PAPER_TABLES.get(e, {}).get(m, {}).get(label)
                ours = [t.get((e, m, label, metric), math.nan) for metric in METRICS]
                cells = [f"{100 * ours[0]:.1f}% / " + (f"{paper[0]:g}%" if paper else "-")]
                for j in (1, 2):
                    ratio = ours[j] / paper[j] if paper else math.nan
                    band = NOISE_Z * se.get((e, m, label, METRICS[j]), math.nan)
                    cells.append(f"{fmt_num(ours[j])} +- {fmt_num(band, 2)} / {fmt_num(paper[j]) if paper else '-'} "
                                 f"/ {fmt_num(ratio, 2)}")  # fmt: skip
                cells.append(fmt_num(t.get((e, m, label, SHAPLEY_NO_INFORMATION))))
                lines.append(f"| {e:g} | {m} | {label} | " + " | ".join(cells) + " |")
    lines += ["", *_shapley_floor(t, se, list(budgets), p["users_per_round"])]
    last = {r["randomizer"]: r["value"] for r in rows if r["model"] == NON_PRIVATE and r["metric"] == "test_accuracy"}
    refs = {label: last[label] for label in p["non_private_references"]}
    ks = {label: ref["kept_coordinates"] for label, ref in p["non_private_references"].items()}
    cover = {label: ref["reports_per_coordinate"] for label, ref in p["non_private_references"].items()}
    uncovered = (1 - FL_DIM / p["model_dim"]) ** p["users_per_round"]
    private = [v for (e, m, _, metric), v in t.items() if m in (LDP, PIC) and metric == "test_accuracy"]
    noise = {
        e: min(t[(e, PIC, label, "gradient_l2_error")] for label, _ in RANDOMIZERS)
        / math.sqrt(FL_DIM * cover[NON_PRIVATE])
        for e in budgets
    }
    lines += [
        "",
        f"**Non-private references** (true clipped gradients, the same sampled users; test accuracy after {rounds} "
        f"rounds): k = {ks[NON_PRIVATE]} per user, as in every private run: {100 * refs[NON_PRIVATE]:.1f}%; "
        f"k = {ks[PAPER_COVERAGE]} per user, so that each coordinate is covered by {cover[PAPER_COVERAGE]:.1f} "
        f"reports a round as in the paper ({p['paper_reports_per_coordinate']:.1f}): "
        f"{100 * refs[PAPER_COVERAGE]:.1f}%; "
        f"every coordinate kept (clipping only): {100 * refs[ALL_COORDINATES]:.1f}%. The paper's best private model "
        f"reaches 83%. At k = {FL_DIM} our {p['users_per_round']} reports cover each of the d = {p['model_dim']:,} "
        f"parameters {cover[NON_PRIVATE]:.2f} times a round on average ((1 - k/d)^s = {100 * uncovered:.0f}% of them "
        "not at all), the paper's 10,000 reports "
        f"{p['paper_reports_per_coordinate']:.1f} times; and clipping at c makes most kept values +-c "
        f"({100 * clipped:.0f}% clipped), so a coordinate's step follows about one user's (mostly clipped) value, not "
        f"a vote of {p['paper_reports_per_coordinate']:.0f}. "
        + (
            f"That is a scale effect of {p['split']['train']:,} training users instead of {PAPER_POPULATION:,}, not a "
            "setting we changed: every private run "
            if p["split"]["train"] < PAPER_POPULATION
            else "Every private run "
        )
        + f"keeps k = {FL_DIM}, and the two wider references only measure what the paper's coverage would give. "
        f"Accuracies a few points apart are within the noise of {p['split']['test']} test images and of one "
        "training run.",
        "",
        "**Private accuracy**: a report's error per coordinate (gradient l2 error / sqrt(k), units of c) against a "
        "clipped value of at most 1 averages over the reports covering the coordinate, so the aggregate's noise per "
        "coordinate and round is that error / sqrt(reports per coordinate): for the lowest-error PIC randomizer, "
        + "; ".join(
            f"eps = {e:g}: {noise[e]:.2g} with our {cover[NON_PRIVATE]:.2f} reports, "
            f"{noise[e] * math.sqrt(cover[NON_PRIVATE] / p['paper_reports_per_coordinate']):.2g} with the paper's "
            f"{p['paper_reports_per_coordinate']:.0f}"
            for e in budgets
        )
        + ". A noise above 1, the largest a coordinate's signal can be, hides the step's sign in most coordinates: "
        f"the private runs' final accuracies, {100 * min(private):.0f}-{100 * max(private):.0f}% (chance: 10%; one "
        f"run each, {p['split']['test']} test images), show this noise, not a failed update.",
        "",
        "Units: our gradient l2 error is in units of c, on the randomizers' domain [-1, 1]^6. The paper's PIC-model "
        "errors (0.05-0.8) are one to two orders below what any of these randomizers reaches at a local epsilon of "
        "4-6 on that domain, and its LDP-model errors far above raw units (c = 0.00015); the paper does not say how "
        "it scales them, so the ratio column shows the scale gap and the claims compare the randomizers' order only.",
        "",
        f"**Minkowski Response's rank** (evidence): a round shuffles {p['users_per_round']:,} reports, so the PIC "
        "budgets are "
        + ", ".join(f"{budgets[e].pic:.3g}" for e in budgets)
        + f"; at those the lowest gradient error in the PIC model is {best_gradient}. "
        f"{100 * clipped:.0f}% of the kept true values are clipped to +-c "
        f"(a coordinate at the edge of [-1, 1]^6). At the PIC budgets of the paper's scale (s = {PAPER_SAMPLE:,} of "
        f"{PAPER_POPULATION:,}), the single-report error at {PAPER_SCALE_INPUTS:,} random corners of [-1, 1]^6 "
        "(every value clipped) is in the table below; " + _paper_scale_rank(t, paper_scale),
        "",
        "| global eps | PIC budget (paper's scale) | " + " | ".join(label for label, _ in RANDOMIZERS) + " |",
        "|---|---|" + "---|" * len(RANDOMIZERS),
    ]
    for e in budgets:
        lines.append(
            f"| {e:g} | {paper_scale[e].pic:.3g} | "
            + " | ".join(fmt_num(t.get((e, PAPER_SCALE, label, "single_report_l2_error"))) for label, _ in RANDOMIZERS)
            + " |"
        )
    lines += ["", "Substitutions: " + "; ".join(_substitutions(p)) + "."]
    return "\n".join(lines)


def _paper_scale_rank(t: dict[tuple, float], paper_scale: dict[float, RoundBudgets]) -> str:
    """Where Minkowski Response ranks by single-report error at the PIC budgets of the paper's scale, beside its
    rank by gradient error in our PIC runs, and what follows from the two (each statement computed)."""
    labels = [label for label, _ in RANDOMIZERS]
    parts, behind = [], []
    for e, b in paper_scale.items():
        errors = {lab: t[(e, PAPER_SCALE, lab, "single_report_l2_error")] for lab in labels}
        lower = sorted((lab for lab in labels if errors[lab] < errors["Minkowski"]), key=errors.__getitem__)
        if lower:
            behind.append(f"{e:g}")
        parts.append(
            f"at eps = {e:g} (budget {b.pic:.3g}) Minkowski's {fmt_num(errors['Minkowski'])} is the lowest"
            if not lower
            else f"at eps = {e:g} (budget {b.pic:.3g}) Minkowski's {fmt_num(errors['Minkowski'])} is above "
            + ", ".join(f"{lab}'s {fmt_num(errors[lab])}" for lab in lower)
        )
    ours_first = all(
        min(labels, key=lambda lab, e=e: t[(e, PIC, lab, "gradient_l2_error")]) == "Minkowski" for e in paper_scale
    )
    if behind:
        verdict = (
            f"so even at the paper's budgets another randomizer's single report is more accurate (eps = "
            f"{', '.join(behind)}), and the size of the budget alone does not explain Tables 5-6's lead of Minkowski"
        )
    elif ours_first:
        verdict = "so Minkowski leads at both scales"
    else:
        verdict = (
            "so Minkowski leads by single-report error at the paper's budgets but not by gradient error in our runs"
        )
    return "; ".join(parts) + f"; {verdict}:"


def _data_text(p: dict[str, Any]) -> str:
    """The data set that ran, with the files read."""
    if p["data"] == DIGITS_SUBSTITUTE_NAME:
        return f"{p['data']}, from {p['data_files']}"
    return f"MNIST, from the IDX files {p['data_files']}"


def _substitutions(p: dict[str, Any]) -> list[str]:
    """What differs from the paper's setting, each read from the run's parameters."""
    d, s = p["model_dim"], p["users_per_round"]
    out = []
    if p["data"] == DIGITS_SUBSTITUTE_NAME:
        out.append("scikit-learn's digits 8x8 for MNIST (split and s scaled as above)")
    if (p["split"]["train"], s) != (PAPER_POPULATION, PAPER_SAMPLE):
        out.append(f"N = {p['split']['train']:,} training users and s = {s:,} per round, not {PAPER_POPULATION:,} "
                   f"and {PAPER_SAMPLE:,} (Appendix E's fractions of the images given)")  # fmt: skip
    out.append(f"the model: {p['model']}, d = {d:,} parameters (the paper reports d = {PAPER_DIM:,})")
    if d != PAPER_DIM:
        out.append(
            f"k = {FL_DIM} kept coordinates is {100 * FL_DIM / d:.2g}% of our d (the paper's 0.15% of {PAPER_DIM:,})"
        )
    out.append("PrivUnitG added")
    if s != PAPER_SAMPLE:
        out.append(f"Shapley values here are over s = {s:,} users, not {PAPER_SAMPLE:,}, so they (and their errors) "
                   f"are on a {'larger' if s < PAPER_SAMPLE else 'smaller'} scale per user")  # fmt: skip
    return out


def _position(value: float, bounds: tuple[float, float]) -> str:
    """Where ``value`` lies against a range: "below", "within" or "above".

    Examples
    --------
    >>> _position(0.122, (0.2, 0.75)), _position(0.327, (0.2, 0.75)), _position(4.3, (4.0, 6.0))
    ('below', 'within', 'within')
    """
    return "below" if value < bounds[0] else "above" if value > bounds[1] else "within"


def _budget_text(budgets: dict[float, RoundBudgets], paper_scale: dict[float, RoundBudgets], s: int) -> str:
    """The summary's paragraph on how the per-round budgets are priced, its comparisons computed from them."""
    lo, hi = PAPER_LDP_RANGE

    def beside(pick: Any) -> str:
        return ", ".join(
            f"{pick(b):.3g} at eps = {e:g} ({_position(pick(b), PAPER_LDP_RANGE)} it)" for e, b in paper_scale.items()
        )

    smaller = [e for e, b in budgets.items() if b.pic < paper_scale[e].pic]
    return (
        "Both models are priced alike: each round the shuffler draws a secret sample of s of N users (rate s/N), "
        "and the sampling is credited only under the secret-sample condition (every user sends a real or a dummy "
        "report each round, so the server cannot tell who was sampled). In the LDP model a sampled user's one "
        "eps0-LDP report reaches the server un-shuffled (a shuffle of n = 1 report: the plain LDP curve); in the PIC "
        f"model it is shuffled with the round's s reports. Both compose over {ROUNDS} rounds by the same (PLD) "
        "accountant, and the LDP runs train at the sampled budget. Plain composition with no credit for the "
        f"sampling (eps / {ROUNDS}) is shown for comparison. Beside the paper's LDP budgets {lo:g}-{hi:g} (it names "
        f"no accountant), at the paper's scale: sampled {beside(lambda b: b.ldp)}; plain {beside(lambda b: b.ldp_plain)}."
        + (
            " Our PIC budgets are smaller than at the paper's scale at eps = "
            + ", ".join(f"{e:g}" for e in smaller)
            + f" because a round shuffles {s:,} reports, not {PAPER_SAMPLE:,}."
            if smaller
            else ""
        )
    )


def _shapley_floor(t: dict[tuple, float], se: dict[tuple, float], targets: list[float], s: int) -> list[str]:
    """The summary's paragraph on what the Shapley errors can and cannot tell (their noise floor)."""
    labels = [label for label, _ in RANDOMIZERS]
    private = [(e, m, lab) for e in targets for m in (LDP, PIC) for lab in labels]
    errors = [t[(*c, SHAPLEY_ERROR)] for c in private]
    bands = [NOISE_Z * se[(*c, SHAPLEY_ERROR)] for c in private]
    estimator = [t[(*c, SHAPLEY_ESTIMATOR_SPREAD)] for c in private]

    def informative(m: str) -> str:  # cells whose error is below the no-information level by more than the floor
        cells = [c for c in private if c[1] == m]
        below = [
            c for c in cells
            if t[(*c, SHAPLEY_NO_INFORMATION)] - t[(*c, SHAPLEY_ERROR)]
            > NOISE_Z * math.hypot(se[(*c, SHAPLEY_ERROR)], se[(*c, SHAPLEY_NO_INFORMATION)])
        ]  # fmt: skip
        return f"{len(below)} of {len(cells)}"

    return [
        f"**Noise floor of the Shapley error.** A round's s = {s} values sum to U(N), at most 1, so a user's value "
        f"is of order 1/s = {fmt_num(1 / s, 2)} and so is the error of an estimate that knows nothing about it: the "
        f"no-information level (each user given another user's estimate) is "
        f"{fmt_num(min(t[(*c, SHAPLEY_NO_INFORMATION)] for c in private))}-"
        f"{fmt_num(max(t[(*c, SHAPLEY_NO_INFORMATION)] for c in private))}, and our errors are "
        f"{fmt_num(min(errors))}-{fmt_num(max(errors))}. The estimator ({SHAPLEY_PERMUTATIONS} orders) is not "
        f"what makes them this large: a second, independent set of orders moves a round's error by "
        f"{fmt_num(float(np.mean(estimator)), 2)} on average (at most {fmt_num(max(estimator), 2)} in a cell's "
        f"mean), and the true gradients' values by {fmt_num(float(np.mean([t[(*c, SHAPLEY_VALUE_SPREAD)] for c in private])), 2)} "
        f"a user. The noise floor of a cell is {NOISE_Z:g} standard errors over the rounds "
        f"({fmt_num(min(bands), 2)}-{fmt_num(max(bands), 2)}; each round draws new users, randomness and orders, "
        "so this spread includes the estimator's), and a difference between two cells counts only beyond "
        f"{NOISE_Z:g} standard errors of the difference; the claims above read the Shapley errors only there "
        "(not testable otherwise). Errors below the no-information level by more than the floor: "
        f"LDP model {informative(LDP)} cells, PIC model {informative(PIC)}; an error at that level says the "
        "sanitized values carry no information about the true ones.",
    ]  # fmt: skip


def _figure(rows: list[dict[str, Any]]):
    t, se = _table(rows), _standard_errors(rows)
    targets = sorted({r["epsilon"] for r in rows if r["model"] != NON_PRIVATE})
    labels = [label for label, _ in RANDOMIZERS]
    titles = {"test_accuracy": "test accuracy", "gradient_l2_error": "gradient l2 error (log)",
              SHAPLEY_ERROR: "Shapley error, mean abs"}  # fmt: skip
    with page_style() as plt:
        fig, axes = plt.subplots(len(targets), len(METRICS), figsize=(PAGE_WIDTH, 2.4 * len(targets)), squeeze=False)
        handles: dict[str, Any] = {}
        width = 0.4
        for row, e in enumerate(targets):
            for col, metric in enumerate(METRICS):
                ax = axes[row][col]
                for j, m in enumerate((LDP, PIC)):
                    x = np.arange(len(labels)) + (j - 0.5) * width
                    values = [t[(e, m, lab, metric)] for lab in labels]
                    errors = (
                        None if metric == "test_accuracy" else [NOISE_Z * se[(e, m, lab, metric)] for lab in labels]
                    )
                    bars = ax.bar(x, values, width=width, yerr=errors, ecolor="0.2", capsize=1.5, **bar_style(j))
                    handles.setdefault(f"{m} model", bars.patches[0])
                    if metric == SHAPLEY_ERROR:
                        level = [t[(e, m, lab, SHAPLEY_NO_INFORMATION)] for lab in labels]
                        (mark,) = ax.plot(x, level, linestyle="none", marker="_", markersize=7, color="black")
                        handles.setdefault("Shapley error at no information (estimates given to other users)", mark)
                ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right", fontsize=7)
                ax.set_title(f"{titles[metric]}, eps = {e:g}", fontsize=8)
                ax.grid(False, axis="x")
                if metric == "gradient_l2_error":  # spans three decades: log scale, no zero
                    log_ticks(ax, "y")
                else:  # an error or a share: bars from 0
                    ax.set_ylim(bottom=0)
                if metric == "test_accuracy":
                    chance = ax.axhline(CHANCE, color="black", linestyle=":", linewidth=1)
                    handles.setdefault(f"chance ({100 * CHANCE:.0f}%, 10 classes)", chance)
        legend_and_caption(
            fig,
            list(handles.values()),
            list(handles),
            ncol=2,
            caption="Test accuracy after the last round; gradient l2 error (units of c, log scale) and Shapley error "
            f"(mean over users of |Shapley^_i - Shapley_i|, the paper's 'Shapley l2 error') averaged over the rounds, "
            f"whiskers +- {NOISE_Z:g} standard errors over the rounds, for global (eps, 0.01/N).",
        )
    return fig
