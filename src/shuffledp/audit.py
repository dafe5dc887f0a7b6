"""Privacy audits of local randomizers.

* `exact_epsilon` — for discrete randomizers, the exact worst-case
  log-likelihood ratio read off their transition matrix.
* `sampler_audit` / `exact_audit` — whether a discrete randomizer's
  *sampler* realizes that matrix at every scale of probability (plain and
  importance-sampled chi-square tests), and the matrix's epsilon only if it does.
* `audit_continuous` — for any randomizer that can be sampled, a
  statistically valid Monte-Carlo *lower bound* on the epsilon it really
  provides: outputs of two inputs are histogrammed over a fixed partition of
  the output space (chosen from an independent pilot sample), each cell's
  probability gets a Clopper–Pearson interval (Bonferroni-corrected over all
  cells and both directions), and the largest ratio of a lower confidence
  limit to an upper one is the bound.  With probability >= 1 - alpha the true
  epsilon is at least the reported value, so a correct mechanism must report a
  value below its claim, and a broken one is caught when the sample is large
  enough to see its excess.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from shuffledp.errors import AuditError, ShapeError
from shuffledp.randomizers._sampling import TiltedGenerator
from shuffledp.randomizers.base import DiscreteRandomizer, LocalRandomizer
from shuffledp.randomizers.domains import Box, L2Ball

__all__ = [
    "AuditResult",
    "SamplerAuditResult",
    "audit_continuous",
    "exact_audit",
    "exact_epsilon",
    "exact_epsilon_log",
    "extreme_pair",
    "sampler_audit",
]


def exact_epsilon(P: np.ndarray) -> float:
    """Exact epsilon of a randomizer with transition matrix ``P[input, output]``.

    The smallest epsilon with P[i, j] <= e^epsilon P[i', j] for all inputs i, i'
    and outputs j (the definition of epsilon-LDP for finitely many outputs):
    max over j, i, i' of log(P[i, j] / P[i', j]), over the outputs some input can
    produce.

    Parameters
    ----------
    P : array_like, shape (inputs, outputs)
        Transition probabilities, at least two rows; rows should sum to 1.

    Returns
    -------
    float
        The exact epsilon; ``math.inf`` when some output is possible for one input
        and impossible for another.

    Raises
    ------
    ShapeError
        When ``P`` is not 2-d with at least two rows.

    Examples
    --------
    >>> import math
    >>> from shuffledp.audit import exact_epsilon
    >>> exact_epsilon([[0.75, 0.25], [0.25, 0.75]])    # binary RR with e^eps = 3
    1.0986122886681...
    >>> exact_epsilon([[1.0, 0.0], [0.5, 0.5]])
    inf
    """
    P = np.asarray(P, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return exact_epsilon_log(np.log(P))


def exact_epsilon_log(L: np.ndarray) -> float:
    """`exact_epsilon` from the log matrix ``L = log P`` (no underflow at any epsilon).

    Parameters
    ----------
    L : array_like, shape (inputs, outputs)
        Natural logs of the transition probabilities (-inf for impossible outputs),
        at least two rows.

    Returns
    -------
    float
        max over used columns of (max L - min L); ``math.inf`` as for `exact_epsilon`.

    Raises
    ------
    ShapeError
        When ``L`` is not 2-d with at least two rows.

    Examples
    --------
    >>> import numpy as np
    >>> from shuffledp.audit import exact_epsilon_log
    >>> exact_epsilon_log(np.array([[0.0, -800.0], [-800.0, 0.0]]))   # e^-800 underflows as a probability
    800.0
    """
    L = np.asarray(L, dtype=np.float64)
    if L.ndim != 2 or L.shape[0] < 2:
        raise ShapeError(f"the transition matrix must be 2-d with >= 2 rows (inputs), got shape {L.shape}")
    col_max, col_min = L.max(axis=0), L.min(axis=0)
    used = col_max > -np.inf
    if np.any(col_min[used] == -np.inf):
        return math.inf
    return float(np.max(col_max[used] - col_min[used]))


def exact_audit(
    randomizer: DiscreteRandomizer,
    *,
    sample: bool = True,
    n_samples: int = 50_000,
    alpha: float = 1e-6,
    seed: int = 0,
) -> float:
    """Exact epsilon of a discrete randomizer, certified against its sampler.

    Reads the epsilon off the (log) transition matrix, then -- unless
    ``sample=False`` -- runs `sampler_audit` and raises `AuditError`
    when the sampler does not realize that matrix (so a sampler that never draws
    its rare outputs cannot be certified at the matrix's epsilon).  Tables with
    cells too improbable to draw even under tilting (e.g. unary encodings with
    k >~ 12 at the default ``n_samples``) fail closed; ``sample=False`` then reads
    the matrix only.

    Parameters
    ----------
    randomizer : DiscreteRandomizer
        The randomizer to audit.
    sample : bool, default True
        Whether to certify the sampler against the matrix (`sampler_audit`).
    n_samples : int, default 50000
        Reports per audited input and per test, >= 1.
    alpha : float, default 1e-6
        Level of the chi-square tests, in (0, 1).
    seed : int, default 0
        Seed of the audit's generators (the audit is reproducible).

    Returns
    -------
    float
        The exact epsilon of the transition matrix (`exact_epsilon_log`).

    Raises
    ------
    AuditError
        When the sampler does not realize its matrix.

    Examples
    --------
    >>> from shuffledp.audit import exact_audit
    >>> from shuffledp.randomizers import KRandomizedResponse
    >>> exact_audit(KRandomizedResponse(epsilon=1.0, k=3), n_samples=2_000)
    1.0
    """
    epsilon = exact_epsilon_log(randomizer.log_transition_matrix())
    if sample:
        result = sampler_audit(randomizer, n_samples=n_samples, alpha=alpha, seed=seed)
        if not result.passed:
            raise AuditError(f"{randomizer!r} does not realize its transition matrix: {result.explain()}")
    return epsilon


@dataclass(frozen=True)
class SamplerAuditResult:
    """Outcome of `sampler_audit` (chi-square statistics summed over the audited input rows).

    Attributes
    ----------
    plain_pvalue : float
        p-value of the direct samples against the matrix (Pearson, rare cells pooled).
    tilted_pvalue : float
        p-value of the tilted samples against the matrix, through their likelihood ratios.
    unreached : int
        Cells of positive probability never drawn, even under tilting.
    outside : int
        Reports outside the table or in a cell of probability 0.
    rows : int
        Number of audited inputs.
    n_samples : int
        Reports per audited input and per test.
    alpha : float
        Level of the tests.
    """

    plain_pvalue: float  # direct samples against the matrix (Pearson, rare cells pooled)
    tilted_pvalue: float  # tilted samples against the matrix, through their likelihood ratios
    unreached: int  # cells of positive probability never drawn, even under tilting
    outside: int  # reports outside the table or in a cell of probability 0
    rows: int
    n_samples: int  # per audited row and per test
    alpha: float

    @property
    def passed(self) -> bool:
        """True when every cell was observed and neither chi-square test rejects at level alpha."""
        return self.unreached == 0 and self.outside == 0 and min(self.plain_pvalue, self.tilted_pvalue) >= self.alpha

    def explain(self) -> str:
        """One line stating the p-values, unreached cells and impossible reports."""
        return (
            f"plain chi-square p = {self.plain_pvalue:.3g}, tilted chi-square p = {self.tilted_pvalue:.3g} "
            f"(alpha = {self.alpha:g}), {self.unreached} cells never drawn under tilting, "
            f"{self.outside} impossible reports, over {self.rows} inputs x {self.n_samples} samples"
            + (
                " (cells never drawn cannot be certified: raise n_samples, or audit a smaller table)"
                if self.unreached
                else ""
            )
        )


def _audit_rows(count: int, max_rows: int) -> np.ndarray:
    return np.unique(np.linspace(0, count - 1, min(count, max_rows)).round().astype(int))


def _pearson(counts: np.ndarray, expected: np.ndarray) -> tuple[float, int]:
    """Pearson statistic and df of cell counts against expected counts.

    Cells expected fewer than 5 times are pooled; a pool still expected fewer than
    5 times joins the largest cell.
    """
    counts = np.asarray(counts, dtype=np.float64)
    big = expected >= 5.0
    obs, exp = counts[big], expected[big]
    if expected[~big].sum() >= 5.0 or not big.any():
        obs, exp = np.append(obs, counts[~big].sum()), np.append(exp, expected[~big].sum())
    else:
        top = int(np.argmax(exp))
        obs[top] += counts[~big].sum()
        exp[top] += expected[~big].sum()
    return float(np.sum((obs - exp) ** 2 / exp)), len(exp) - 1


def _log_sums(cells: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """log sum of exp(values) per cell (-inf for empty cells), shifted per cell against overflow."""
    top = np.full(size, -np.inf)
    np.maximum.at(top, cells, values)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return safe + np.log(np.bincount(cells, weights=np.exp(values - safe[cells]), minlength=size))


def _tilted_chi2(cells: np.ndarray, log_w: np.ndarray, log_p: np.ndarray, min_hits: int) -> tuple[float, int, int]:
    """Chi-square of importance-weighted draws (likelihood ratios W) against cell probabilities P.

    m_c = mean(1[cell = c] W) estimates P_c without bias.  When W is constant on
    each cell (W = w_c: the report determines every tilted coin, as in all our
    samplers), the tilted law is Q_c = P_c / w_c exactly, so the counts get a
    Pearson test against n Q_c, and sum_c Q_c = 1 is checked (to 1e-9) when every
    cell was reached.  Otherwise a Wald test (`_wald`).  Returns (T, df, unreached).
    """
    n, size = len(cells), len(log_p)
    hits = np.bincount(cells, minlength=size)
    unreached = int(np.sum((hits == 0) & (log_p > -np.inf)))
    if np.any(hits[log_p == -np.inf] > 0):
        return math.inf, 1, unreached  # a draw in a cell of probability 0
    reached = hits > 0
    log_m = _log_sums(cells, log_w, size)[reached] - math.log(n)
    log_m2 = _log_sums(cells, 2.0 * log_w, size)[reached] - math.log(n)
    log_f = np.log(hits[reached] / n)
    # Jensen: log m2 + log f - 2 log m >= 0, with equality iff W is constant on the cell.
    if np.max(log_m2 + log_f - 2.0 * log_m) <= 1e-9:
        expected = n * np.exp(log_p[reached] - (log_m - log_f))
        if unreached == 0 and abs(expected.sum() / n - 1.0) > 1e-9:
            return math.inf, 1, unreached
        stat, df = _pearson(hits[reached], expected)
        return stat, df, unreached
    return (*_wald(cells, log_w, log_p, hits, min_hits), unreached)


def _wald(
    cells: np.ndarray, log_w: np.ndarray, log_p: np.ndarray, hits: np.ndarray, min_hits: int
) -> tuple[float, int]:
    """Wald chi-square of the importance-sampling estimates m_c of P_c (cells hit < ``min_hits`` times pooled).

    Over one draw the estimates have covariance diag(m2) - m m^T, m2_c = mean(1[cell = c] W^2).
    Standardised, T = z^T (I - u u^T)^-1 z = |z|^2 + (u.z)^2 / (1 - |u|^2), with
    z_c = sqrt(n)(m_c - P_c)/sqrt(m2_c) and u_c = m_c / sqrt(m2_c).
    """
    n, size = len(cells), len(log_p)
    sparse = (hits > 0) & (hits < min_hits)
    group = np.where(sparse[cells], size, cells)
    log_pg = np.append(log_p, np.logaddexp.reduce(log_p[sparse]) if sparse.any() else -np.inf)
    present = np.bincount(group, minlength=size + 1) > 0
    log_m = _log_sums(group, log_w, size + 1)[present] - math.log(n)
    log_m2 = _log_sums(group, 2.0 * log_w, size + 1)[present] - math.log(n)
    log_pg = log_pg[present]
    u = np.exp(log_m - 0.5 * log_m2)
    z = math.sqrt(n) * (u - np.exp(log_pg - 0.5 * log_m2))
    slack = max(1.0 - float(u @ u), 1e-12)
    return float(z @ z) + float(u @ z) ** 2 / slack, len(z)


def sampler_audit(
    randomizer: DiscreteRandomizer,
    *,
    n_samples: int = 50_000,
    alpha: float = 1e-6,
    seed: int = 0,
    max_rows: int = 8,
    tilt_floor: float = 0.5,
    min_hits: int = 20,
) -> SamplerAuditResult:
    """Does the sampler of a discrete randomizer realize its transition matrix, at every scale?

    For up to ``max_rows`` inputs of `transition_inputs`
    (evenly spaced; all when fewer), two chi-square tests, summed over the rows:

    1. *Plain*: ``n_samples`` reports per input against the matrix row (Pearson;
       cells expected fewer than 5 times pooled).  It sees the bulk of the law,
       i.e. probabilities down to about 5 / n_samples.
    2. *Tilted* (importance sampling): the same reports drawn with a
       `TiltedGenerator`, under which the
       exact sampling primitives draw every coin of probability p with
       clip(p, tilt_floor, 1 - tilt_floor) and record the likelihood ratio W of
       each report.  mean(1[y = c] W) is an unbiased estimate of P[y = c] whose
       *relative* error does not depend on how small P[y = c] is, so the test
       sees e^-74 as easily as 1/2.  When W is a function of the report (all our
       samplers), the tilted law is exactly Q_c = P_c / W_c and the counts get a
       Pearson test against it; otherwise a Wald test of the estimates.

    What it detects: any report law different from the matrix at any scale of
    probability, provided the sampler draws its randomness through the exact
    primitives (`bernoulli` and friends).
    A sampler that bypasses them -- e.g. ``rng.random() < 1 - 1e-17`` -- is not
    tilted, never shows its rare cells, and fails: a cell of positive
    probability never drawn is counted ``unreached`` and fails the audit
    (fail closed), so it cannot certify what it did not observe.
    What it cannot detect: an error of the primitives themselves below 2^-53
    (they are exact by construction; tests/randomizers/test_sampling.py checks
    their rare branch by conditioning on it), deviations smaller than the test's
    statistical resolution (about 1/sqrt(n_samples) relative, per cell), and
    cells whose tilted probability is below about 1/n_samples (reported as
    unreached: raise ``n_samples`` or use a smaller table).

    Parameters
    ----------
    randomizer : DiscreteRandomizer
        The randomizer whose sampler is tested.
    n_samples : int, default 50000
        Reports per audited input and per test, >= 1.
    alpha : float, default 1e-6
        Level of the tests, in (0, 1).
    seed : int, default 0
        Seed of the audit's generators.
    max_rows : int, default 8
        Largest number of inputs audited (evenly spaced over the table's rows).
    tilt_floor : float, default 0.5
        Every coin of the tilted sampler is drawn with a probability in
        [tilt_floor, 1 - tilt_floor], 0 < tilt_floor <= 1/2.
    min_hits : int, default 20
        Cells hit fewer times are pooled in the Wald test.

    Returns
    -------
    SamplerAuditResult
        The statistics; ``.passed`` says whether the sampler is certified.

    Examples
    --------
    >>> from shuffledp.audit import sampler_audit
    >>> from shuffledp.randomizers import UnaryRR
    >>> result = sampler_audit(UnaryRR(epsilon=2.0, k=2), n_samples=2_000)
    >>> result.passed, result.rows
    (True, 3)
    """
    inputs = randomizer.transition_inputs()
    log_table = randomizer.log_transition_matrix()
    rows = _audit_rows(len(inputs), max_rows)
    plain_stat = tilted_stat = 0.0
    plain_df = tilted_df = 0
    unreached = outside = 0
    for offset, i in enumerate(rows):
        X = np.repeat(inputs[i : i + 1], n_samples, axis=0)
        direct = randomizer.output_index(randomizer.randomize(X, np.random.default_rng([seed, offset, 0])))
        tilted_rng = TiltedGenerator([seed, offset, 1], n_samples, tilt_floor)
        tilted = randomizer.output_index(randomizer.randomize(X, tilted_rng))
        bad = (direct < 0) | (log_table[i][np.maximum(direct, 0)] == -np.inf)
        outside += int(bad.sum()) + int(np.sum(tilted < 0))
        if bad.any() or np.any(tilted < 0):
            continue
        counts = np.bincount(direct, minlength=log_table.shape[1])
        stat, df = _pearson(counts, n_samples * np.exp(log_table[i]))
        plain_stat, plain_df = plain_stat + stat, plain_df + df
        stat, df, missing = _tilted_chi2(tilted, tilted_rng.log_weight, log_table[i], min_hits)
        tilted_stat, tilted_df, unreached = tilted_stat + stat, tilted_df + df, unreached + missing

    def pvalue(stat: float, df: int) -> float:
        return 1.0 if df <= 0 and stat == 0.0 else float(stats.chi2.sf(stat, max(df, 1)))

    return SamplerAuditResult(
        pvalue(plain_stat, plain_df), pvalue(tilted_stat, tilted_df), unreached, outside, len(rows), n_samples, alpha
    )


@dataclass(frozen=True)
class AuditResult:
    """Outcome of `audit_continuous`.

    Attributes
    ----------
    epsilon_lower : float
        Lower bound on the true epsilon, valid with probability >= 1 - alpha.
    epsilon_point : float
        Plug-in estimate over well-populated cells (for reading only; NaN if none).
    claimed : float
        The randomizer's declared epsilon.
    n_samples : int
        Reports drawn per input.
    cells : int
        Cells of the partition of the output space.
    alpha : float
        Error probability of the lower bound.
    """

    epsilon_lower: float  # valid lower bound on the true epsilon, w.p. >= 1 - alpha
    epsilon_point: float  # plug-in estimate over well-populated cells (for reading only)
    claimed: float
    n_samples: int
    cells: int
    alpha: float

    @property
    def passed(self) -> bool:
        """True when the data do not refute the claimed epsilon."""
        return self.epsilon_lower <= self.claimed


def extreme_pair(domain: Any) -> tuple[np.ndarray, np.ndarray]:
    """Two inputs at maximal distance: opposite corners of a box, antipodes of a ball.

    Parameters
    ----------
    domain : Box or L2Ball
        The input domain.

    Returns
    -------
    tuple of numpy.ndarray
        ``(x0, x1)``, each of shape (dim,).

    Raises
    ------
    TypeError
        For other domains (pass ``x0`` and ``x1`` to `audit_continuous` instead).

    Examples
    --------
    >>> from shuffledp.audit import extreme_pair
    >>> from shuffledp.randomizers import Box
    >>> extreme_pair(Box(2))
    (array([-1., -1.]), array([1., 1.]))
    """
    if isinstance(domain, Box):
        return np.full(domain.dim, domain.low), np.full(domain.dim, domain.high)
    if isinstance(domain, L2Ball):
        e = np.zeros(domain.dim)
        e[0] = domain.radius
        return -e, e
    raise TypeError(f"no default extreme pair for the domain {domain.describe()}; pass x0 and x1")


def _cell_index(Y: np.ndarray, edges: list[np.ndarray]) -> np.ndarray:
    idx = [np.searchsorted(e, Y[:, k], side="right") for k, e in enumerate(edges)]
    shape = tuple(len(e) + 1 for e in edges)
    return np.ravel_multi_index(idx, shape), int(np.prod(shape))


def _as_matrix(Y: np.ndarray, coords: int) -> np.ndarray:
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y[:, None]
    return Y[:, :coords]


def audit_continuous(
    randomizer: LocalRandomizer,
    x0: Any = None,
    x1: Any = None,
    *,
    n_samples: int = 400_000,
    bins_per_dim: int = 16,
    coords: int = 2,
    alpha: float = 1e-3,
    rng: np.random.Generator | None = None,
) -> AuditResult:
    """Monte-Carlo lower bound on the epsilon of ``randomizer`` between ``x0`` and ``x1``.

    Outputs are projected on their first ``coords`` coordinates (post-processing,
    so the bound stays valid) and binned on a grid whose edges are quantiles
    of an independent pilot sample.  Each cell's probability under x0 and x1 gets
    a one-sided Clopper-Pearson interval at level alpha / (2 cells) (Bonferroni);
    the bound is the largest log ratio of a lower limit to the other input's upper
    limit, so with probability >= 1 - alpha the true epsilon is at least
    ``epsilon_lower``.

    Parameters
    ----------
    randomizer : LocalRandomizer
        Any randomizer that can be sampled.
    x0, x1 : array_like or None
        The two inputs; default `extreme_pair` of the randomizer's domain.
    n_samples : int, default 400000
        Reports per input.
    bins_per_dim : int, default 16
        Grid cells per projected coordinate.
    coords : int, default 2
        Number of leading output coordinates kept.
    alpha : float, default 1e-3
        Error probability of the lower bound, in (0, 1).
    rng : numpy.random.Generator or None
        Source of randomness (None: a generator seeded with 0, so audits repeat).

    Returns
    -------
    AuditResult
        The bound and its context; ``.passed`` is False when the data refute the claim.

    Examples
    --------
    >>> from shuffledp.audit import audit_continuous
    >>> from shuffledp.randomizers import Laplace
    >>> result = audit_continuous(Laplace(epsilon=1.0, dim=1), n_samples=20_000, bins_per_dim=8, coords=1)
    >>> result.passed, 0.0 < result.epsilon_lower <= 1.0
    (True, True)
    """
    rng = np.random.default_rng(0) if rng is None else rng
    if x0 is None or x1 is None:
        x0, x1 = extreme_pair(randomizer.domain)
    x0, x1 = np.atleast_1d(np.asarray(x0, dtype=np.float64)), np.atleast_1d(np.asarray(x1, dtype=np.float64))

    def sample(x: np.ndarray, n: int) -> np.ndarray:
        return _as_matrix(randomizer.randomize(np.tile(x, (n, 1)), rng), coords)

    pilot = np.vstack([sample(x0, 20_000), sample(x1, 20_000)])
    qs = np.linspace(0, 1, bins_per_dim + 1)[1:-1]
    edges = [np.unique(np.quantile(pilot[:, k], qs)) for k in range(pilot.shape[1])]
    cells0, n_cells = _cell_index(sample(x0, n_samples), edges)
    cells1, _ = _cell_index(sample(x1, n_samples), edges)
    c0 = np.bincount(cells0, minlength=n_cells)
    c1 = np.bincount(cells1, minlength=n_cells)
    a = alpha / (2 * n_cells)  # Bonferroni over cells and both directions; one-sided limits
    n = n_samples

    def lower(k: np.ndarray) -> np.ndarray:
        return np.where(k > 0, stats.beta.ppf(a, np.maximum(k, 1), n - k + 1), 0.0)

    def upper(k: np.ndarray) -> np.ndarray:
        return np.where(k < n, stats.beta.ppf(1 - a, k + 1, np.maximum(n - k, 1)), 1.0)

    lo0, hi0, lo1, hi1 = lower(c0), upper(c0), lower(c1), upper(c1)
    with np.errstate(divide="ignore"):
        ratios = np.concatenate([np.log(lo0) - np.log(hi1), np.log(lo1) - np.log(hi0)])
    eps_lower = float(max(0.0, np.nanmax(ratios)))
    well = (c0 >= 100) & (c1 >= 100)
    point = float(np.max(np.abs(np.log(c0[well]) - np.log(c1[well])))) if well.any() else math.nan
    return AuditResult(eps_lower, point, randomizer.epsilon, n_samples, n_cells, alpha)
