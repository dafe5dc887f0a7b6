"""Parameters of the variation-ratio reduction (segmented paper §3.3, Theorem 1).

A plain value type in the bottom layer (DESIGN.md), so that randomizers describe
themselves without importing `shuffledp.accounting`.

A family of local randomizers satisfies

* the (p, beta)-variation property: for every pair of inputs the output
  densities differ by a factor at most ``p`` and their total-variation
  distance is at most ``beta``;
* the q-ratio property: the output density of the victim on input x0 (resp. x1)
  is at most ``q0`` (resp. ``q1``) times that of any other user's randomizer on
  any input.

Theorem 1 uses a single q; `VariationRatio.q` is the conservative
``max(q0, q1)``. ``p`` may be ``math.inf`` (Poisson randomizer, Lemma 3).
"""

from __future__ import annotations

import math
import numbers
import sys
from dataclasses import dataclass

from shuffledp._util.validation import Interval, check_positive_int, check_real
from shuffledp.errors import PrivacyParameterError, UnprovenBoundError

__all__ = [
    "BlanketDecomposition",
    "EPS0_MAX",
    "EPS0_MIN",
    "PoissonReport",
    "VariationRatio",
    "check_eps0",
    "check_release_params",
]

#: Smallest local epsilon the accountant takes: below it p = e^eps0 carries too few bits in
#: float64 for p - 1 (relative error ~2e-16 / eps0) to give the pair's weights to 1e-10.
EPS0_MIN = 1e-6
#: Largest local epsilon the accountant takes: e^eps0 must be a finite float64 with room for
#: the (p + 1) and p * q products of the pair's weights.
EPS0_MAX = 700.0
#: The local epsilons the accountant takes, [`EPS0_MIN`, `EPS0_MAX`] (as written in errors and --help).
EPS0_RANGE = Interval(EPS0_MIN, EPS0_MAX)


def check_eps0(eps0: float, name: str = "eps0") -> float:
    """A local epsilon in `EPS0_RANGE` = [1e-6, 700]: e^eps0 must be a finite float64 that differs from 1 by enough bits.

    Parameters
    ----------
    eps0 : float, in [1e-6, 700]
        The local epsilon to validate.
    name : str
        The user's parameter name, used in the error message.

    Returns
    -------
    float

    Raises
    ------
    PrivacyParameterError
        If ``eps0`` is not a finite number in [1e-6, 700] (`ParameterTypeError` if not a number).

    Examples
    --------
    >>> check_eps0(1.5)
    1.5
    >>> check_eps0(800.0)
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyParameterError: eps0 must be a number in [1e-6, 700]; got 800.0 (e^eps0 must fit in float64; ...)
    """
    number = eps0 if isinstance(eps0, numbers.Real) and not isinstance(eps0, bool) else math.nan
    note = ""
    if number > EPS0_MAX:
        power = name if name.isidentifier() else f"({name})"
        note = (
            f"e^{power} must fit in float64; at such a budget the shuffled epsilon is {name} itself for any practical n"
        )
    elif 0 < number < EPS0_MIN:
        note = f"below it shuffling cannot be accounted in float64, and {name} itself is a valid shuffled epsilon"
    return EPS0_RANGE.check(eps0, name, note)


#: Relative slack when checking beta <= (p-1)/(p+1): closed forms computed in
#: float64 may land one ulp above the bound they provably satisfy.
_BETA_SLACK = 1e-12


def _power(value: float, k: int) -> float:
    """value**k, or math.inf when it overflows float64 (a larger p or q is a weaker, still valid, claim)."""
    try:
        return value**k
    except OverflowError:
        return math.inf


