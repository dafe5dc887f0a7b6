"""The five competitors of the segmented paper's experiments (segmented-multimessage-shuffle.txt §6).

* `SubsetExponentialBaseline` — "Subexp, local" (PrivSet's subset exponential
  mechanism [20], every user at epsilon = 2, local model) and "Subexp, shuffle" (the same
  randomizer, every user at the target 0.5 in the single-message shuffle model: the local
  budget is the largest whose shuffled release of n reports meets (0.5, delta) under the
  variation-ratio accountant, found by `shuffledp.accounting.accountants.calibrate`).
* `BallsIntoBins` — "MM, shuffle": the balls-into-bins multi-message protocol of
  Luo, Wang, Yi (CCS 2022, paper ref. [12]; not in papers/), every user at 0.5.
* `SeparatedBallsIntoBins` — "SepMM, shuffle" (one balls-into-bins run per level,
  estimators averaged) and "Weighted SepMM, shuffle" (weights 1/sqrt(d s^2 log(1/delta) /
  (n_k E_k)^2 + s / n_k) from the balls-into-bins MSE bound, normalised to sum 1).

**What balls-into-bins is here.**  §6 describes it only as the multi-message protocol of
[12], with MSE O(d s^2 log(1/delta) / (n eps)^2 + s/n).  We implement its frequency-oracle
core for a domain of d bins: each user throws each of its s items, unperturbed, as a ball
into that item's bin, and adds dummy balls uniform over the d bins -- ceil(mu) calls, each
sending a dummy with probability mu / ceil(mu) (mu dummies per user in expectation); the
analyzer debiases bin counts by n mu / d and divides by n.  (Luo et al. hash large domains
into fewer bins; with d = 17 or 128 <= n no hashing is needed.)  This is Algorithm 2 with a
single level and lambda = 1, so its privacy is priced by the project's accountant exactly as
ours: Lemma 3 (p = inf, beta = 1, q = d) with Theorem 2's random blanket count, then
Theorem 3's group composition over the s items.  mu is the least rate at which that
*upper* bound meets (epsilon, delta) (`shuffledp.protocols.segmented.optimizer.full_rate_blankets`,
rounded up).  Privacy-conservative: the bound is an upper bound for the exact mechanism we
run (tight for s = 1 by Proposition 1, group composition over-counts for s > 1), whereas
[12]'s own calibration compares the binomial noise of a single bin and ignores that a
changed ball leaves one bin and enters another.  Using the same tight accountant for the
competitor as for our protocol also gives the competitor its smallest safe noise, so the
comparison does not favour our protocol.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from shuffledp._util.validation import EPSILON_MIN, Interval, check_epsilon, check_positive_int, check_rng
from shuffledp.accounting.accountants import VariationRatioAccountant, calibrate
from shuffledp.accounting.bounds import check_delta
from shuffledp.accounting.events import GroupEvent, ShuffleEvent
from shuffledp.accounting.segmented import M_MAX, user_event
from shuffledp.datasets.setvalued import check_item_sets
from shuffledp.errors import PrivacyParameterError, ProtocolError, ShapeError
from shuffledp.protocols.segmented._checks import check_level_counts, check_level_index, check_levels
from shuffledp.protocols.segmented.analyzer import estimate_frequencies
from shuffledp.protocols.segmented.messages import user_messages
from shuffledp.protocols.segmented.optimizer import full_rate_blankets
from shuffledp.randomizers.categorical import SubsetExponential

#: Local-budget search interval of "Subexp, shuffle" (its shuffled cost is at most the local epsilon).
_LOCAL_BRACKET_MAX = 30.0
#: Largest epsilon of "Subexp, shuffle".  Above about 26 the accountant's value at eps0 = epsilon
#: exceeds epsilon by rounding (no amplification is left to find), so the search has no valid
#: start; 20 keeps a margin, and at such budgets the local model ("local") is the same mechanism.
SUBEXP_SHUFFLE_EPSILON_MAX = 20.0
MODELS = ("local", "shuffle")


def membership(items: np.ndarray, d: int) -> np.ndarray:
    """(n, s) item ids -> (n, d) 0/1 int8 membership matrix.

    Parameters
    ----------
    items : numpy.ndarray
        (n, s) int item ids in {0..d-1}, distinct per row (see `check_item_sets`).
    d : int, >= 1
        Number of items.

    Returns
    -------
    numpy.ndarray
        (n, d) int8 matrix, 1 where the user holds the item.

    Raises
    ------
    ShapeError, DataError, DomainError
        For malformed ``items`` (see `check_item_sets`).

    Examples
    --------
    >>> import numpy as np
    >>> membership(np.array([[0, 2], [1, 2]]), 4).tolist()
    [[1, 0, 1, 0], [0, 1, 1, 0]]
    """
    d = check_positive_int(d, "d")
    items = np.asarray(items)
    if items.ndim != 2 or items.shape[1] == 0:
        raise ShapeError(f"items must be an (n, s) array of item ids with s >= 1, got shape {items.shape}")
    items = check_item_sets(items, d, items.shape[1])
    out = np.zeros((items.shape[0], d), dtype=np.int8)
    np.put_along_axis(out, items, 1, axis=1)
    return out


@dataclass(frozen=True)
class SubsetExponentialBaseline:
    """ "Subexp, local" / "Subexp, shuffle": every user reports once with PrivSet's subset exponential mechanism.

    Build it with `SubsetExponentialBaseline.calibrated`.

    Parameters
    ----------
    model : {"local", "shuffle"}
        The trust model.
    epsilon : float, > 0 (shuffle: at most SUBEXP_SHUFFLE_EPSILON_MAX = 20)
        The target guarantee (local: the LDP budget; shuffle: of the shuffled reports).
    delta : float or None
        Target delta (shuffle model only).
    d : int, >= 2
        Number of items.
    s : int, in [1, d]
        Items per user.
    n_users : int, >= 1
        Number of users.
    local_epsilon : float
        Budget of the subset exponential randomizer.

    References
    ----------
    segmented-multimessage-shuffle.txt §6 (competitors; PrivSet, ref. [20]).

    Examples
    --------
    >>> import numpy as np
    >>> local = SubsetExponentialBaseline.calibrated("local", 2.0, 8, 2, 1000)
    >>> local.local_epsilon, local.event() is None
    (2.0, True)
    >>> estimate = local.run(np.tile([0, 1], (1000, 1)), np.random.default_rng(0))
    >>> bool(np.abs(estimate - [1, 1, 0, 0, 0, 0, 0, 0]).max() < 0.2)
    True
    """

    model: str
    epsilon: float  # the target guarantee (local: the LDP budget; shuffle: of the shuffled reports)
    delta: float | None  # shuffle model only
    d: int
    s: int
    n_users: int
    local_epsilon: float

    @classmethod
    def calibrated(
        cls, model: str, epsilon: float, d: int, s: int, n_users: int, delta: float | None = None
    ) -> SubsetExponentialBaseline:
        """Local: local_epsilon = epsilon.  Shuffle: the largest local budget whose n shuffled reports meet (epsilon, delta)."""
        if model not in MODELS:
            raise ProtocolError(f"model must be one of {', '.join(MODELS)}, got {model!r}")
        d = check_positive_int(d, "d", minimum=2)
        s = check_positive_int(s, "s")
        n_users = check_positive_int(n_users, "n_users")
        if model == "local":
            local = SubsetExponential(epsilon, d, s).epsilon  # validates epsilon, d, s
            return cls(model, local, None, d, s, n_users, local)
        delta = check_delta(delta)
        above = isinstance(epsilon, numbers.Real) and epsilon > SUBEXP_SHUFFLE_EPSILON_MAX
        target = Interval(EPSILON_MIN, SUBEXP_SHUFFLE_EPSILON_MAX).check(
            epsilon,
            "epsilon",
            "for Subexp, shuffle no amplification is left to calibrate beyond "
            f"{SUBEXP_SHUFFLE_EPSILON_MAX:g}; use model='local' for a pure local budget"
            if above
            else "",
        )
        local = calibrate(
            lambda e: ShuffleEvent(SubsetExponential(e, d, s).amplification_parameters(), n_users),
            target,
            delta,
            bracket=(target, _LOCAL_BRACKET_MAX),
            context=f"for Subexp, shuffle with n_users={n_users}, d={d}, s={s}",
        )
        if local >= _LOCAL_BRACKET_MAX:  # calibrate returns the top when even it meets the target: never cap
            raise PrivacyParameterError(
                f"epsilon={epsilon!r} is not reached by any local budget up to {_LOCAL_BRACKET_MAX:g} for Subexp, "
                f"shuffle with n_users={n_users}, d={d}, s={s}"
            )
        return cls(model, float(epsilon), delta, d, s, n_users, local)

    @property
    def randomizer(self) -> SubsetExponential:
        """The subset exponential randomizer at ``local_epsilon``."""
        return SubsetExponential(self.local_epsilon, self.d, self.s)

    def event(self) -> ShuffleEvent | None:
        """The shuffled release (shuffle model); None in the local model (pure local_epsilon-LDP)."""
        if self.model == "local":
            return None
        return ShuffleEvent(self.randomizer.amplification_parameters(), self.n_users)

    def run(self, items: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        """Randomize every user's set (vectorised) and return the unbiased frequency estimate (length d)."""
        sets = _check_users(items, self.d, self.s, self.n_users)
        R = self.randomizer
        # the shuffler's permutation does not change the mean of the reports: not simulated
        return R.estimate(R.randomize(membership(sets, self.d), check_rng(rng))).mean(axis=0)


