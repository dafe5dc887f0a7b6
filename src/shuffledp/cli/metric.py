"""``shuffledp metric``: the guarantees of RR-, Geo- and SGDL-Shuffle (metric paper, Theorems 3.1, 4.1, 5.1, §7).

``shuffledp metric epsilon --mechanism geo-shuffle --n 300 --delta 1e-4 --eps-geo 0.5 --k 1000 --json`` prints the
shuffle-model epsilon, the padding c and the local-model epsilon if the shuffler is compromised;
``shuffledp metric local-epsilon --target 0.1 --n 300 --delta 1e-4 --k 1000`` the largest eps_geo reaching a target
(``--mechanism rr-shuffle``: the smallest RR probability p reaching it; ``sgdl-shuffle``: the largest certified noise
epsilon). Printed parameters are rounded toward privacy, so that typed back in they keep the target.
Every mechanism's epsilon is the certified one by default (valid for every pair of datasets with values in
{0..k}; without --k the values are unbounded: eps_geo for Geo-Shuffle, the per-report epsilon for SGDL-Shuffle);
the paper's theorem is reported beside it (``epsilon_theorem_4_1``, ``epsilon_theorem_3_1``,
``epsilon_theorem_5_1``: not valid bounds in general), or used with ``--method theorem-4.1|theorem-3.1|theorem-5.1``.
RR-Shuffle's ``local_epsilon`` (compromised shuffler) follows the method too: certified, with Theorem 7.1 beside it
as ``local_epsilon_theorem_7_1`` (not a valid bound).
Errors (a missing or foreign option, a theorem's validity condition) are one line naming the option, status 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from shuffledp.cli import _support as S
from shuffledp.cli._output import console, emit_result, number, status, table
from shuffledp.errors import DomainError, PrivacyParameterError, ValidityConditionError

__all__ = ["app", "epsilon_cmd", "local_epsilon_cmd", "profile_cmd"]

app = typer.Typer(
    help="Metric privacy with a shuffler: RR-, Geo-, SGDL-Shuffle.", no_args_is_help=True, cls=S.OneLineGroup
)

MECHANISMS = ("geo-shuffle", "rr-shuffle", "sgdl-shuffle")
#: The options each mechanism takes (beyond --n and --delta).
_OPTIONS = {"geo-shuffle": ("--eps-geo",), "rr-shuffle": ("--p", "--k"), "sgdl-shuffle": ("--eps",)}
#: Options a mechanism accepts without needing them.
_OPTIONAL = {
    "geo-shuffle": ("--k", "--method", "--max-distance"),
    "rr-shuffle": ("--method",),
    "sgdl-shuffle": ("--k", "--method", "--max-distance"),
}
#: The --method values each mechanism takes (the first is the default).
_METHODS = {
    "geo-shuffle": ("certified", "theorem-4.1"),
    "rr-shuffle": ("certified", "theorem-3.1"),
    "sgdl-shuffle": ("certified", "theorem-5.1"),
}

UsersOpt = Annotated[int, typer.Option("--n", parser=S.count_option("--n"), help="Number of users; 1e4 is accepted.")]
DeltaOpt = Annotated[float, typer.Option("--delta", parser=S.delta_option(), help="delta of the guarantee.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object (inputs and results) instead of text.")]
EpsGeoOpt = Annotated[
    float | None,
    typer.Option(
        "--eps-geo",
        parser=S.interval_option("--eps-geo", S.NOISE_EPSILON_RANGE),
        help="Geo-Shuffle: the users' eps_geo.",
    ),
]
RrPOpt = Annotated[
    float | None,
    typer.Option("--p", parser=S.interval_option("--p", S.RR_P_RANGE), help="RR-Shuffle: probability of a random bit."),
]
SgdlEpsOpt = Annotated[
    float | None,
    typer.Option(
        "--eps",
        parser=S.interval_option("--eps", S.SGDL_EPSILON_RANGE),
        help="SGDL-Shuffle: its noise epsilon (of the users' discrete Laplace noise; Theorem 5.1 claims it as the "
        "guarantee).",
    ),
]


def _method_option(methods: list[str], help_text: str) -> Any:
    """The --method option of both commands (one parser: unknown values name the option and point to --help)."""
    return typer.Option("--method", parser=S.choice_option("--method", lambda: methods, "method"), help=help_text)


MethodOpt = Annotated[
    str | None,
    _method_option(
        ["certified", "theorem-4.1", "theorem-3.1", "theorem-5.1"],
        "The guarantee (default: certified, valid for every pair of datasets) or the paper's theorem-4.1 (Geo-Shuffle), "
        "theorem-3.1 (RR-Shuffle), theorem-5.1 (SGDL-Shuffle), not valid in general.",
    ),
]
LocalMethodOpt = Annotated[
    str | None,
    _method_option(
        ["certified", "theorem-4.1", "theorem-3.1"],
        "The guarantee to invert (default: certified, valid for every pair of datasets) or the paper's theorem-4.1 "
        "(Geo-Shuffle), theorem-3.1 (RR-Shuffle), not valid in general.",
    ),
]
#: The --method values ``metric local-epsilon`` inverts for each mechanism (SGDL-Shuffle: its certified inverse only).
_LOCAL_METHODS = {**_METHODS, "sgdl-shuffle": ("certified",)}
#: The mechanisms ``metric local-epsilon`` inverts (the first is the default).
LOCAL_MECHANISMS = ("geo-shuffle", "rr-shuffle", "sgdl-shuffle")
MaxDistanceOpt = Annotated[
    int | None,
    typer.Option(
        "--max-distance",
        parser=S.count_option("--max-distance", maximum=S.MAX_DISTANCE),
        help="Largest distance d of Theorem 4.1's (Geo-Shuffle) and Theorem 7.2's (SGDL-Shuffle) maxima over d = 1..this "
        "(default 50).",
    ),
]


#: Results printed as text lines under the table (sentences, not numbers).
_TEXT_RESULTS = ("source", "reason", "note")
#: How a printed parameter is rounded so that, typed back in, it keeps the guarantee: RR's p up (more random bits),
#: a noise epsilon down (more noise); every result whose name holds "epsilon" is a guarantee and goes up.
_PARAMETER_ROUNDING = {"p": "up", "eps_geo": "down", "eps": "down"}


def _cell(key: str, value: Any) -> str:
    """The table text of result ``key``: 6 significant digits rounded toward privacy (`_PARAMETER_ROUNDING`)."""
    toward = _PARAMETER_ROUNDING.get(key, "up" if "epsilon" in key else None)
    text = number(value, toward=toward)
    if key == "p" and isinstance(value, float) and float(text) not in S.RR_P_RANGE:  # rounded up to 1: all digits
        text = number(value, None)
    return text


def _emit(as_json: bool, inputs: dict[str, Any], results: dict[str, Any]) -> None:
    """``--json``: one strict object; otherwise a table of the numbers ("-": does not apply, rounded toward
    privacy: `_cell`), then the sentences."""
    if as_json:
        emit_result(inputs, results)
        return
    numbers = [
        (key, _cell(key, value))
        for key, value in results.items()
        if key not in _TEXT_RESULTS and not key.endswith("_reason")
    ]
    table(("quantity", "value"), numbers)
    for key, value in results.items():
        if value is not None and (key in _TEXT_RESULTS or key.endswith("_reason")):  # a null reason: nothing fell back
            console.print(f"{key}: {value}", soft_wrap=True, highlight=False)


def _check_options(mechanism: str, given: dict[str, Any]) -> None:
    """Every option the mechanism needs is given, and no other mechanism's option."""
    for option in _OPTIONS[mechanism]:
        if given[option] is None:
            raise PrivacyParameterError(f"{option} is required with --mechanism {mechanism}")
    for option, value in given.items():
        if value is not None and option not in _OPTIONS[mechanism] + _OPTIONAL[mechanism]:
            raise PrivacyParameterError(
                f"{option} does not apply to --mechanism {mechanism} (it takes {', '.join(_OPTIONS[mechanism])})"
            )


