"""``shuffledp amplify``, ``compose`` and ``local-budget``: the amplification accounting at the command line.

``amplify`` prints every applicable bound (upper and lower) side by side; ``compose`` the
total epsilon of several rounds by each composition method; ``local-budget`` the largest
local epsilon whose shuffled guarantee meets a target.  A spinner on stderr shows what is
being computed when it takes over a second.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from functools import partial
from inspect import signature
from typing import Annotated, Any

import typer

from shuffledp.cli import _support as S
from shuffledp.cli._output import console, emit_result, number, status, table
from shuffledp.errors import PrivacyParameterError, ShuffleDPError, UnsupportedEventError
from shuffledp.params import BlanketDecomposition

__all__ = ["amplify_cmd", "app", "compose_cmd", "local_budget_cmd"]

#: Root-level commands (merged into the ``shuffledp`` app).
app = typer.Typer()

#: Options shared by several commands (each validated when parsed, under its own name).
Eps0Opt = Annotated[float, typer.Option("--eps0", parser=S.eps0_option(), help="Local epsilon of each report.")]
ReportsOpt = Annotated[
    int,
    typer.Option(
        "--n",
        parser=S.count_option("--n"),
        help="Number of shuffled reports (uncorrupted users), per round; 1e6 is accepted.",
    ),
]
DeltaOpt = Annotated[
    float,
    typer.Option(
        "--delta",
        parser=S.delta_option(),
        help="Target delta of the shuffled guarantee (with --rounds: the total over all rounds).",
    ),
]
RandomizerOpt = Annotated[
    str | None,
    typer.Option(
        "--randomizer",
        parser=S.choice_option("--randomizer", S.randomizer_names, "randomizer"),
        help="Use this randomizer's tighter parameters (default: any eps0-LDP randomizer). One of: {randomizers}.",
    ),
]
DimOpt = Annotated[
    int | None,
    typer.Option(
        "--dim",
        parser=S.count_option("--dim"),
        help="With --randomizer only: its size, default 2: {randomizer_sizes}.",
    ),
]
#: --dim when --randomizer is given without it.
DEFAULT_DIM = 2
OptionalReportsOpt = Annotated[
    int | None,
    typer.Option(
        "--n",
        parser=S.count_option("--n"),
        help="Number of shuffled reports (uncorrupted users), per round; 1e6 is accepted. With --population: "
        "optional, and if given it must equal --sample-size.",
    ),
]
PopulationOpt = Annotated[
    int | None,
    typer.Option(
        "--population",
        parser=S.count_option("--population"),
        help="Sample each round's users from this many (amplification by subsampling; needs --sample-size). "
        "Valid only if the server cannot tell who was sampled.",
    ),
]
SampleSizeOpt = Annotated[
    int | None,
    typer.Option(
        "--sample-size",
        parser=S.count_option("--sample-size"),
        help="With --population: users sampled per round (their reports are shuffled; the expected number for poisson).",
    ),
]
SamplingOpt = Annotated[
    str | None,
    typer.Option(
        "--sampling",
        parser=S.choice_option("--sampling", lambda: ["fixed-size", "poisson"], "sampling scheme"),
        help="With --population: fixed-size (substitution neighbours; default) or poisson (add/remove neighbours).",
    ),
]


def _sampling(
    n: int | None, population: int | None, sample_size: int | None, sampling: str | None
) -> tuple[int, dict | None]:
    """The reports per round and the sampling description (None without --population), checking the options together."""
    if population is None:
        if sample_size is not None or sampling is not None:
            raise PrivacyParameterError(
                "--sample-size and --sampling need --population (the users each round samples from)"
            )
        if n is None:
            raise PrivacyParameterError(
                "--n is required (reports shuffled per round), unless --population and --sample-size are given"
            )
        return n, None
    if sample_size is None:
        raise PrivacyParameterError(f"--population {population} needs --sample-size (users sampled per round)")
    if sample_size > population:
        raise PrivacyParameterError(f"--sample-size must be at most --population {population}, got {sample_size}")
    if n is not None and n != sample_size:
        raise PrivacyParameterError(
            f"--n must equal --sample-size {sample_size} (the sample's reports are shuffled), got {n}"
        )
    scheme = sampling or "fixed-size"
    relation = "substitution" if scheme == "fixed-size" else "add/remove"
    condition = (
        "the server must not learn who was sampled: the shuffler draws the sample, or every user sends a real or a "
        "dummy report each round"
    )
    if scheme == "poisson":
        condition = (
            "the server must not learn who was sampled: every user sends a report each round (unsampled users a dummy "
            "it cannot tell from a real one), so the number of reports does not depend on the sample"
        )
    return sample_size, {
        "population": population,
        "sample_size": sample_size,
        "scheme": scheme,
        "neighbours": relation,
        "rate": sample_size / population,
        "condition": condition,
    }


def _print_sampling(sample: dict | None) -> None:
    if sample is not None:
        console.print(
            f"sampling: {sample['scheme']}, {sample['sample_size']} of {sample['population']} users per round "
            f"(rate {sample['rate']:.6g}, {sample['neighbours']} neighbours)"
        )
        console.print(f"condition: {sample['condition']}")


def _dimension(randomizer: str | None, dim: int | None) -> int | None:
    """--dim as used: refused without --randomizer (the generic bound has no dimension) and with a
    randomizer that has no size (binary_rr: None), 2 by default with any other."""
    from shuffledp.randomizers.registry import size_argument

    if randomizer is None:
        if dim is not None:
            raise PrivacyParameterError(
                f"--dim applies only with --randomizer (the generic bound uses --eps0 alone), got --dim {dim} without it"
            )
        return None
    if size_argument(randomizer) is None:
        if dim is not None:
            raise PrivacyParameterError(
                f"--dim does not apply to --randomizer {randomizer} (it has no size); --dim is allowed with "
                f"--randomizer {', '.join(S.sized_randomizers())}; got --dim {dim}"
            )
        return None
    return DEFAULT_DIM if dim is None else dim


JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object (inputs and results) instead of a table.")]


def _randomizer(name: str, eps0: float, dim: int | None) -> Any:
    """The randomizer ``name`` at ``eps0`` (``dim`` None: one without a size); its errors name the
    options that built it."""
    from shuffledp.randomizers.registry import make_randomizer, size_argument

    try:
        return make_randomizer(name, eps0) if dim is None else make_randomizer(name, eps0, dim=dim)
    except ShuffleDPError as exc:
        # the size argument's range error, in the option's name: "--dim must be an integer in [2, inf); got 1 (...)"
        size, (head, must, tail) = size_argument(name), str(exc).partition(" must be ")
        if dim is not None and must and head.split(" (")[0] == size:
            what = head.replace(" (", ", the ").removesuffix(")")
            raise type(exc)(f"--dim{must}{tail} (with --randomizer {name}, --dim is its {what})") from None
        options = f"--randomizer {name}" if dim is None else f"--randomizer {name} --dim {dim}"
        raise type(exc)(f"{options}: {exc}") from None


def _local_parameters(eps0: float, randomizer: str | None, dim: int):
    """Parameters of ``randomizer`` at local epsilon ``eps0``: its own `BlanketDecomposition`
    (``amplification_parameters()``), or the generic eps0-LDP `VariationRatio` if None."""
    from shuffledp.params import VariationRatio

    if randomizer is None:
        return VariationRatio.from_ldp(eps0)
    return _randomizer(randomizer, eps0, dim).amplification_parameters()


def _timed_parameters(results: dict[str, dict[str, Any]], eps0: float, randomizer: str | None, dim: int | None):
    """`_local_parameters`, its build time recorded as ``results["seconds"]["parameters"]``: a randomizer's
    exact total variation can take longer than every bound (the per-method seconds exclude it)."""
    start = time.perf_counter()
    params = _local_parameters(eps0, randomizer, dim)
    results["seconds"]["parameters"] = time.perf_counter() - start
    return params


def _parameters_fields(params: Any) -> dict[str, Any]:
    """The parameters the bounds were priced with, as JSON fields: their kind and every field
    (eps0, beta, common_ratio of a `BlanketDecomposition`; p, beta, q0, q1 of the generic `VariationRatio`)."""
    return {"kind": type(params).__name__, **dataclasses.asdict(params)}


def _parameters_line(params: Any, randomizer: str | None, dim: int | None, seconds: float) -> str:
    """One line under the table: which parameters priced the bounds, and how long they took to build."""
    who = "generic eps0-LDP" if randomizer is None else randomizer + ("" if dim is None else f" --dim {dim}")
    fields = ", ".join(f"{k}={number(v)}" for k, v in dataclasses.asdict(params).items())
    return f"parameters ({who}): {type(params).__name__}({fields}), built in {number(seconds, 3)} s"


#: What priced a bound that takes a randomizer's own `BlanketDecomposition` (the "parameters" column).
_DECOMPOSITION_SOURCE = {
    "variation-ratio": "three-class decomposition (own beta, common ratio)",
    "variation-ratio-closed-form": "generic eps0-LDP (the closed form reads (p, beta, q))",
}


def _bound_source(method: Any, randomizer: str | None, params: Any) -> str:
    """Which parameters price ``method``: generic eps0, or what of the randomizer's own parameters it uses."""
    if method.generic_only or randomizer is None:
        return "generic"
    if isinstance(params, BlanketDecomposition):
        if method.kind == "lower":
            return f"{randomizer}: none offered for a randomizer's own parameters"
        return f"{randomizer}: " + _DECOMPOSITION_SOURCE.get(method.name, "its own parameters")
    return randomizer


