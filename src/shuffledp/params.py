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
from dataclasses import dataclass

from shuffledp._util.validation import check_epsilon, check_positive_int
from shuffledp.errors import PrivacyParameterError

#: Smallest local epsilon the accountant takes: below it p = e^eps0 carries too few bits in
#: float64 for p - 1 (relative error ~2e-16 / eps0) to give the pair's weights to 1e-10.
EPS0_MIN = 1e-6
#: Largest local epsilon the accountant takes: e^eps0 must be a finite float64 with room for
#: the (p + 1) and p * q products of the pair's weights.
EPS0_MAX = 700.0


def check_eps0(eps0: float, name: str = "eps0") -> float:
    """A local epsilon in [1e-6, 700]: e^eps0 must be a finite float64 that differs from 1 by enough bits.

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
        If ``eps0`` is not a finite number in [1e-6, 700].

    Examples
    --------
    >>> check_eps0(1.5)
    1.5
    >>> check_eps0(800.0)
    Traceback (most recent call last):
    ...
    shuffledp.errors.PrivacyParameterError: eps0 must be at most 700 (e^eps0 must fit in float64), ...
    """
    eps0 = check_epsilon(eps0, name)
    if eps0 < EPS0_MIN:
        raise PrivacyParameterError(
            f"{name} must be at least {EPS0_MIN:g} (and at most {EPS0_MAX:g}), got {name}={eps0!r}; "
            f"below it shuffling cannot be accounted in float64, and {name} itself is a valid shuffled epsilon"
        )
    if eps0 > EPS0_MAX:
        raise PrivacyParameterError(
            f"{name} must be at most {EPS0_MAX:g} (e^{name} must fit in float64), got {name}={eps0!r}; "
            f"at such a budget the shuffled epsilon is {name} itself for any practical n"
        )
    return eps0

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

    def linked(self, k: int) -> VariationRatio:
        """Parameters of k reports of one user that the adversary can link (PIC §8, key reuse).

        A user who reuses one key over k executions is, to an adversary joining the
        executions by key, one message: the k-fold product of the randomizer.  Densities
        multiply, so the ratio bounds become p^k and q^k; by the coupling inequality the
        total variation of a product is at most 1 - (1 - beta)^k; and a pair whose density
        ratio is at most p^k has total variation at most (p^k - 1)/(p^k + 1), so the smaller
        of the two is kept.  For generic eps0-LDP this is at least as tight as the paper's
        "k eps0-LDP message" (PIC §8).

        Parameters
        ----------
        k : int, >= 1
            Number of linked reports.

        Returns
        -------
        VariationRatio
            ``self`` when k = 1.

        Raises
        ------
        PrivacyParameterError
            If ``k`` < 1.

        References
        ----------
        pic-usenix25.txt §8 ("Multiple executions and reuse keys").

        Examples
        --------
        >>> import math
        >>> vr = VariationRatio.from_ldp(2.0).linked(3)
        >>> round(math.log(vr.p), 4), round(vr.beta, 4)
        (6.0, 0.9864)
        """
        k = check_positive_int(k, "k")
        if k == 1:
            return self
        p, q0, q1 = (_power(v, k) for v in (self.p, self.q0, self.q1))  # overflow -> inf (weaker, so safe)
        beta = -math.expm1(k * math.log1p(-self.beta)) if self.beta < 1.0 else 1.0
        if math.isfinite(p):
            beta = min(beta, math.tanh(k * math.log(self.p) / 2.0))  # (p^k - 1)/(p^k + 1)
        return VariationRatio(p=p, beta=beta, q0=q0, q1=q1)

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
