"""``shuffledp pic``: run the PIC protocol (pic-usenix25 §5) in process.

``shuffledp pic simulate`` runs one full round with real cryptography (or F_PIC
with ``--ideal``), prints the privacy of every group and the utility against the
non-private computation, and writes ``DIR/round.json`` (no key, report or plaintext).
"""

from __future__ import annotations

from inspect import signature
from pathlib import Path
from typing import Annotated, Any

import typer

from shuffledp.accounting import local_epsilon
from shuffledp.cli import _support as S
from shuffledp.cli._output import console, emit_result, json_text, number, progress, table
from shuffledp.errors import PrivacyParameterError

__all__ = ["app", "simulate_cmd"]

app = typer.Typer(
    help="The PIC protocol: one-time keys, shuffler, server, signed board.", no_args_is_help=True, cls=S.OneLineGroup
)

_DATASETS = ("gmission", "everysender", "synthetic")
_SUITES = ("x25519", "pq-hybrid")
_TASKS = ("min-weight", "max-matching", "neighbors", "shapley")
#: Why ``--task shapley`` is refused: the CLI's data sets are locations, the task needs gradients and v.
SHAPLEY_REFUSAL = (
    "shapley needs users' gradients and the server's validation gradient, and this command's data sets are locations; "
    "use the Python API: run_round([('users', G)], RoundConfig(PicTask('shapley'), randomizer, epsilon_c, "
    "dim=D, validation=v), rng) from shuffledp.protocols.pic (example in RoundConfig's docstring)"
)
#: Randomizers of 2-D locations in [-1,1]^2 (the categorical ones take other inputs).
_LOCATION_RANDOMIZERS = (
    "minkowski",
    "laplace",
    "planar_laplace",
    "staircase",
    "square_wave",
    "privunit",
    "privunit_g",
    "privhs",
)


def _choices(values: tuple[str, ...]) -> Any:
    return lambda: list(values)


def _bad(ctx: typer.Context, name: str, message: str) -> typer.BadParameter:
    """A usage error printed as one line starting with the option's name (exit status 2)."""
    param = next(p for p in ctx.command.params if p.name == name)
    return typer.BadParameter(f"{param.opts[0]}: {message}", ctx=ctx, param=param)


#: Top of the local-epsilon search of every group (`shuffledp.accounting.local_epsilon`'s max_epsilon).
LOCAL_EPSILON_CAP = float(signature(local_epsilon).parameters["max_epsilon"].default)

#: Largest group for each task: min-weight matching is dense (n_a x n_b costs and a cubic
#: assignment), the radius matching builds its pair graph, neighbours scale to 10^5 and more.
_MAX_USERS = {"min-weight": 5_000, "max-matching": 20_000, "neighbors": 1_000_000}
_WHY_MAX = {
    "min-weight": "a dense n x n assignment",
    "max-matching": "the pair graph within the serving radius",
    "neighbors": "one process holds every envelope",
}