def _unsupported_is_none(compute: Callable[[], float]) -> float | None:
    """The bound, or None where none is offered (a lower bound for a randomizer's own parameters):
    null in --json, which means "does not apply" (cli/_output.py), unlike "inf"."""
    try:
        return compute()
    except UnsupportedEventError:
        return None


def _timed(
    results: dict[str, dict[str, float | None]], kind: str, name: str, compute: Callable[[], float | None]
) -> float | None:
    start = time.perf_counter()
    value = compute()
    results[kind][name] = value
    results["seconds"][name] = time.perf_counter() - start
    return value


@app.command("amplify", cls=S.OneLineCommand)
def amplify_cmd(
    eps0: Eps0Opt,
    n: ReportsOpt,
    delta: DeltaOpt,
    randomizer: RandomizerOpt = None,
    dim: DimOpt = None,
    method: Annotated[
        str,
        typer.Option(
            "--method",
            parser=S.choice_option("--method", lambda: ["all", *S.bound_methods()], "bound method"),
            help="One bound method, or every one. One of: {bound_methods}.",
        ),
    ] = "all",
    as_json: JsonOpt = False,
) -> None:
    """Every applicable amplification bound (upper and lower), side by side, with its compute time.

    Generic-only bounds use eps0 alone (valid for any eps0-LDP randomizer); with --randomizer
    the others use the randomizer's own parameters (the "parameters" column says how: the
    three-class decomposition with its own beta and common ratio for variation-ratio); no lower
    bound is offered for them (null in --json).  The parameters are printed under the table
    ("parameters" in --json).  Seconds are per bound; building the parameters (a randomizer's
    exact total variation) is timed on its own ("parameters" in --json's "seconds").  A spinner
    on stderr (terminals only) shows what is being computed when it takes over a second.
    """
    from shuffledp.accounting.bounds import available_methods, shuffle_epsilon, shuffle_epsilon_lower

    dim = _dimension(randomizer, dim)
    methods = available_methods()
    if method != "all":
        methods = {method: methods[method]}
    results: dict[str, dict[str, float]] = {"upper": {}, "lower": {}, "seconds": {}}
    rows = []
    with status("computing bounds") as spinner:
        spinner.update(f"computing the parameters of {randomizer or 'generic eps0-LDP'}")
        params = _timed_parameters(results, eps0, randomizer, dim)
        for i, (name, m) in enumerate(methods.items(), start=1):
            spinner.update(f"computing {name} ({i}/{len(methods)}), n={n}")
            kwargs = {"eps0": eps0} if m.generic_only else {"params": params}
            compute = partial(
                shuffle_epsilon if m.kind == "upper" else shuffle_epsilon_lower, n, delta, method=name, **kwargs
            )
            value = _timed(
                results, m.kind, name, compute if m.kind == "upper" else partial(_unsupported_is_none, compute)
            )
            rows.append((name, m.kind, _bound_source(m, randomizer, params), value, results["seconds"][name]))
    if as_json:
        inputs = {"eps0": eps0, "n": n, "delta": delta, "randomizer": randomizer, "dim": dim, "method": method}
        emit_result(inputs, {"parameters": _parameters_fields(params), **results})
        return
    rows = [
        (name, kind, source, value, number(seconds, 3))
        for name, kind, source, value, seconds in sorted(
            rows, key=lambda r: (r[1] != "upper", math.inf if r[3] is None else r[3])
        )
    ]
    table(
        ("method", "kind", "parameters", "epsilon", "seconds"),
        rows,
        title=f"eps0={eps0:g}, n={n}, delta={delta:g}",
        whole=("method", "kind", "epsilon", "seconds"),  # the "parameters" text wraps at 80 columns
        edge=False,
    )
    values = [row[3] for row in rows]
    if any(v is not None and math.isinf(v) for v in values):
        console.print("inf: the bound certifies nothing here (outside its regime)")
    if None in values:
        console.print("-: no lower bound is offered for a randomizer's own parameters")
    console.print(_parameters_line(params, randomizer, dim, results["seconds"]["parameters"]))


