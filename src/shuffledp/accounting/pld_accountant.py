"""`PLDAccountant`: tight composition of shuffled (and sampled) rounds through privacy-loss distributions.

Each round's PLD is that of its proven dominating pair (`shuffledp.accounting.release.shuffle_pld`)
or, for a sampled round, the connect-the-dots PLD of its privacy profile
(`shuffledp.accounting.subsampling.sampled_pld`); all share one loss grid and are convolved by one FFT.
"""

from __future__ import annotations

import math
from collections import Counter

from shuffledp._util.validation import check_probability
from shuffledp.accounting import events as E
from shuffledp.accounting._rounding import DEFAULT_RTOL
from shuffledp.accounting.accountants import _TAIL, Accountant, _cap, _profile, _single
from shuffledp.accounting.pld import MAX_COMPOSED_BINS as _MAX_COMPOSED_BINS
from shuffledp.accounting.pld import CompositionError, PrivacyLossDistribution
from shuffledp.accounting.release import release_divergence, release_epsilon, shuffle_pld
from shuffledp.accounting.subsampling import sampled_epsilon, sampled_pld
from shuffledp.errors import OutsideRegimeError, PrivacyParameterError, UnsupportedEventError
from shuffledp.params import BlanketDecomposition, VariationRatio

#: Most rounds the PLD composes: each keeps at least 1,000 bins within _MAX_COMPOSED_BINS (memory).
_MAX_PLD_ROUNDS = _MAX_COMPOSED_BINS // 1_000


def _generic_round(event: E.ShuffleEvent | E.SampledEvent) -> E.ShuffleEvent | None:
    """A round with a randomizer's own decomposition priced by the generic eps0-LDP pair, which dominates
    every eps0-LDP randomizer (docs/which-bound.md); None for any other round (a sampled round's
    profile already takes the smaller of the two at every epsilon, `BlanketDivergence`)."""
    if not isinstance(event, E.ShuffleEvent):
        return None
    params = event.params
    if not isinstance(params, BlanketDecomposition) or params.common_mass <= 0.0:
        return None
    return E.ShuffleEvent(VariationRatio.from_ldp(params.eps0), event.n, event.gamma)