def _checked_method(mechanism: str, method: str | None, methods: dict[str, tuple[str, ...]] = _METHODS) -> str:
    """The --method of ``mechanism`` (default certified): one that applies to it, else a one-line error."""
    method = method or "certified"
    if method not in methods[mechanism]:
        raise PrivacyParameterError(
            f"--method {method} does not apply to --mechanism {mechanism} (use {' or '.join(methods[mechanism])})"
        )
    return method


def _search_limit_note(parameter: str, limit: float, largest: bool, target: float) -> str:
    """Why an inverse's answer is the end of its search (``largest``: the top end), quoting --target as typed."""
    end, extreme, size = ("cap", "largest", "large") if largest else ("floor", "smallest", "small")
    return (
        f"{parameter} is the search's {end} of {limit:g} (the {extreme} {parameter} accepted): "
        f"--target {S.typed('--target', target)} allows one at least that {size}"
    )


def _certificate(cert: Any) -> tuple[float, str, str]:
    """(epsilon, source, reason) of a `shuffledp.accounting.metric.CertifiedEpsilon`: the source says whether the
    shuffle analysis certified the value or the fallback bound was reported, the reason says why."""
    source = (
        "certified (every pair of datasets)"
        if cert.certified
        else "fallback bound (valid for every pair; no shuffle gain certified)"
    )
    return cert.epsilon, source, cert.reason


