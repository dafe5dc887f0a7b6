"""Our privacy-loss distributions in Google's dp-accounting and back (the optional extra ``shuffledp[interop]``).

`to_dp_accounting` turns a `shuffledp.accounting.pld.PrivacyLossDistribution` into a
``dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution`` so a shuffled round can be composed
with the rest of a privacy budget (a DP-SGD Gaussian, ...) in dp-accounting; `from_dp_accounting` brings one of
theirs into our engine; `compose_into_accountant` adds one of ours to a running ``dp_accounting.pld.PLDAccountant``.
dp-accounting is imported on first use (`OptionalDependencyError` names the ``pip install`` line when missing).

**Same object on both sides.**  Both libraries store a pessimistic discretised PLD: mass at the losses
(lower + i) * h of log(mu_upper / mu_lower) under mu_upper, plus a mass at +infinity, with
delta(eps) = mass at infinity + sum_i p_i (1 - e^(eps - l_i))_+.  Our ``(step, offset, pmf, inf_mass)`` is their
``DensePLDPmf(discretization, lower_loss, probs, infinity_mass, pessimistic_estimate=True)``.

**Directions.**  dp-accounting keeps one pmf for "remove" (mu_upper = M(D), D' = D minus one record) and one for
"add", and prices the larger delta.  Ours holds one PLD, that of a pair (P, Q) that dominates *both* orders of
every neighbouring pair of the round it was built for: the shuffle pairs are symmetric under swapping their
coordinates (`shuffledp.accounting.release.shuffle_pld`), and a sampled round's PLD is built from the maximum of
both orders' profiles (`shuffledp.accounting.subsampling.sampled_pld`).  So ours becomes a *symmetric* PLD of
theirs (``pmf_add`` = ``pmf_remove``), unless an ``add`` PLD is passed.  Coming back, an asymmetric PLD of theirs
is one PLD of ours per direction (``direction="remove"`` / ``"add"``): compose each direction separately and take
the larger delta, as dp-accounting does.

**Neighbouring relation.**  Compose only rounds under one relation: unsampled and fixed-size-sampled shuffled
rounds are bounds under substitution (dp-accounting's ``NeighboringRelation.REPLACE_ONE``, where a Gaussian has
sensitivity 2); Poisson-sampled rounds under add/remove (``ADD_OR_REMOVE_ONE``).

**Staying pessimistic.**  Our ``roundoff`` (an allowance on the summed error of the finite masses, charged to
delta) has no field in dp-accounting; it is added to the mass at infinity.  For one PLD the two give the same
delta; under composition, dp-accounting's delta_{A+B}(eps) = a + b - ab + sum p_i q_j (1 - e^(eps - l_i - m_j))_+
with a raised by r is raised by r (1 - b), which is exactly the most an error of r in A's finite masses can move
the composed delta (|delta_B - b| <= 1 - b).  Incoming masses below 0 (FFT noise) are raised to 0.

**Discretisation intervals.**  dp-accounting composes two PLDs only on one interval (``validate_composable``
raises ``ValueError`` otherwise) and our `PrivacyLossDistribution.compose_all` only on one step.  Pass
``value_discretization_interval=`` (or ``step=`` coming back) to move a PLD onto another grid: each loss is
rounded *up* to the new grid (delta is non-decreasing in every loss), which is exact when the old step is a
multiple of the new one.  The new index is computed with a relative tolerance of 1e-9 of the new step (so exact
multiples do not jump a cell on float noise); that possible rounding down by at most 1e-9 h, plus float error,
is charged to the mass at infinity (delta is 1-Lipschitz in each loss).

References
----------
dp-accounting (Google), ``dp_accounting.pld`` and its "Privacy Loss Distributions" notes; Doroshenko et al.,
"Connect the dots", PETS 2022 (not in /work/shared/papers).

Examples
--------
>>> import math
>>> from dp_accounting.pld import privacy_loss_distribution as dpa
>>> from shuffledp.accounting.pld import PrivacyLossDistribution
>>> from shuffledp.accounting.release import shuffle_pld
>>> ours = shuffle_pld(10_000, eps0=2.0, step=1e-4)
>>> gauss = dpa.from_gaussian_mechanism(8.0, sensitivity=2.0, value_discretization_interval=1e-4)
>>> theirs = ours.to_dp_accounting().compose(gauss).self_compose(10)
>>> back = PrivacyLossDistribution.from_dp_accounting(gauss)
>>> mine = PrivacyLossDistribution.compose_all([(ours, 10), (back, 10)])
>>> math.isclose(theirs.get_epsilon_for_delta(1e-6), mine.epsilon(1e-6), rel_tol=1e-6)
True
"""