@dataclass(frozen=True)
class VariationRatio:
    """Immutable (p, beta, q0, q1) of the variation-ratio reduction (segmented paper Theorem 1).

    The victim's randomizer has the (p, beta)-variation property (output densities on any
    two inputs differ by a factor <= p, total variation <= beta) and the q-ratio property
    (its density on x0 / x1 is <= q0 / q1 times that of any other user's randomizer).

    Parameters
    ----------
    p : float, in (1, inf]
        Density-ratio bound; ``math.inf`` for the Poisson randomizer (Lemma 3).
    beta : float, in [0, (p - 1)/(p + 1)] (in [0, 1] for p = inf)
        Total-variation bound (clipped to the bound when one ulp above it).
    q0, q1 : float, in [1, inf]
        Ratio bounds for the victim's two inputs.

    Raises
    ------
    PrivacyParameterError
        If a parameter is outside its range.

    References
    ----------
    segmented-multimessage-shuffle.txt §3.3 Theorem 1, §5.1.2 Lemma 3.

    Examples
    --------
    >>> vr = VariationRatio(p=3.0, beta=0.4, q0=3.0, q1=2.0)
    >>> vr.q
    3.0
    >>> VariationRatio(p=3.0, beta=0.6, q0=3.0, q1=3.0)
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyParameterError: beta must lie in [0, (p-1)/(p+1)] = [0, 0.5] for p=3, got beta=0.6
    """

    p: float
    beta: float
    q0: float
    q1: float

    def __post_init__(self) -> None:
        p, beta, q0, q1 = (float(v) for v in (self.p, self.beta, self.q0, self.q1))
        if math.isnan(p) or p <= 1.0:
            raise PrivacyParameterError(f"p must be > 1 (or math.inf), got p={self.p!r}")
        beta_max = 1.0 if math.isinf(p) else (p - 1.0) / (p + 1.0)
        if not (math.isfinite(beta) and 0.0 <= beta <= beta_max * (1.0 + _BETA_SLACK)):
            raise PrivacyParameterError(
                f"beta must lie in [0, (p-1)/(p+1)] = [0, {beta_max:.12g}] for p={p:g}, got beta={self.beta!r}"
            )
        for name, q in (("q0", q0), ("q1", q1)):
            if math.isnan(q) or q < 1.0:
                raise PrivacyParameterError(f"{name} must be >= 1 (or math.inf), got {name}={q!r}")
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "beta", min(beta, beta_max))
        object.__setattr__(self, "q0", q0)
        object.__setattr__(self, "q1", q1)

    @property
    def q(self) -> float:
        """The single q of Theorem 1: the larger (conservative) of q0 and q1.

        Examples
        --------
        >>> VariationRatio(p=3.0, beta=0.4, q0=2.5, q1=3.5).q
        3.5
        """
        return max(self.q0, self.q1)

    @classmethod
    def from_ldp(cls, epsilon: float) -> VariationRatio:
        """Generic epsilon-LDP randomizer: p = q = e^eps, beta = (e^eps - 1)/(e^eps + 1).

        p is rounded up by one ulp, so the stored parameters never describe a more private
        randomizer than eps-LDP.

        Parameters
        ----------
        epsilon : float, in [1e-6, 700]

        Returns
        -------
        VariationRatio

        Raises
        ------
        PrivacyParameterError
            If ``epsilon`` is outside [1e-6, 700].

        References
        ----------
        segmented-multimessage-shuffle.txt §3.3 (any eps-LDP randomizer has these properties).

        Examples
        --------
        >>> vr = VariationRatio.from_ldp(2.0)
        >>> round(vr.p, 4), round(vr.beta, 4), vr.q == vr.p
        (7.3891, 0.7616, True)
        """
        eps = check_eps0(epsilon)
        # p rounded up (exp is within an ulp): the stored (p, beta) then never describe a more
        # private randomizer than eps0-LDP, and beta <= (p - 1)/(p + 1) holds for the stored p
        p = math.nextafter(math.exp(eps), math.inf)
        beta = math.tanh(eps / 2.0)  # (e^eps - 1)/(e^eps + 1) without cancellation
        return cls(p=p, beta=beta, q0=p, q1=p)

    def linked(self, k: int) -> VariationRatio | BlanketDecomposition:
        """Parameters of k reports of one user that the adversary can link (PIC §8, key reuse).

        A user who reuses one key over k executions is, to an adversary joining the
        executions by key, one message: the k-fold product of the randomizer, which is
        (k log p)-LDP with total variation at most 1 - (1 - beta)^k (coupling).  For finite
        p that is the `BlanketDecomposition` (k log p, min(1 - (1 - beta)^k, tanh(k log p / 2)))
        -- the variation-ratio pair is not proven for a total variation below tanh(k log p / 2)
        (docs/which-bound.md) -- or, when q0, q1 exceed p, the generic variation-ratio
        parameters at p^k with q^k.  For p = infinity: p^k = inf, q^k and the coupling bound.

        Parameters
        ----------
        k : int, >= 1
            Number of linked reports.

        Returns
        -------
        VariationRatio or BlanketDecomposition
            ``self`` when k = 1.

        Raises
        ------
        PrivacyParameterError
            If ``k`` < 1, or k log p exceeds 700.

        References
        ----------
        pic-usenix25.txt §8 ("Multiple executions and reuse keys").

        Examples
        --------
        >>> import math
        >>> d = VariationRatio.from_ldp(2.0).linked(3)
        >>> round(d.eps0, 4), round(d.beta, 4)
        (6.0, 0.9864)
        """
        k = check_positive_int(k, "k")
        if k == 1:
            return self
        beta = -math.expm1(k * math.log1p(-self.beta)) if self.beta < 1.0 else 1.0
        if math.isinf(self.p):
            return VariationRatio(p=math.inf, beta=beta, q0=_power(self.q0, k), q1=_power(self.q1, k))
        eps = check_eps0(k * math.log(self.p), f"{k} * log(p)")
        if min(self.q0, self.q1) <= self.p * (1.0 + _BETA_SLACK):
            return BlanketDecomposition(eps0=eps, beta=min(beta, math.tanh(eps / 2.0)))
        p = math.exp(eps)
        return VariationRatio(p=p, beta=math.tanh(eps / 2.0), q0=_power(self.q0, k), q1=_power(self.q1, k))

    @classmethod
    def from_pq(cls, p: float, beta: float, q: float) -> VariationRatio:
        """Convenience constructor with a single q (q0 = q1 = q).

        Parameters
        ----------
        p : float, in (1, inf]
        beta : float, in [0, (p - 1)/(p + 1)]
        q : float, in [1, inf]

        Returns
        -------
        VariationRatio

        Raises
        ------
        PrivacyParameterError
            If a parameter is outside its range.

        Examples
        --------
        >>> VariationRatio.from_pq(3.0, 0.4, 3.0) == VariationRatio(p=3.0, beta=0.4, q0=3.0, q1=3.0)
        True
        """
        return cls(p=p, beta=beta, q0=q, q1=q)