@app.command("simulate", cls=S.OneLineCommand)
def simulate_cmd(
    ctx: typer.Context,
    dataset: Annotated[
        str,
        typer.Option(
            "--dataset",
            parser=S.choice_option("--dataset", _choices(_DATASETS), "data set"),
            help="gmission, everysender or synthetic.",
        ),
    ],
    task: Annotated[
        str,
        typer.Option(
            "--task",
            parser=S.choice_option("--task", _choices(_TASKS), "task"),
            help="min-weight, max-matching or neighbors (shapley: Python API only, RoundConfig).",
        ),
    ],
    randomizer: Annotated[
        str,
        typer.Option(
            "--randomizer",
            parser=S.choice_option("--randomizer", _choices(_LOCATION_RANDOMIZERS), "location randomizer"),
            help="Randomizer of every group: " + ", ".join(_LOCATION_RANDOMIZERS) + ".",
        ),
    ],
    epsilon_c: Annotated[
        float,
        typer.Option(
            "--epsilon-c",
            parser=S.epsilon_option("--epsilon-c"),
            help=f"Target central epsilon of every group; each group's local epsilon is searched up to {LOCAL_EPSILON_CAP:g} (a target that allows more gets {LOCAL_EPSILON_CAP:g}, and the output says so).",
        ),
    ],
    out: Annotated[
        Path,
        typer.Option("--out", parser=S.directory_option("--out"), help="Directory for round.json (created if needed)."),
    ],
    instance: Annotated[
        int,
        typer.Option("--instance", parser=S.count_option("--instance", 0, 9), help="Instance 0..9 of a real data set."),
    ] = 0,
    n: Annotated[
        int | None,
        typer.Option("--n", parser=S.count_option("--n", 2), help="Synthetic only: users per group; 1e4 is accepted."),
    ] = None,
    delta: Annotated[
        float | None,
        typer.Option(
            "--delta",
            parser=S.delta_option(),
            help="Target delta (default 0.01/n_i per group, §7).",
        ),
    ] = None,
    suite: Annotated[
        str,
        typer.Option(
            "--suite",
            parser=S.choice_option("--suite", _choices(_SUITES), "suite"),
            help="HPKE suite: x25519 or pq-hybrid.",
        ),
    ] = "x25519",
    corrupted: Annotated[
        int,
        typer.Option(
            "--corrupted",
            parser=S.count_option("--corrupted", 0),
            help="Users per group assumed to collude with the server, |C|.",
        ),
    ] = 0,
    k: Annotated[
        int, typer.Option("--k", parser=S.count_option("--k", 1, 1000), help="neighbors: neighbours per user.")
    ] = 5,
    bucket_bits: Annotated[
        int,
        typer.Option(
            "--bucket-bits",
            parser=S.count_option("--bucket-bits", 0, 16),
            help="Remark 2: clients download only their board bucket; at most this many bits (0: whole board).",
        ),
    ] = 0,
    min_bucket_size: Annotated[
        int,
        typer.Option(
            "--min-bucket-size",
            parser=S.count_option("--min-bucket-size", 1),
            help="Fewest entries in any board bucket (signed; the board uses fewer bits if needed).",
        ),
    ] = 10,
    ideal: Annotated[
        bool, typer.Option("--ideal", help="Run the ideal functionality F_PIC (no cryptography).")
    ] = False,
    seed: Annotated[
        int, typer.Option("--seed", parser=S.seed_option("--seed"), help="Seed of the data and randomization streams.")
    ] = 0,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object (inputs and the round's report) instead of tables.")
    ] = False,
) -> None:
    """Run one full PIC round in process; print privacy and utility; write DIR/round.json."""
    import numpy as np

    from shuffledp.datasets import load_crowdsourcing, synthetic_instance
    from shuffledp.protocols.pic.computation import PicTask
    from shuffledp.protocols.pic.round import RoundConfig, round_report, run_round

    if task == "shapley":
        raise _bad(ctx, "task", SHAPLEY_REFUSAL)
    if dataset == "synthetic":
        if n is None:
            raise _bad(ctx, "n", "required with --dataset synthetic (users per group)")
    elif n is not None:
        raise _bad(ctx, "n", f"applies to --dataset synthetic only; {dataset} instances have fixed sizes")
    if task != "neighbors" and k != 5:
        raise _bad(ctx, "k", f"applies to --task neighbors only, not {task}")
    if bucket_bits == 0 and min_bucket_size != 10:
        raise _bad(ctx, "min_bucket_size", "applies with --bucket-bits 1 to 16 only (0 downloads the whole board)")
    if dataset == "synthetic" and instance != 0:
        raise _bad(ctx, "instance", "applies to gmission and everysender only")
    if n is not None and n > _MAX_USERS[task]:
        raise _bad(
            ctx,
            "n",
            f"must be at most {_MAX_USERS[task]:,} per group for --task {task} ({_WHY_MAX[task]}), got {S.typed('--n', n)}",
        )
    from shuffledp.experiments.runner import writable_directory

    out = writable_directory(out, "--out")  # checked before the round runs
    rng = np.random.default_rng(seed)
    if dataset == "synthetic":
        inst = synthetic_instance(n, 0 if task == "neighbors" else n, rng)
    else:
        inst = load_crowdsourcing(dataset, instance)
    groups = [("users", inst.users)] if task == "neighbors" else [("users", inst.users), ("workers", inst.workers)]
    radius = inst.serving_radius if task == "max-matching" else PicTask.radius
    pic_task = PicTask(task, radius=radius, k=k if task == "neighbors" else 1)
    smallest = min(len(X) for _, X in groups)
    if task == "neighbors" and k >= smallest:
        raise _bad(
            ctx, "k", f"must be below the group's {smallest} users for --task neighbors, got {S.typed('--k', k)}"
        )
    most = (smallest - 1) // (1 + pic_task.exposure(1))  # |C| + |U| = |C| (1 + k) must leave the victim (§5.3)
    if corrupted > most:
        raise _bad(ctx, "corrupted", f"must be at most {most} for --task {task} with a smallest group of {smallest} users "
                   f"(each corrupted user may expose {pic_task.exposure(1)} honest one(s), §5.3, and the victim must stay "
                   f"anonymous), got {S.typed('--corrupted', corrupted)}")  # fmt: skip
    try:
        config = RoundConfig(pic_task, randomizer, epsilon_c, delta, suite, corrupted, bucket_bits=bucket_bits,
                             min_bucket_size=min_bucket_size)  # fmt: skip
        result = run_round(groups, config, rng, ideal=ideal, progress=progress())
    except PrivacyParameterError as exc:
        text = str(exc)
        if text.startswith("epsilon_c "):  # the target cannot be met in some group
            raise _bad(ctx, "epsilon_c", text.removeprefix("epsilon_c ")) from None
        raise

    report = round_report(
        result,
        epsilon_c_target=epsilon_c,
        dataset=dataset if dataset == "synthetic" else f"{dataset}[{instance}]",
        task=task,
        randomizer=randomizer,
        suite=suite,
        ideal=ideal,
        seed=seed,
    )
    _mark_search_cap(report)
    try:
        (out / "round.json").write_text(json_text(report, indent=2) + "\n")
    except OSError as exc:
        raise _bad(ctx, "out", f"cannot write {str(out / 'round.json')!r} ({exc.strerror or exc})") from None
    if as_json:
        inputs = dict(dataset=dataset, task=task, randomizer=randomizer, epsilon_c=epsilon_c, out=str(out),
                      instance=None if dataset == "synthetic" else instance, n=n, delta=delta, suite=suite,
                      corrupted=corrupted, k=k if task == "neighbors" else None, bucket_bits=bucket_bits,
                      min_bucket_size=min_bucket_size if bucket_bits else None, ideal=ideal, seed=seed)  # fmt: skip
        emit_result(inputs, {**report, "round_json": str(out / "round.json")})
        return
    _print(report)
    console.print(f"wrote {out / 'round.json'}")