from __future__ import annotations

import math
from typing import Any, Protocol, TypeVar

import numpy as np

from shuffledp.errors import OptionalDependencyError, PrivacyParameterError

#: The pip line named by `OptionalDependencyError`.
INSTALL_HINT = "pip install 'shuffledp[interop]'"
#: Relative tolerance (of the new step) when moving a loss onto another grid; charged to the mass at infinity.
_REGRID_TOL = 1e-9
DIRECTIONS = ("remove", "add")
#: Most cells of a re-gridded PLD (float64: 8 bytes each; dp-accounting's FFT needs a few times more).
_MAX_CELLS = 2**26


class DiscretePLD(Protocol):
    """What the conversions read of our PLD (`shuffledp.accounting.pld.PrivacyLossDistribution`)."""

    step: float
    offset: int
    pmf: np.ndarray
    inf_mass: float
    roundoff: float


_PLD = TypeVar("_PLD", bound=DiscretePLD)


def _dp_accounting() -> Any:
    """``dp_accounting.pld`` (imported here, on first use), else OptionalDependencyError naming the extra."""
    try:
        from dp_accounting.pld import pld_pmf, pld_privacy_accountant, privacy_loss_distribution
    except ImportError as exc:
        raise OptionalDependencyError(
            f"converting privacy-loss distributions to or from dp-accounting needs the optional extra: {INSTALL_HINT} "
            f"({exc})"
        ) from exc
    return pld_pmf, privacy_loss_distribution, pld_privacy_accountant


def regrid(
    step: float, offset: int, pmf: np.ndarray, inf_mass: float, new_step: float
) -> tuple[int, np.ndarray, float]:
    """``(offset, pmf, inf_mass)`` on the grid ``new_step``, every loss rounded up (module docstring).

    Examples
    --------
    >>> off, pmf, inf = regrid(0.5, -1, np.array([0.25, 0.25, 0.5]), 0.0, 1.0)
    >>> off, pmf.tolist(), inf <= 2e-9
    (0, [0.5, 0.5], True)
    """
    new_step = float(new_step)
    if not (math.isfinite(new_step) and new_step > 0.0):
        raise PrivacyParameterError(f"the discretisation interval must be a positive number, got {new_step!r}")
    pmf = np.asarray(pmf, dtype=np.float64)
    if new_step == step or pmf.size == 0:
        return int(offset), pmf, float(inf_mass)
    losses = (offset + np.arange(pmf.size)) * step
    if (losses[-1] - losses[0]) / new_step > _MAX_CELLS:
        raise PrivacyParameterError(
            f"moving a PLD of step {step:g} onto {new_step:g} needs more than {_MAX_CELLS} cells: use a coarser interval"
        )
    index = np.ceil(losses / new_step - _REGRID_TOL).astype(np.int64)
    base = int(index.min())
    new_pmf = np.bincount(index - base, weights=pmf)
    largest = float(np.max(np.abs(losses)))
    charge = _REGRID_TOL * new_step + 8.0 * np.finfo(np.float64).eps * max(1.0, largest / new_step) * new_step
    return base, new_pmf, min(1.0, float(inf_mass) + float(charge))