def _limit(value: float, achieved: float, target: float, cap: float, amplified: Callable[[float], float]) -> str:
    """What stopped the search: the target itself, the search cap, or a bound that jumps past the target."""
    if value >= cap:
        return "search-cap"
    if achieved >= target * (1.0 - 1e-3):
        return "target"
    return "regime-edge" if math.isinf(amplified(value * (1.0 + 1e-6))) else "discontinuity"


_LIMIT_NOTES = {
    "search-cap": "the answer is the search cap (--max-epsilon {cap:g}): the target is met even there; raise --max-epsilon for more",
    "regime-edge": "the answer is the edge of {method}'s regime: its bound is infinite just above it; another --method may allow more",
    "discontinuity": "the bound of {method} jumps above the target just past the answer",
}


def _delta_share_reason(method: str, delta: float, rounds: int) -> str:
    """Why a composition certifies nothing: its per-round share of --delta is below the smallest delta priced."""
    return (
        f"{method} composition divides --delta {S.typed('--delta', delta)} among the {rounds} rounds, and a share falls below "
        f"{S.DELTA_RANGE.low:g}, the smallest delta priced; use a larger --delta or fewer --rounds"
    )


@app.command("local-budget", cls=S.OneLineCommand)
def local_budget_cmd(
    ctx: typer.Context,
    target: Annotated[
        float,
        typer.Option("--target", parser=S.epsilon_option("--target"), help="Target central epsilon after shuffling."),
    ],
    delta: DeltaOpt,
    n: OptionalReportsOpt = None,
    randomizer: RandomizerOpt = None,
    dim: DimOpt = None,
    method: Annotated[
        str,
        typer.Option(
            "--method",
            parser=S.choice_option("--method", partial(S.bound_methods, "upper"), "upper-bound method"),
            help="Upper-bound method of one round. One of: {upper_methods}.",
        ),
    ] = "variation-ratio",
    rounds: Annotated[
        int,
        typer.Option(
            "--rounds",
            parser=S.count_option("--rounds"),
            help="Rounds sharing the target (fresh keys each round, PIC §8).",
        ),
    ] = 1,
    composition: Annotated[
        str,
        typer.Option(
            "--composition",
            parser=S.choice_option("--composition", S.composition_methods, "composition method"),
            help="With --rounds > 1, how rounds compose. One of: {composition_methods}.",
        ),
    ] = "tight",
    max_epsilon: Annotated[
        float | None,
        typer.Option(
            "--max-epsilon",
            parser=S.interval_option("--max-epsilon", S.SEARCH_CAP_RANGE),
            help=f"Largest local epsilon searched (default {S.SEARCH_MAX_EPSILON:g} for one round, "
            f"{S.COMPOSED_SEARCH_MAX_EPSILON:g} over rounds; above the search's low end).",
        ),
    ] = None,
    population: PopulationOpt = None,
    sample_size: SampleSizeOpt = None,
    sampling: SamplingOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The largest local epsilon whose amplified guarantee (over --rounds rounds) is within the target.

    Prints the budget, the shuffled epsilon it achieves, and whether the search stopped at
    the target, at the search cap or at the edge of the method's regime.
    """
    from shuffledp.accounting.bounds import shuffle_epsilon
    from shuffledp.accounting.composition import composed_local_epsilon, composed_shuffle_epsilon
    from shuffledp.accounting.inverse import local_epsilon, parameters_of

    if rounds == 1 and S.given(ctx, "composition"):
        raise PrivacyParameterError(
            f"--composition must come with --rounds 2 or more (one round is priced by --method), got --composition "
            f"{composition} with --rounds {S.typed('--rounds', rounds)}"
        )
    dim = _dimension(randomizer, dim)
    family: Any = "generic"
    if randomizer is not None:
        _randomizer(randomizer, 1.0, dim)  # a bad --dim fails here, naming the options
        family = partial(_randomizer, randomizer, dim=dim)
    params_of = parameters_of(family)
    n, sample = _sampling(n, population, sample_size, sampling)
    if sample is not None:
        if method != "variation-ratio":
            raise PrivacyParameterError(
                f"a sampled round is priced by the variation-ratio profile transform: --method must be variation-ratio, got {method}"
            )
        over = {"population": population, "sampling": sample["scheme"]}
        solver = partial(
            composed_local_epsilon,
            target,
            n,
            delta,
            rounds,
            family=family,
            method="basic" if rounds == 1 else composition,
            **over,
        )
        amplified = lambda eps0: composed_shuffle_epsilon(  # noqa: E731
            n, delta, rounds, params=params_of(eps0), method="basic" if rounds == 1 else composition, **over
        )
        label = f"{sample['scheme']}-sampled " + (
            "round" if rounds == 1 else f"{composition} composition of {rounds} rounds"
        )
    elif rounds == 1:
        solver: Callable[..., float] = partial(local_epsilon, target, n, delta, family=family, method=method)
        amplified = lambda eps0: shuffle_epsilon(n, delta, params=params_of(eps0), method=method)  # noqa: E731
        label = method
    else:
        solver = partial(composed_local_epsilon, target, n, delta, rounds, family=family, method=composition)
        amplified = lambda eps0: composed_shuffle_epsilon(n, delta, rounds, params=params_of(eps0), method=composition)  # noqa: E731
        label = f"{composition} composition of {rounds} rounds"
    cap = signature(solver.func).parameters["max_epsilon"].default if max_epsilon is None else max_epsilon
    with status(f"searching the local epsilon ({label})"):
        try:
            value = solver(max_epsilon=cap)
        except PrivacyParameterError as exc:  # every option was checked when parsed: a round's share of --delta
            below = tuple(f"{name} must be {S.DELTA_RANGE.allowed}" for name in ("delta", "delta / rounds"))
            if rounds > 1 and str(exc).startswith(below):
                raise PrivacyParameterError(_delta_share_reason(composition, delta, rounds)) from None
            raise
        achieved = amplified(value)
        limited_by = _limit(value, achieved, target, cap, amplified)
    who = randomizer or "generic"
    if as_json:
        inputs = {
            "target": target,
            "n": n,
            "delta": delta,
            "randomizer": randomizer,
            "dim": dim,
            "method": method,
            "rounds": rounds,
            "composition": composition,
            "max_epsilon": cap,
        }
        results = {
            "local_epsilon": value,
            "achieved_epsilon": achieved,
            "method": label,
            "randomizer": who,
            "limited_by": limited_by,
        }
        if sample is not None:  # only with --population: the output without it is unchanged
            inputs.update(population=population, sample_size=sample_size, sampling=sample["scheme"])
            results["sampling"] = sample
        emit_result(inputs, results)
        return
    source = "any eps0-LDP randomizer" if randomizer is None else randomizer
    if dim is not None:
        source += f" (--dim {dim})"
    rows = [
        ("local epsilon", value),
        ("randomizer", source),
        ("method", label),
        ("shuffled epsilon at this budget", achieved),
        ("target", S.typed("--target", target)),
        ("n", n),
        ("delta", S.typed("--delta", delta)),
    ]
    table(("quantity", "value"), rows)
    _print_sampling(sample)
    if limited_by != "target":
        console.print("note: " + _LIMIT_NOTES[limited_by].format(cap=cap, method=label))


@app.command("compose", cls=S.OneLineCommand)
def compose_cmd(
    eps0: Eps0Opt,
    delta: DeltaOpt,
    rounds: Annotated[
        int,
        typer.Option(
            "--rounds", parser=S.count_option("--rounds"), help="Number of rounds (fresh keys each round, PIC §8)."
        ),
    ],
    randomizer: RandomizerOpt = None,
    dim: DimOpt = None,
    method: Annotated[
        str,
        typer.Option(
            "--method",
            parser=S.choice_option("--method", lambda: ["all", *S.composition_methods()], "composition method"),
            help="Composition method, or every one. One of: {composition_methods_or_all}.",
        ),
    ] = "all",
    n: OptionalReportsOpt = None,
    population: PopulationOpt = None,
    sample_size: SampleSizeOpt = None,
    sampling: SamplingOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Total epsilon of --rounds shuffled rounds: tight (PLD), advanced and basic composition side by side.

    Seconds are per method; building the randomizer's parameters is timed on its own ("parameters"
    in --json's "seconds").
    """
    from shuffledp.accounting.composition import COMPOSITION_METHODS, CompositionError, composed_shuffle_epsilon

    dim = _dimension(randomizer, dim)
    n, sample = _sampling(n, population, sample_size, sampling)
    over = {} if sample is None else {"population": population, "sampling": sample["scheme"]}
    results: dict[str, dict[str, float]] = {"epsilon": {}, "seconds": {}}
    params = _timed_parameters(results, eps0, randomizer, dim)
    reasons: dict[str, str] = {}

    def composed(name: str) -> float:
        """One method's total; a method that certifies nothing here says why and leaves the others standing."""
        try:
            return composed_shuffle_epsilon(n, delta, rounds, params=params, method=name, **over)
        except PrivacyParameterError as exc:
            if "delta" not in str(exc) or isinstance(exc, CompositionError):
                reasons[name] = S.cli_advice(str(exc), "--method")
            else:  # every option was checked when parsed: the method's share of --delta is out of range
                reasons[name] = _delta_share_reason(name, delta, rounds)
        except ShuffleDPError as exc:
            reasons[name] = S.cli_advice(str(exc), "--method")
        return math.inf

    with status("composing") as spinner:
        for name in COMPOSITION_METHODS if method == "all" else (method,):
            spinner.update(f"composing {rounds} rounds: {name}")
            _timed(results, "epsilon", name, partial(composed, name))
    finite = {k: v for k, v in results["epsilon"].items() if math.isfinite(v)}
    if not finite:
        raise CompositionError(
            f"no composition method certifies a finite epsilon at --delta {S.typed('--delta', delta)} over --rounds {rounds}: "
            + "; ".join(f"{name}: {reason}" for name, reason in reasons.items())
        )
    best = min(finite, key=finite.__getitem__)
    if as_json:
        inputs = {
            "eps0": eps0,
            "n": n,
            "delta": delta,
            "rounds": rounds,
            "randomizer": randomizer,
            "dim": dim,
            "method": method,
        }
        extra = {}
        if sample is not None:  # only with --population: the output without it is unchanged
            inputs.update(population=population, sample_size=sample_size, sampling=sample["scheme"])
            extra["sampling"] = sample
        emit_result(inputs, {**results, "best": best, "reasons": reasons, **extra})
        return
    rows = [
        (
            name,
            number(value) + (" (best)" if name == best else ""),
            number(results["seconds"][name], 3),
        )
        for name, value in results["epsilon"].items()
    ]
    table(
        ("composition", "total epsilon", "seconds"),
        rows,
        title=f"eps0={eps0:g}, n={n}, rounds={rounds}, delta={delta:g}",
    )
    for name, reason in reasons.items():
        console.print(f"{name}: {reason}")
    _print_sampling(sample)