def _check_users(items: np.ndarray, d: int, s: int, n_users: int) -> np.ndarray:
    sets = check_item_sets(items, d, s)
    if sets.shape[0] != n_users:
        raise ProtocolError(f"items must hold n_users={n_users} users (as calibrated), got {sets.shape[0]}")
    return sets


@dataclass(frozen=True)
class BallsIntoBins:
    """ "MM, shuffle": true balls plus mu uniform dummy balls per user (module docstring), (epsilon, delta)-DP.

    Build it with `BallsIntoBins.calibrated`.

    Parameters
    ----------
    epsilon : float, > 0
        Target epsilon of every user.
    delta : float, in (0, 1)
        Target delta.
    d : int, >= 2
        Number of bins (items).
    s : int, in [1, d]
        Items per user.
    n_users : int, >= 1
        Number of users.
    mu : float
        Expected dummy balls per user.

    References
    ----------
    segmented-multimessage-shuffle.txt §6 ("MM, shuffle", ref. [12]); priced by Lemma 3,
    Theorem 2 and Theorem 3 of §5.1 (module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> mm = BallsIntoBins.calibrated(1.0, 1e-6, 8, 2, 1000)
    >>> 0.999 < mm.user_epsilon() <= 1.0  # the least safe dummy rate
    True
    >>> estimate = mm.run(np.tile([0, 1], (1000, 1)), np.random.default_rng(0))
    >>> bool(np.abs(estimate - [1, 1, 0, 0, 0, 0, 0, 0]).max() < 0.1)
    True
    """

    epsilon: float
    delta: float
    d: int
    s: int
    n_users: int
    mu: float

    @classmethod
    def calibrated(cls, epsilon: float, delta: float, d: int, s: int, n_users: int) -> BallsIntoBins:
        """The least dummy rate mu (relative 1e-3, rounded up) at which every user is (epsilon, delta)-DP."""
        delta = check_delta(delta)
        d = check_positive_int(d, "d", minimum=2)
        s = check_positive_int(s, "s")
        n_users = check_positive_int(n_users, "n_users")
        epsilon = check_epsilon(epsilon)
        mu = full_rate_blankets(epsilon, delta, d, n_users, s)
        acc = VariationRatioAccountant().compose(user_event(1.0, d, n_users, mu, s))
        if mu >= M_MAX and acc.get_epsilon(delta) > epsilon:
            raise PrivacyParameterError(
                f"no dummy rate mu <= {M_MAX:g} makes balls-into-bins ({epsilon:g}, {delta:g})-DP "
                f"for n_users={n_users}, d={d}, s={s}"
            )
        return cls(epsilon, delta, d, s, n_users, mu)

    def event(self) -> GroupEvent:
        """A user's release: Theorem 3 with lambda = 1 (s items, group composition)."""
        return user_event(1.0, self.d, self.n_users, self.mu, self.s)

    def user_epsilon(self) -> float:
        """Every user's epsilon at ``delta`` (Theorem 3, variation-ratio accountant); at most ``epsilon``."""
        return VariationRatioAccountant().compose(self.event()).get_epsilon(self.delta)

    def run(self, items: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        """Throw the balls (vectorised) and return (C_j - n mu / d) / n, unbiased for the item frequencies."""
        sets = _check_users(items, self.d, self.s, self.n_users)
        balls, dummies = user_messages(
            sets, np.zeros(sets.shape[0], np.int64), np.ones(1), self.mu, self.d, check_rng(rng)
        )
        messages = np.concatenate([balls, dummies])  # the shuffler's permutation leaves bin counts unchanged
        return estimate_frequencies(messages, self.d, [float(self.n_users)], [1.0], self.n_users, self.mu)


def bound_weights(levels: Sequence[float], level_counts: Sequence[float], delta: float, d: int, s: int) -> np.ndarray:
    """Weighted SepMM (§6): w_k proportional to 1/sqrt(d s^2 log(1/delta) / (n_k E_k)^2 + s / n_k), summing to 1.

    §6 writes n for the number of users of each balls-into-bins run; a run at level k has
    the n_k users of that level, so n = n_k here.

    Parameters
    ----------
    levels : sequence of float
        The menu E_1 < ... < E_K.
    level_counts : sequence of float
        The count n_k (> 0) of each level.
    delta : float, in (0, 1)
        Target delta.
    d : int, >= 2
        Number of items.
    s : int, >= 1
        Items per user.

    Returns
    -------
    numpy.ndarray
        Length-K weights summing to 1.

    Raises
    ------
    PrivacyLevelError
        For a malformed menu or counts.

    References
    ----------
    segmented-multimessage-shuffle.txt §6 ("Weighted SepMM, shuffle").

    Examples
    --------
    >>> import math
    >>> w = bound_weights([1.0, 2.0], [500, 500], 1e-6, 8, 2)
    >>> raw = [1 / math.sqrt(8 * 4 * math.log(1e6) / (500 * e) ** 2 + 2 / 500) for e in (1.0, 2.0)]
    >>> bool(abs(w[0] - raw[0] / sum(raw)) < 1e-12), round(float(w.sum()), 12)
    (True, 1.0)
    """
    E = np.asarray(check_levels(levels))
    n = np.asarray(check_level_counts(level_counts, E.size))
    d = check_positive_int(d, "d", minimum=2)
    s = check_positive_int(s, "s")
    raw = 1.0 / np.sqrt(d * s * s * math.log(1.0 / check_delta(delta)) / (n * E) ** 2 + s / n)
    return raw / raw.sum()


@dataclass(frozen=True)
class SeparatedBallsIntoBins:
    """ "SepMM, shuffle" (equal weights) and "Weighted SepMM, shuffle": one balls-into-bins run per level.

    Build it with `SeparatedBallsIntoBins.calibrated`.

    Parameters
    ----------
    runs : tuple of BallsIntoBins
        One run per level, calibrated to (E_k, delta) among its n_k users.
    weights : tuple of float
        Combination weights, summing to 1.
    weighted : bool
        True for `bound_weights`, False for equal weights.

    References
    ----------
    segmented-multimessage-shuffle.txt §6 ("SepMM, shuffle", "Weighted SepMM, shuffle").

    Examples
    --------
    >>> import numpy as np
    >>> sep = SeparatedBallsIntoBins.calibrated([1.0, 2.0], [500, 500], 1e-6, 8, 2, weighted=False)
    >>> sep.weights
    (0.5, 0.5)
    >>> estimate = sep.run(np.tile([0, 1], (1000, 1)), np.repeat([0, 1], 500), np.random.default_rng(0))
    >>> bool(np.abs(estimate - [1, 1, 0, 0, 0, 0, 0, 0]).max() < 0.15)
    True
    """

    runs: tuple[BallsIntoBins, ...]
    weights: tuple[float, ...]
    weighted: bool

    @classmethod
    def calibrated(
        cls, levels: Sequence[float], level_counts: Sequence[int], delta: float, d: int, s: int, *, weighted: bool
    ) -> SeparatedBallsIntoBins:
        """Level k's n_k users run balls-into-bins at (E_k, delta) among themselves (their own dummies only)."""
        E = check_levels(levels)
        counts = tuple(check_positive_int(c, "level_counts") for c in level_counts)
        check_level_counts(counts, len(E))
        runs = tuple(BallsIntoBins.calibrated(e, delta, d, s, c) for e, c in zip(E, counts))
        w = bound_weights(E, counts, delta, d, s) if weighted else np.full(len(E), 1.0 / len(E))
        return cls(runs, tuple(float(v) for v in w), weighted)

    def run(self, items: np.ndarray, level_index: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        """Each level's estimate from its own users, combined with the weights.

        Each run is unbiased for its level's item frequencies, so the combination (weights sum
        to 1) is unbiased for the overall frequencies when levels are chosen independently of data.
        """
        rng = check_rng(rng)
        level_index = check_level_index(level_index, len(self.runs))
        counts = np.bincount(level_index, minlength=len(self.runs))
        expected = [r.n_users for r in self.runs]
        if level_index.size != len(items) or counts.tolist() != expected:
            raise ProtocolError(f"level_index must assign {expected} users to the levels, got {counts.tolist()}")
        items = np.asarray(items)
        estimates = [r.run(items[level_index == k], rng) for k, r in enumerate(self.runs)]
        return np.asarray(self.weights) @ np.vstack(estimates)


__all__ = [
    "BallsIntoBins",
    "MODELS",
    "SeparatedBallsIntoBins",
    "SubsetExponentialBaseline",
    "bound_weights",
    "membership",
]