def to_dp_accounting(pld: DiscretePLD, value_discretization_interval: float | None = None, *, add: Any = None) -> Any:
    """Our PLD as a dp-accounting ``PrivacyLossDistribution`` (pessimistic; module docstring).

    Parameters
    ----------
    pld : PrivacyLossDistribution
        Ours; it dominates both orders of a neighbouring pair (every PLD our accountants build does), so the
        result is symmetric (one pmf for "remove" and "add").
    value_discretization_interval : float, optional
        Their grid; default ``pld.step``.  A different one re-grids (losses rounded up).
    add : PrivacyLossDistribution, optional
        Our PLD of the "add" direction, when ``pld`` bounds only "remove" (then the result is asymmetric).

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution

    Raises
    ------
    OptionalDependencyError
        If dp-accounting is not installed.

    Examples
    --------
    >>> from shuffledp.accounting.pld import PrivacyLossDistribution
    >>> ours = PrivacyLossDistribution(step=0.5, offset=-1, pmf=np.array([0.25, 0.25, 0.5]), inf_mass=0.01, roundoff=1e-9)
    >>> theirs = to_dp_accounting(ours)
    >>> bool(abs(theirs.get_delta_for_epsilon(0.0) - ours.delta(0.0)) < 1e-15)
    True
    """
    pld_pmf, dpa, _ = _dp_accounting()

    def pmf_of(ours: DiscretePLD) -> Any:
        h = float(ours.step) if value_discretization_interval is None else float(value_discretization_interval)
        inf_mass = min(1.0, float(ours.inf_mass) + float(ours.roundoff))  # the roundoff allowance, kept
        offset, probs, inf_mass = regrid(float(ours.step), int(ours.offset), ours.pmf, inf_mass, h)
        return pld_pmf.DensePLDPmf(h, offset, np.array(probs, dtype=np.float64), inf_mass, True)

    return dpa.PrivacyLossDistribution(pmf_of(pld), None if add is None else pmf_of(add))


def _dense_pmf(pmf: Any) -> tuple[float, int, np.ndarray, float]:
    """(discretization, lower_loss, probs, infinity_mass) of a pessimistic pmf of theirs (dense or sparse)."""
    dense = pmf.to_dense_pmf()
    try:
        pessimistic = dense._pessimistic_estimate
        fields = (dense._discretization, dense._lower_loss, dense._probs, dense._infinity_mass)
    except AttributeError as exc:  # their pmf's layout changed
        raise OptionalDependencyError(
            f"this dp-accounting's PLD pmf has no {exc.name!r}: the conversion reads DensePLDPmf's "
            f"_discretization, _lower_loss, _probs, _infinity_mass (dp-accounting 0.6); {INSTALL_HINT}"
        ) from exc
    if not pessimistic:
        raise PrivacyParameterError(
            "an optimistic dp-accounting PLD (pessimistic_estimate=False) bounds delta from below; ours must bound "
            "it from above: build it with pessimistic_estimate=True"
        )
    step, lower, probs, inf_mass = fields
    probs = np.maximum(np.array(probs, dtype=np.float64), 0.0)
    return float(step), int(lower), probs, min(1.0, max(0.0, float(inf_mass)))