def _mark_search_cap(report: dict[str, Any]) -> None:
    """Say which groups' local epsilon is the search's upper end, not what the target allows."""
    report["local_epsilon_search_cap"] = LOCAL_EPSILON_CAP
    for p in report["privacy"]:
        p["local_epsilon_capped"] = p["local_epsilon"] >= LOCAL_EPSILON_CAP


def _print(report: dict[str, Any]) -> None:
    mode = "F_PIC (ideal)" if report["ideal"] else f"real protocol, suite {report['suite']}"
    console.print(f"PIC round: {report['dataset']}, task {report['task']}, randomizer {report['randomizer']}, {mode}")
    rows = [
        (
            p["name"],
            p["n_i"],
            p["valid_reports"],
            p["n_prime"],
            number(p["delta"], 2),
            number(p["local_epsilon"], 4),
            number(p["epsilon_c"], 4),
            number(p["epsilon_c_pic_eq1"], 4),
            "yes" if p["target_met"] else "NO",
        )
        for p in report["privacy"]
    ]
    table(("group", "n_i", "valid", "n'", "delta", "local eps", "eps_c", "Eq. 1", "met"), rows)
    for p in report["privacy"]:
        check = p.get("check_delta")
        verdict = (
            "no independent check for this randomizer"
            if check is None
            else f"independent check {'passed' if p['check_passed'] else 'FAILED'}: a discretised lower bound "
            f"on delta at eps_c is {number(check, 2)} (<= delta {number(p['delta'], 2)})"
        )
        console.print(f"{p['name']}: eps_c by the {p['method']}; {verdict}")
    console.print(
        "eps_c: the bound proven for the randomizer's parameters (docs/which-bound.md); Eq. 1: PIC Theorem 5.2 (inf outside its regime)"
    )
    for p in report["privacy"]:
        if not p["target_met"]:  # say why: the round's n' fell below the one the local epsilon was planned for
            console.print(
                f"warning: {p['name']} misses --epsilon-c {S.typed('--epsilon-c', report['epsilon_c_target'])}: its local epsilon was "
                f"planned for n' = {p['n_prime_planned']}, the round gave n' = {p['n_prime']} ({p['n_prime_rule']})"
            )
    capped = [p["name"] for p in report["privacy"] if p["local_epsilon_capped"]]
    if capped:
        console.print(
            f"note: the local epsilon of {', '.join(capped)} is the search cap {LOCAL_EPSILON_CAP:g}: --epsilon-c "
            f"{S.typed('--epsilon-c', report['epsilon_c_target'])} allows at least that much, and eps_c is the guarantee at the cap"
        )
    rows: list[tuple[str, Any]] = [(f"utility: {k}", number(v, 4)) for k, v in report["utility"].items()]
    if not report["ideal"]:
        rows += [
            ("envelope to the shuffler (B)", report["message_bytes"]),
            ("envelope to the server (B)", report["inner_envelope_bytes"]),
            ("board (B)", report["board_bytes"]),
            ("board bucket bits", report["board_bucket_bits"]),
            ("client prepare (us)", number(report["client_prepare_us"], 3)),
            ("shuffler (us/envelope)", number(report["shuffler_unwrap_us_per_envelope"], 3)),
            ("server decrypt (us/report)", number(report["server_decrypt_us_per_message"], 3)),
            ("f(L) (ms)", number(report["task_ms"], 3)),
            ("outputs verified against F_PIC on the clients' own reports", report["outputs_verified"]),
            ("posts verified", report["posts_verified"]),
        ]
    table(("quantity", "value"), rows)