@dataclass(frozen=True)
class BlanketDecomposition:
    """What a specific eps0-LDP randomizer offers a shuffle: (eps0, beta, common_ratio).

    For the victim's two inputs x0, x1 write R0, R1 for its output laws, beta' = TV(R0, R1),
    e = e^eps0, r = beta'/(e - 1) and m = (e + 1) r = beta'/tanh(eps0/2) in [0, 1].  Then

        R0 = e r Q0 + r Q1 + (1 - m) Qc,    R1 = r Q0 + e r Q1 + (1 - m) Qc

    with Q0 = (R0 - R1)_+/beta', Q1 = (R1 - R0)_+/beta' and the common part Qc, and every
    other user's output law contains r Q0 + r Q1 + kappa Qc, kappa = (1 - m)/common_ratio:
    common_ratio = e^eps0 holds for every eps0-LDP randomizer (each law is at least
    max(R0, R1)/e^eps0 pointwise); a randomizer whose common part the others cover
    fully (k-RR: common_ratio = 1) says so.  The shuffled output is then a
    post-processing of the counts of the labels (0, 1, common) (docs/which-bound.md), which
    `shuffledp.accounting.blanket` prices.  beta = tanh(eps0/2) (m = 1, no common part) is
    the stronger-clone / generic variation-ratio pair.

    ``beta`` and ``common_ratio`` must hold for *every* pair of inputs (the bound grows
    with both, so the largest over pairs is used).

    Parameters
    ----------
    eps0 : float, in [1e-6, 700]
        The randomizer's local epsilon.
    beta : float, in [0, tanh(eps0/2)]
        Largest total variation between two inputs' output laws.
    common_ratio : float, in [1, e^eps0], default e^eps0
        How many times the victim's common mass exceeds the part of it every other user's
        law is certain to contain.

    Raises
    ------
    PrivacyParameterError
        If a parameter is outside its range.

    References
    ----------
    Balle, Bell, Gascon, Nissim, CRYPTO 2019 (privacy blanket); Su, Cheng, Wang,
    arXiv 2504.07414 (the blanket is the optimal decomposition); docs/which-bound.md.

    Examples
    --------
    >>> d = BlanketDecomposition(eps0=1.0, beta=0.3)
    >>> round(d.common_mass, 4), d.common_ratio == math.exp(1.0)   # 1 - 0.3/tanh(1/2)
    (0.3508, True)
    >>> BlanketDecomposition.from_ldp(1.0).common_mass
    0.0
    """

    eps0: float
    beta: float
    common_ratio: float = math.nan

    def __post_init__(self) -> None:
        eps0 = check_eps0(self.eps0)
        beta_max = math.tanh(eps0 / 2.0)
        beta = check_real(self.beta, "beta")
        if not (math.isfinite(beta) and 0.0 <= beta <= beta_max * (1.0 + _BETA_SLACK)):
            raise PrivacyParameterError(
                f"beta must lie in [0, tanh(eps0/2)] = [0, {beta_max:.12g}] for eps0={eps0:g}, got beta={self.beta!r}"
            )
        ratio = check_real(self.common_ratio, "common_ratio")
        ratio = math.exp(eps0) if math.isnan(ratio) else ratio
        if not (1.0 <= ratio <= math.exp(eps0) * (1.0 + _BETA_SLACK)):
            raise PrivacyParameterError(
                f"common_ratio must lie in [1, e^eps0] = [1, {math.exp(eps0):.6g}], got common_ratio={self.common_ratio!r}"
            )
        object.__setattr__(self, "eps0", eps0)
        object.__setattr__(self, "beta", min(beta, beta_max))
        object.__setattr__(self, "common_ratio", ratio)

    @property
    def common_mass(self) -> float:
        """1 - m = 1 - beta/tanh(eps0/2): the victim's mass on the common part (0 for generic eps0-LDP)."""
        return max(0.0, 1.0 - self.beta / math.tanh(self.eps0 / 2.0))

    @classmethod
    def from_ldp(cls, eps0: float) -> BlanketDecomposition:
        """Any eps0-LDP randomizer: beta = tanh(eps0/2), no common part (the stronger-clone pair).

        Examples
        --------
        >>> BlanketDecomposition.from_ldp(2.0).beta == math.tanh(1.0)
        True
        """
        eps0 = check_eps0(eps0)
        return cls(eps0=eps0, beta=math.tanh(eps0 / 2.0))

    def linked(self, k: int) -> BlanketDecomposition:
        """k reports of one user that the adversary links (PIC §8): the k-fold product randomizer.

        The product is (k eps0)-LDP with total variation at most min(1 - (1 - beta)^k, tanh(k eps0/2))
        (coupling); of its common part only the LDP guarantee is known (common_ratio = e^(k eps0)).

        Raises
        ------
        PrivacyParameterError
            If ``k`` < 1 or k eps0 exceeds 700.

        Examples
        --------
        >>> d = BlanketDecomposition(eps0=1.0, beta=0.3).linked(2)
        >>> d.eps0, round(d.beta, 2)
        (2.0, 0.51)
        """
        k = check_positive_int(k, "k")
        if k == 1:
            return self
        eps = check_eps0(k * self.eps0, f"{k} * eps0")
        beta = min(-math.expm1(k * math.log1p(-self.beta)) if self.beta < 1.0 else 1.0, math.tanh(eps / 2.0))
        return BlanketDecomposition(eps0=eps, beta=beta)