def from_dp_accounting(
    pld: Any, factory: type[_PLD], *, direction: str | None = None, step: float | None = None
) -> _PLD:
    """One of dp-accounting's PLDs (a direction of it) as ours (module docstring).

    Parameters
    ----------
    pld : dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        Pessimistic (``pessimistic_estimate=True``).
    direction : {"remove", "add"}, optional
        Which of its pmfs; required when ``pld`` is asymmetric (compose each direction, take the larger delta).
    step : float, optional
        Our grid; default theirs.  A different one re-grids (losses rounded up).
    factory : type
        The class to build: `shuffledp.accounting.pld.PrivacyLossDistribution`, whose classmethod
        ``from_dp_accounting`` passes itself.

    Returns
    -------
    PrivacyLossDistribution
        With ``roundoff`` = 0 (their masses are taken as they are).

    Raises
    ------
    PrivacyParameterError
        For an asymmetric PLD without ``direction``, an unknown direction, or an optimistic PLD.
    OptionalDependencyError
        If dp-accounting is not installed.

    Examples
    --------
    >>> from dp_accounting.pld import privacy_loss_distribution as dpa
    >>> theirs = dpa.from_gaussian_mechanism(2.0, value_discretization_interval=1e-3)
    >>> from shuffledp.accounting.pld import PrivacyLossDistribution
    >>> ours = from_dp_accounting(theirs, PrivacyLossDistribution)
    >>> ours.step, bool(abs(ours.delta(1.0) - theirs.get_delta_for_epsilon(1.0)) < 1e-12)
    (0.001, True)
    """
    _dp_accounting()
    if direction is not None and direction not in DIRECTIONS:
        raise PrivacyParameterError(f"direction must be one of {', '.join(DIRECTIONS)} or None, got {direction!r}")
    try:
        remove, add, symmetric = pld._pmf_remove, pld._pmf_add, pld._symmetric
    except AttributeError as exc:
        raise PrivacyParameterError(
            f"expected a dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution, got "
            f"{type(pld).__name__} (no {exc.name!r})"
        ) from None
    if direction is None and not symmetric:
        raise PrivacyParameterError(
            "this dp-accounting PLD is asymmetric (its add and remove directions differ) and ours holds one: pass "
            "direction='remove' and direction='add', compose each, and take the larger delta"
        )
    h, lower, probs, inf_mass = _dense_pmf(add if direction == "add" else remove)
    if step is not None:
        lower, probs, inf_mass = regrid(h, lower, probs, inf_mass, step)
        h = float(step)
    return factory(step=h, offset=lower, pmf=probs, inf_mass=inf_mass, roundoff=0.0)


def compose_into_accountant(accountant: Any, pld: DiscretePLD, count: int = 1) -> Any:
    """Compose ``count`` copies of our PLD into a ``dp_accounting.pld.PLDAccountant``; returns the accountant.

    dp-accounting's accountant prices only its own ``DpEvent`` kinds and has no event for a PLD computed
    elsewhere, so this composes with the PLD it keeps (its ``_pld``, present in dp-accounting 0.6), on its
    discretisation interval (ours is re-grid when it differs).  The accountant's neighbouring relation must be the
    one ``pld`` bounds (module docstring): that is the caller's to choose.

    Examples
    --------
    >>> from dp_accounting import GaussianDpEvent
    >>> from dp_accounting.pld import PLDAccountant as TheirAccountant
    >>> from shuffledp.accounting.release import shuffle_pld
    >>> acc = TheirAccountant(value_discretization_interval=1e-4).compose(GaussianDpEvent(10.0), 5)
    >>> before = acc.get_epsilon(1e-6)
    >>> compose_into_accountant(acc, shuffle_pld(10_000, eps0=2.0), count=5).get_epsilon(1e-6) > before
    True
    """
    _, _, accountants = _dp_accounting()
    if not isinstance(accountant, accountants.PLDAccountant):
        raise PrivacyParameterError(
            f"accountant must be a dp_accounting.pld.PLDAccountant, got {type(accountant).__name__}"
        )
    if not (isinstance(count, int) and count >= 1):
        raise PrivacyParameterError(f"count must be an int >= 1, got {count!r}")
    current = getattr(accountant, "_pld", None)
    interval = getattr(accountant, "_value_discretization_interval", None)
    if current is None or interval is None:
        raise OptionalDependencyError(
            "this dp-accounting PLDAccountant keeps no _pld / _value_discretization_interval (dp-accounting 0.6 "
            f"does): compose PLDs with PrivacyLossDistribution.compose instead; {INSTALL_HINT}"
        )
    theirs = to_dp_accounting(pld, interval)
    if count > 1:
        theirs = theirs.self_compose(count)
    accountant._pld = current.compose(theirs)
    return accountant


__all__ = [
    "DIRECTIONS",
    "INSTALL_HINT",
    "DiscretePLD",
    "compose_into_accountant",
    "from_dp_accounting",
    "regrid",
    "to_dp_accounting",
]