def _named(option: str, error: ValidityConditionError) -> ValidityConditionError:
    return ValidityConditionError(
        f"{option}: {error}",
        minimum_n=error.minimum_n,
        maximum_epsilon=error.maximum_epsilon,
        minimum_p=error.minimum_p,
    )


@app.command("epsilon", cls=S.OneLineCommand)
def epsilon_cmd(
    mechanism: Annotated[
        str,
        typer.Option(
            "--mechanism",
            parser=S.choice_option("--mechanism", lambda: list(MECHANISMS), "mechanism"),
            help="geo-shuffle (--eps-geo), rr-shuffle (--p, --k) or sgdl-shuffle (--eps).",
        ),
    ],
    n: UsersOpt,
    delta: DeltaOpt,
    eps_geo: EpsGeoOpt = None,
    p: RrPOpt = None,
    k: Annotated[
        int | None,
        typer.Option(
            "--k",
            parser=S.count_option("--k"),
            help="Largest value: RR-Shuffle needs it; Geo- and SGDL-Shuffle's certified epsilons use it. Geo-Shuffle "
            "also reports variation_ratio_epsilon: the epsilon when one user's value moves by 1 (the variation-ratio "
            "analysis, segmented paper Theorem 1), a bound for such pairs only, not for datasets farther apart; 0 "
            "when the two shuffled outputs are already within delta in total variation.",
        ),
    ] = None,
    eps: SgdlEpsOpt = None,
    max_distance: MaxDistanceOpt = None,
    method: MethodOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Shuffle-model epsilon (and local-model epsilon if the shuffler is compromised) of one mechanism."""
    from shuffledp.accounting import metric as M

    given = {"--eps-geo": eps_geo, "--p": p, "--k": k, "--eps": eps, "--method": method, "--max-distance": max_distance}
    _check_options(mechanism, given)
    method = _checked_method(mechanism, method)
    max_distance = M.DEFAULT_MAX_DISTANCE if max_distance is None else max_distance
    inputs = {"mechanism": mechanism, "n": n, "delta": delta, "eps_geo": eps_geo, "p": p, "k": k, "eps": eps}
    with status(f"metric epsilon: {mechanism} (certifying over every pair of datasets)"):
        results = _epsilon_results(M, mechanism, n, delta, eps_geo, p, k, eps, max_distance, method, inputs)
    _emit(as_json, inputs, results)


def _epsilon_results(
    M: Any,
    mechanism: str,
    n: int,
    delta: float,
    eps_geo: Any,
    p: Any,
    k: Any,
    eps: Any,
    max_distance: int,
    method: str,
    inputs: dict[str, Any],
) -> dict[str, Any]:
    """The results of ``metric epsilon`` (``inputs`` gains the options used)."""
    if mechanism == "geo-shuffle":
        inputs.update(max_distance=max_distance, method=method)
        paper = M.geo_shuffle_epsilon(eps_geo, delta, n, method="theorem-4.1", max_distance=max_distance)
        if method == "certified":
            value, source, reason = _certificate(M.geo_shuffle_certificate(eps_geo, delta, n, k))
        elif n >= 5:
            value, source, reason = paper, "Theorem 4.1 (not valid for datasets far apart)", None
        else:
            value, source, reason = paper, "eps_geo (Theorem 4.1 needs n >= 5)", "Theorem 4.1 is undefined below n = 5"
        results = {
            "epsilon": value,
            "epsilon_theorem_4_1": paper,
            "c": M.geo_shuffle_c(eps_geo, delta, n),
            "alpha": M.geo_shuffle_alpha(eps_geo, delta, n) if n >= 5 else None,
            "local_epsilon": M.geo_shuffle_compromised_epsilon(eps_geo),
            "source": source,
            "reason": reason,
        }
        if k is not None:
            results["variation_ratio_epsilon"] = M.geo_shuffle_variation_ratio_epsilon(eps_geo, delta, n, k)
            if results["variation_ratio_epsilon"] == 0.0:
                results["variation_ratio_epsilon_reason"] = (
                    "0 is exact, not an underflow: when one user's value moves by 1 the shuffled outputs are within "
                    "delta in total variation, so (0, delta) holds for those pairs (not for datasets farther apart)"
                )
    elif mechanism == "rr-shuffle":
        inputs.update(method=method)
        try:
            paper: float | None = M.rr_shuffle_epsilon(delta, p, k, n, method="theorem-3.1")
            paper_reason = None
        except ValidityConditionError as exc:
            if method == "theorem-3.1":
                raise _named("--p" if exc.minimum_n is None and exc.minimum_p is not None else "--n", exc) from None
            paper, paper_reason = None, str(exc)
        try:
            local_paper: float | None = M.rr_shuffle_local_epsilon(delta, p, k, method="theorem-7.1")
            reason = None
        except ValidityConditionError as exc:
            local_paper, reason = None, str(exc)
        local = M.rr_shuffle_local_epsilon(delta, p, k) if method == "certified" else local_paper
        if method == "certified":
            value, source, cert_reason = _certificate(M.rr_shuffle_certificate(delta, p, k, n))
        else:
            value, source, cert_reason = paper, "Theorem 3.1 (not valid for datasets far apart)", None
        results = {
            "epsilon": value,
            "epsilon_theorem_3_1": paper,
            "lambda": p * n * k,
            "local_epsilon": local,
            "local_epsilon_theorem_7_1": local_paper,
            "source": source,
            "reason": cert_reason,
        }
        if paper_reason is not None:
            results["epsilon_theorem_3_1_reason"] = paper_reason
        if reason is not None:
            results["local_epsilon_theorem_7_1_reason"] = reason
    else:
        inputs.update(method=method, max_distance=max_distance)
        if method == "certified":
            value, source, reason = _certificate(M.sgdl_shuffle_certificate(eps, delta, n, k))
        else:
            value, source, reason = eps, "Theorem 5.1 (not valid in general)", None
        results = {
            "epsilon": value,
            "epsilon_theorem_5_1": M.sgdl_shuffle_epsilon(eps, delta, n, method="theorem-5.1"),
            "report_epsilon": M.sgdl_shuffle_report_epsilon(eps, n),
            "c": M.sgdl_shuffle_c(eps, delta, n),
            "c_paper": M.sgdl_shuffle_c_paper(eps, delta, n),
            "local_epsilon": M.sgdl_shuffle_local_epsilon(eps, n, max_distance=max_distance),
            "source": source,
            "reason": reason,
        }
    return results


@app.command("local-epsilon", cls=S.OneLineCommand)
def local_epsilon_cmd(
    target: Annotated[
        float,
        typer.Option(
            "--target", parser=S.epsilon_option("--target"), help="Target shuffle-model epsilon of --mechanism."
        ),
    ],
    n: UsersOpt,
    delta: DeltaOpt,
    mechanism: Annotated[
        str,
        typer.Option(
            "--mechanism",
            parser=S.choice_option("--mechanism", lambda: list(LOCAL_MECHANISMS), "mechanism"),
            help="geo-shuffle (the largest eps_geo; the default), rr-shuffle (the smallest p, needs --k) or "
            "sgdl-shuffle (the largest noise epsilon, certified, needs --k).",
        ),
    ] = LOCAL_MECHANISMS[0],
    k: Annotated[
        int | None,
        typer.Option(
            "--k",
            parser=S.count_option("--k"),
            help="Largest value (Geo-Shuffle's certified method, RR- and SGDL-Shuffle need it).",
        ),
    ] = None,
    max_distance: MaxDistanceOpt = None,
    method: LocalMethodOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The largest eps_geo whose Geo-Shuffle guarantee is within --target (never above it); with --mechanism
    rr-shuffle the smallest RR probability p whose RR-Shuffle guarantee is within it, with sgdl-shuffle the largest
    noise epsilon whose certified SGDL-Shuffle guarantee is."""
    from shuffledp.accounting import metric as M

    method = _checked_method(mechanism, method, _LOCAL_METHODS)
    if mechanism != "geo-shuffle" and k is None:
        raise PrivacyParameterError(f"--k is required with --mechanism {mechanism}")
    if mechanism == "sgdl-shuffle":
        max_distance = M.DEFAULT_MAX_DISTANCE if max_distance is None else max_distance
        results = _sgdl_inverse_results(M, target, delta, k, n, max_distance)
        inputs = {"mechanism": mechanism, "target": target, "n": n, "delta": delta, "k": k, "method": method}
        _emit(as_json, inputs | {"max_distance": max_distance}, results)
        return
    if mechanism == "rr-shuffle":
        if max_distance is not None:
            raise PrivacyParameterError("--max-distance does not apply to --mechanism rr-shuffle (it takes --k)")
        with status(f"metric local-epsilon: searching p ({method}; each step certifies every pair of datasets)"):
            results = _rr_inverse_results(M, target, delta, k, n, method)
        inputs = {"mechanism": mechanism, "target": target, "n": n, "delta": delta, "k": k, "method": method}
        _emit(as_json, inputs, results)
        return
    max_distance = M.DEFAULT_MAX_DISTANCE if max_distance is None else max_distance
    title = f"metric local-epsilon: searching eps_geo ({method}; each step certifies every pair of datasets)"
    with status(title) as spinner:
        eps_geo = M.geo_shuffle_local_epsilon(
            target,
            delta,
            n,
            k,
            method=method,
            max_distance=max_distance,
            progress=lambda done, most: spinner.update(f"{title}: certificate {done} (at most {most})"),
        )
        if method == "certified":
            achieved, source, reason = _certificate(M.geo_shuffle_certificate(eps_geo, delta, n, k))
        else:
            achieved = M.geo_shuffle_epsilon(eps_geo, delta, n, k, method=method, max_distance=max_distance)
            source, reason = "Theorem 4.1 (not valid for datasets far apart)", None
    results = {
        "eps_geo": eps_geo,
        "achieved_epsilon": achieved,
        "c": M.geo_shuffle_c(eps_geo, delta, n),
        "capped": eps_geo >= M.MAX_EPSILON,
        "source": source,
        "reason": reason,
    }
    if results["capped"]:
        results["note"] = _search_limit_note("eps_geo", M.MAX_EPSILON, True, target)
    inputs = {
        "mechanism": mechanism,
        "target": target,
        "n": n,
        "delta": delta,
        "k": k,
        "method": method,
        "max_distance": max_distance,
    }
    _emit(as_json, inputs, results)


def _rr_inverse_results(M: Any, target: float, delta: float, k: int, n: int, method: str) -> dict[str, Any]:
    """The results of ``metric local-epsilon --mechanism rr-shuffle``: p, the epsilon it achieves and why."""
    try:
        p = M.rr_shuffle_probability(target, delta, k, n, method=method)
    except ValidityConditionError as exc:  # Theorem 3.1 needs more random bits than n k
        raise _named("--n", exc) from None
    if method == "certified":
        achieved, source, reason = _certificate(M.rr_shuffle_certificate(delta, p, k, n))
    else:
        achieved = M.rr_shuffle_epsilon(delta, p, k, n, method=method)
        source, reason = "Theorem 3.1 (not valid for datasets far apart)", None
    results = {
        "p": p,
        "achieved_epsilon": achieved,
        "lambda": p * n * k,
        "local_epsilon": M.rr_shuffle_local_epsilon(delta, p, k),  # compromised shuffler, certified
        "capped": p <= M.RR_MIN_P,
        "source": source,
        "reason": reason,
    }
    if results["capped"]:
        results["note"] = _search_limit_note("p", M.RR_MIN_P, False, target)
    return results


def _sgdl_inverse_results(M: Any, target: float, delta: float, k: int, n: int, max_distance: int) -> dict[str, Any]:
    """The results of ``metric local-epsilon --mechanism sgdl-shuffle``: the noise epsilon of the certified inverse,
    the epsilon it achieves and why."""
    if target not in S.NOISE_EPSILON_RANGE:  # the inverse searches noise epsilons, so its target lies in their range
        raise S.NOISE_EPSILON_RANGE.error(
            "--target", S.typed("--target", target), "with --mechanism sgdl-shuffle, whose noise epsilon stops there"
        )
    title = "metric local-epsilon: searching SGDL-Shuffle's noise epsilon (each step certifies every pair of datasets)"
    with status(title) as spinner:
        eps = M.sgdl_shuffle_noise_epsilon(
            target,
            delta,
            n,
            k,
            progress=lambda done, most: spinner.update(f"{title}: certificate {done} (at most {most})"),
        )
        achieved, source, reason = _certificate(M.sgdl_shuffle_certificate(eps, delta, n, k))
    results = {
        "eps": eps,
        "achieved_epsilon": achieved,
        "c": M.sgdl_shuffle_c(eps, delta, n),
        "local_epsilon": M.sgdl_shuffle_local_epsilon(eps, n, max_distance=max_distance),  # Theorem 7.2
        "capped": eps >= M.MAX_EPSILON,
        "source": source,
        "reason": reason,
    }
    if results["capped"]:
        results["note"] = _search_limit_note("eps", M.MAX_EPSILON, True, target)
    return results


#: Rows of the profile table (distances picked on a geometric grid from the curve).
_PROFILE_ROWS = 12


def _profile_rows(prof: Any) -> list[int]:
    """Indices of the curve shown in the table: every listed distance when there are at most `_PROFILE_ROWS`,
    else a geometric grid of them; the theorem's limit included."""
    import numpy as np

    size = prof.distances.size
    if size <= _PROFILE_ROWS:
        return list(range(size))
    picks = np.unique(np.round(np.geomspace(1, size, num=_PROFILE_ROWS)).astype(int) - 1)
    extra = np.flatnonzero(prof.distances == prof.theorem_holds_up_to)
    return sorted({*picks.tolist(), *extra.tolist()})


def _certified_reach(distance: int) -> str:
    """What the profile certifies of a value: up to a distance, or nowhere.  "No" is not "fails": the certified
    curve is an upper bound, so a value above it is merely not shown to hold by this analysis."""
    if distance == 0:
        return "not certified at any distance by this analysis (an upper bound: not a proof that it fails)"
    return f"certified for datasets at distance <= {distance}"


#: How a profile's noise parameter is named in the plot's title (`DistanceProfile.inputs` keys).
_PLOT_PARAMETER = {"p": "p", "eps_geo": "eps_geo", "epsilon": "eps"}


def _profile_title(prof: Any) -> str:
    """The plot's title: the protocol, n, k, delta and its noise parameter (a figure read alone says what it shows)."""
    inputs = prof.inputs
    parameter = next(f"{label} = {inputs[key]:g}" for key, label in _PLOT_PARAMETER.items() if key in inputs)
    return f"{prof.protocol}: n = {inputs['n']}, k = {inputs['k']}, delta = {prof.delta:g}, {parameter}"


def _profile_figure(prof: Any, target: float | None = None) -> Any:
    """A small figure: epsilon(d) against d (log scale), the theorem's value as a line, its valid range shaded, the
    ``--target`` (if given) as a line with the distance it reaches; the legend below the axes, where it hides no part
    of the curve."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.0, 4.0), dpi=120)
    xs, ys = list(prof.distances), list(prof.epsilons)
    top = prof.inputs["n"] * prof.inputs["k"]
    if xs[-1] < top:  # beyond the curve: the uniform value
        xs, ys = [*xs, xs[-1] + 1, top], [*ys, prof.uniform, prof.uniform]
    ax.step(xs, ys, where="pre", label="certified epsilon(d), every pair at distance <= d")
    ax.axhline(prof.uniform, color="grey", linestyle=":", label=f"uniform (every pair): {prof.uniform:.4g}")
    if prof.theorem is not None:
        ax.axhline(prof.theorem, color="tab:red", linestyle="--", label=f"{prof.theorem_name}: {prof.theorem:.4g}")
        if prof.theorem_holds_up_to:
            ax.axvspan(
                1,
                prof.theorem_holds_up_to,
                color="tab:red",
                alpha=0.08,
                label=f"{prof.theorem_name} certified (d <= {prof.theorem_holds_up_to})",
            )
    if target is not None:
        reach = prof.reach(target)
        ax.axhline(target, color="tab:green", linestyle="-.", label=f"target {target:g}: d <= {reach}")
        if reach:
            ax.axvline(reach, color="tab:green", linestyle=":", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("distance d between datasets (Manhattan)")
    ax.set_ylabel("epsilon")
    ax.set_title(_profile_title(prof), fontsize=8)
    ax.legend(fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    fig.tight_layout()
    return fig


def _profile_plot(prof: Any, path: Path, target: float | None = None) -> None:
    """Write `_profile_figure` to ``path``; a file the system refuses is one ``--plot`` error."""
    import matplotlib.pyplot as plt

    fig = _profile_figure(prof, target)
    try:
        fig.savefig(path, bbox_inches="tight")
    except OSError as exc:  # the folder was checked when parsed; it can still refuse the file (/proc, a full disk)
        raise DomainError(f"--plot: cannot write {str(path)!r} ({exc.strerror or exc})") from None
    finally:
        plt.close(fig)


@app.command("profile", cls=S.OneLineCommand)
def profile_cmd(
    mechanism: Annotated[
        str,
        typer.Option(
            "--mechanism",
            parser=S.choice_option("--mechanism", lambda: list(MECHANISMS), "mechanism"),
            help="geo-shuffle (--eps-geo), rr-shuffle (--p) or sgdl-shuffle (--eps).",
        ),
    ],
    n: UsersOpt,
    delta: DeltaOpt,
    k: Annotated[int, typer.Option("--k", parser=S.count_option("--k"), help="Largest value (values in {0..k}).")],
    eps_geo: EpsGeoOpt = None,
    p: RrPOpt = None,
    eps: SgdlEpsOpt = None,
    target: Annotated[
        float | None,
        typer.Option(
            "--target",
            parser=S.epsilon_option("--target"),
            help="Also report the distance up to which this epsilon holds.",
        ),
    ] = None,
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot",
            parser=S.png_file_option("--plot"),
            help="Also write the curve as a small PNG to this .png file in a writable folder (replaced if it exists); "
            "without --plot no file is written.",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Per-distance guarantee: the certified epsilon(d) for every pair of datasets at distance <= d (one delta),
    beside the paper's theorem and the distances where it holds."""
    from shuffledp.accounting import metric as M

    given = {"--eps-geo": eps_geo, "--p": p, "--eps": eps}
    needs = {"geo-shuffle": "--eps-geo", "rr-shuffle": "--p", "sgdl-shuffle": "--eps"}[mechanism]
    for option, value in given.items():
        if option == needs and value is None:
            raise PrivacyParameterError(f"{option} is required with --mechanism {mechanism}")
        if option != needs and value is not None:
            raise PrivacyParameterError(f"{option} does not apply to --mechanism {mechanism} (it takes {needs})")
    title = f"metric profile: {mechanism} (certifying every pair of datasets at each distance)"
    with status(title) as spinner:
        prof = M.metric_profile(
            mechanism,
            delta,
            n,
            k,
            eps_geo=eps_geo,
            epsilon=eps,
            p=p,
            progress=lambda m: spinner.update(f"{title}: {m}"),
        )
    reach = prof.reach(target) if target is not None else None
    if plot is not None:
        _profile_plot(prof, plot, target)
    inputs = {
        "mechanism": mechanism,
        "n": n,
        "delta": delta,
        "k": k,
        "eps_geo": eps_geo,
        "p": p,
        "eps": eps,
        "target": target,
    }
    results = {
        "distances": prof.distances.tolist(),
        "epsilons": prof.epsilons.tolist(),
        "uniform_epsilon": prof.uniform,
        "exact": prof.exact,
        "theorem": prof.theorem_name,
        "theorem_epsilon": prof.theorem,
        "theorem_holds_up_to_distance": prof.theorem_holds_up_to,
        "target_holds_up_to_distance": reach,
        "plot": None if plot is None else str(plot),
        "source": prof.source,
    }
    if as_json:
        emit_result(inputs, results)
        return
    rows = []
    for i in _profile_rows(prof):
        d, e = int(prof.distances[i]), float(prof.epsilons[i])
        holds = "-" if prof.theorem is None else ("yes" if d <= prof.theorem_holds_up_to else "no")
        rows.append((f"<= {d}", number(e, toward="up"), number(prof.theorem, toward="up"), holds))
    table(("distance", "certified epsilon", f"{prof.theorem_name} value", f"{prof.theorem_name} certified"), rows)
    lines = [
        f"every pair (any distance): {number(prof.uniform, toward='up')}",
        f"{prof.theorem_name}: {number(prof.theorem, toward='up')}, {_certified_reach(prof.theorem_holds_up_to)}"
        if prof.theorem is not None
        else f"{prof.theorem_name}: outside its validity condition",
        f"source: {prof.source}" + (" (exact)" if prof.exact else ""),
    ]
    if len(rows) < prof.distances.size:
        lines.insert(
            0, f"the table shows {len(rows)} of the profile's {prof.distances.size} distances (--json lists every one)"
        )
    if reach is not None:
        lines.append(f"target {number(target)}: {_certified_reach(reach)}")
    if plot is not None:
        lines.append(f"plot: {plot}")
    for line in lines:
        console.print(line, soft_wrap=True, highlight=False)