#: Relative slack when comparing a beta or q with the generic value it must reach.
_GENERIC_SLACK = 1e-12


def check_release_params(params: object) -> VariationRatio | BlanketDecomposition | PoissonReport:
    """``params`` if a shuffle bound is proven for it, else a named error.

    * `BlanketDecomposition` and `PoissonReport`: always (the three-class pairs of
      `shuffledp.accounting.blanket`);
    * `VariationRatio` with the generic parameters (beta = tanh(log(p)/2), q >= p: the
      stronger-clone pair, which dominates every eps0-LDP randomizer) or p = infinity (a victim
      whose uninformative mass sends no message, among others whose non-blanket mass sends none
      either);
    * not a `VariationRatio` with a randomizer's own beta below tanh(log(p)/2): that pair treats
      the victim's common report as invisible, which fails for k-RR (docs/which-bound.md).

    Raises
    ------
    UnprovenBoundError
        For a `VariationRatio` with finite p and beta < tanh(log(p)/2) or q < p.
    PrivacyParameterError
        For anything but a `VariationRatio` or `BlanketDecomposition`.

    Examples
    --------
    >>> check_release_params(VariationRatio.from_ldp(1.0)) == VariationRatio.from_ldp(1.0)
    True
    >>> check_release_params(VariationRatio(p=math.e, beta=0.3, q0=math.e, q1=math.e))
    Traceback (most recent call last):
    ...
    shuffledp.errors.UnprovenBoundError: the variation-ratio pair is proven only for ...
    """
    if isinstance(params, (BlanketDecomposition, PoissonReport)):
        return params
    if not isinstance(params, VariationRatio):
        raise PrivacyParameterError(
            f"params must be a VariationRatio or a BlanketDecomposition, got {type(params).__name__}"
        )
    if math.isinf(params.p):
        return params
    generic_beta = math.tanh(math.log(params.p) / 2.0)
    # p = e^eps0 is stored one ulp up, so log(p) may exceed eps0 by a few ulps of 1: relative 1e-10 at
    # eps0 = 1e-6, where beta = tanh(eps0/2) then read as below the generic value and was refused.
    beta_slack = _GENERIC_SLACK + 8.0 * sys.float_info.epsilon / math.log(params.p)
    if params.beta < generic_beta * (1.0 - beta_slack) or min(params.q0, params.q1) < params.p * (1.0 - _GENERIC_SLACK):
        raise UnprovenBoundError(
            "the variation-ratio pair is proven only for the generic parameters (beta = tanh(eps0/2) = "
            f"{generic_beta:.6g}, q >= p) or p = infinity; got p={params.p:g}, beta={params.beta:g}, "
            f"q0={params.q0:g}, q1={params.q1:g}. For a randomizer's own total variation use "
            "BlanketDecomposition(eps0, beta, common_ratio) (what R.amplification_parameters() returns); "
            "see docs/which-bound.md"
        )
    return params