class PLDAccountant(Accountant):
    """Tight composition of shuffled rounds through privacy-loss distributions (pessimistic rounding).

    Supports single (possibly linked) releases and any composition of them, with different
    n and parameters per round; the PLD of each round is that of its dominating pair
    (`shuffle_pld`), all on one loss grid, convolved
    by one FFT: delta(eps) = E_P[(1 - e^(eps - L))_+] + P[L = inf] of the summed losses.
    The result is capped by the sum of the rounds' log p. One round without ``step`` is
    priced by the variation-ratio bound itself.

    A round with a randomizer's own decomposition (`BlanketDecomposition`) is also dominated by
    the generic eps0-LDP pair of its eps0 (docs/which-bound.md), and which of the two composes
    better depends on the setting (Minkowski Response, dim 6, eps0 = 4, n = 10^4, 80 rounds at
    delta = 2e-7: 5.29 with its own pair, 4.70 with the generic one). Both compositions are
    upper bounds, so `get_epsilon` and `get_delta` return the smaller (`pld` gives either PLD).

    Parameters
    ----------
    step : float, in [1e-8, 0.1], or None
        Loss grid; ``None`` picks the coarsest of the rounds' default steps.

    Raises
    ------
    UnsupportedEventError
        From `compose` for group events.
    CompositionError
        From `get_epsilon` when the mass at infinite loss plus the FFT round-off
        allowance reaches delta (and the log p cap is infinite).

    References
    ----------
    segmented-multimessage-shuffle.txt §3.3 Theorem 1 (the per-round pair); Meiser and
    Mohammadi, CCS 2018 (pessimistic PLD; not in /work/shared/papers).

    Examples
    --------
    >>> from shuffledp.params import VariationRatio
    >>> from shuffledp.accounting.events import ComposedEvent, ShuffleEvent
    >>> a = ShuffleEvent(VariationRatio.from_ldp(2.0), 10_000)
    >>> b = ShuffleEvent(VariationRatio.from_ldp(1.0), 5_000)
    >>> round(PLDAccountant().compose(ComposedEvent([a, b])).get_epsilon(1e-6), 3)
    0.133
    """

    name = "pld"

    def __init__(self, step: float | None = None) -> None:
        super().__init__()
        if step is not None:
            try:
                step = float(step)
            except (TypeError, ValueError):
                step = math.nan
            if not (math.isfinite(step) and 1e-8 <= step <= 0.1):
                raise PrivacyParameterError(f"step must be None or lie in [1e-8, 0.1], got {step!r}")
        self.step = step

    def _check_supported(self, event: E.Event) -> None:
        self._rounds(event)

    def _rounds(self, event: E.Event) -> Counter:
        """Every round as (ShuffleEvent or normalised SampledEvent, count), in a Counter."""
        if isinstance(event, E.SampledEvent):
            return Counter({event.normalised(): 1})
        single = _single(event)
        if single is not None:
            return Counter({single: 1})
        if isinstance(event, E.GroupEvent):
            raise UnsupportedEventError("PLDAccountant does not price group privacy: use VariationRatioAccountant")
        if isinstance(event, E.PersonalizedShuffleEvent):
            raise UnsupportedEventError(
                "PLDAccountant has no privacy-loss distribution for personalized releases: use VariationRatioAccountant"
            )
        if isinstance(event, E.SelfComposedEvent):
            return Counter({k: v * event.count for k, v in self._rounds(event.event).items()})
        total: Counter = Counter()
        for inner in event.events:
            total.update(self._rounds(inner))
        return total

    def _candidates(self, event: E.Event) -> list[Counter]:
        """The rounds priced by their own pairs, then (where it differs) by the generic eps0-LDP pair."""
        rounds = self._rounds(event)
        generic = Counter()
        for ev, count in rounds.items():
            generic[_generic_round(ev) or ev] += count
        return [rounds] if generic == rounds else [rounds, generic]

    def pld(self, *, pair: str = "own", tail_mass: float = 1e-15) -> PrivacyLossDistribution:
        """The composed privacy-loss distribution of everything recorded (pessimistic; ready for `to_dp_accounting`).

        Parameters
        ----------
        pair : {"own", "generic"}
            ``"own"``: every round's own proven pair; ``"generic"``: rounds with a randomizer's own
            decomposition priced by the generic eps0-LDP pair instead (both dominate; `get_epsilon`
            uses the better composition).  A sampled round is the same either way: its profile
            already takes the smaller of the two pairs at every epsilon.
        tail_mass : float, in (0, 1)
            Mass the PLD may move to infinite loss (charged, never dropped).

        Returns
        -------
        PrivacyLossDistribution
            Also for a single round (a sampled round's connect-the-dots PLD, `sampled_pld`).

        Raises
        ------
        UnsupportedEventError
            If nothing has been recorded.
        PrivacyParameterError
            For a ``pair`` outside {"own", "generic"} or a ``tail_mass`` outside (0, 1).

        Examples
        --------
        >>> from shuffledp.params import VariationRatio
        >>> from shuffledp.accounting.events import SampledEvent, ShuffleEvent
        >>> round_ = SampledEvent(ShuffleEvent(VariationRatio.from_ldp(4.0), 10_000), 10_000, 50_000)
        >>> pld = PLDAccountant().compose(round_, 80).pld()
        >>> round(float(pld.epsilon(2e-7)), 2)
        0.85
        """
        if pair not in ("own", "generic"):
            raise PrivacyParameterError(f"pair must be one of own, generic, got {pair!r}")
        tail_mass = check_probability(tail_mass, "tail_mass")
        candidates = self._candidates(self.event)
        return self._pld(candidates[-1] if pair == "generic" else candidates[0], tail_mass)[0]

    def _pld(self, rounds: Counter, tail: float) -> tuple[PrivacyLossDistribution, float]:
        """The composed PLD of ``rounds`` and the cap sum(count * log p)."""
        total = sum(rounds.values())
        bins = max(1_000, _MAX_COMPOSED_BINS // total)  # the composed PLD has about `total` times as many bins
        tail_mass = tail / total

        def build(ev: E.ShuffleEvent | E.SampledEvent, step: float | None) -> PrivacyLossDistribution:
            if isinstance(ev, E.SampledEvent):
                return sampled_pld(_profile(ev, _TAIL), step=step, tail_mass=tail_mass, max_bins=bins // 2)
            return shuffle_pld(ev.n, params=ev.params, step=step, tail_mass=tail_mass, max_bins=bins, gamma=ev.gamma)

        cap = sum(c * _cap(ev) for ev, c in rounds.items())
        if len(rounds) == 1:
            ((ev, count),) = rounds.items()
            return build(ev, self.step).compose(count), cap
        plds = {ev: build(ev, self.step) for ev in rounds}
        step = max(pld.step for pld in plds.values())
        plds = {ev: pld if pld.step == step else build(ev, step) for ev, pld in plds.items()}
        return PrivacyLossDistribution.compose_all([(plds[ev], c) for ev, c in rounds.items()]), cap

    def _epsilon(self, event: E.Event, delta: float) -> float:
        rounds = self._rounds(event)
        if sum(rounds.values()) == 1 and self.step is None:
            # one round: the pair's epsilon itself, without the PLD's discretisation bias
            (ev,) = rounds
            if isinstance(ev, E.SampledEvent):
                return sampled_epsilon(_profile(ev, _TAIL), delta, DEFAULT_RTOL)
            value = release_epsilon(ev.params, ev.n, delta, ev.gamma, DEFAULT_RTOL)
            if not math.isfinite(value):
                raise OutsideRegimeError(f"no finite epsilon certifies delta={delta:g}, n={ev.n} (p = inf, no cover)")
            return value
        total = sum(rounds.values())
        if total > _MAX_PLD_ROUNDS:
            raise CompositionError(
                f"tight composition of {total} rounds needs more than {_MAX_COMPOSED_BINS} PLD bins (at least 1,000 per "
                f"round); at most {_MAX_PLD_ROUNDS} rounds: use method='best' (or 'advanced'/'basic')"
            )
        values, failure = [], None
        for candidate in self._candidates(event):
            pld, cap = self._pld(candidate, 1e-4 * delta)
            if pld.inf_mass + pld.roundoff >= delta:
                failure = CompositionError(
                    f"tight composition certifies nothing for {total} rounds at delta={delta:g}: the PLD's "
                    f"mass at infinite loss ({pld.inf_mass:.3g}) plus its FFT round-off allowance ({pld.roundoff:.3g}) "
                    f"reaches delta; use method='best' (or 'basic'/'advanced'), fewer rounds or a larger delta"
                )
                continue
            values.append(float(min(pld.epsilon(delta), cap)))
        if not values:
            raise failure
        return min(values)

    def _delta(self, event: E.Event, epsilon: float) -> float:
        rounds = self._rounds(event)
        if sum(rounds.values()) == 1 and self.step is None:  # one round: the pair itself, as get_epsilon
            (ev,) = rounds
            if isinstance(ev, E.SampledEvent):
                return _profile(ev, _TAIL).upper(epsilon)
            return release_divergence(ev.params, ev.n, ev.gamma, _TAIL).upper(epsilon)
        if sum(rounds.values()) > _MAX_PLD_ROUNDS:
            raise OutsideRegimeError(f"tight composition is limited to {_MAX_PLD_ROUNDS} rounds (PLD memory)")
        values = []
        for candidate in self._candidates(event):
            pld, cap = self._pld(candidate, 1e-15)
            values.append(0.0 if epsilon >= cap else pld.delta(epsilon))
        return min(values)


__all__ = ["PLDAccountant"]