@dataclass(frozen=True)
class PoissonReport:
    """One item's message of the Poisson randomizer: the user's item with probability ``lam``, else no message.

    The blanket messages of the segmented protocol (Algorithm 2) are uniform over the ``d``
    items, so a blanket lands on the victim's item, on the neighbouring item, or on one of the
    d - 2 others, and the last are visible too: `shuffledp.accounting.blanket` prices the
    three counts (segmented paper Eq. 2, Lemma 3, Algorithm 2; docs/which-bound.md).

    Parameters
    ----------
    lam : float, in (0, 1]
        Poisson sampling rate lambda.
    d : int, >= 2
        Number of items.

    Raises
    ------
    PrivacyParameterError
        If a parameter is outside its range.

    Examples
    --------
    >>> PoissonReport(0.5, 10)
    PoissonReport(lam=0.5, d=10)
    """

    lam: float
    d: int

    def __post_init__(self) -> None:
        lam = float(self.lam)
        if not (math.isfinite(lam) and 0.0 < lam <= 1.0):
            raise PrivacyParameterError(f"lam (Poisson sampling rate) must lie in (0, 1], got lam={self.lam!r}")
        object.__setattr__(self, "lam", lam)
        object.__setattr__(self, "d", check_positive_int(self.d, "d", minimum=2))
