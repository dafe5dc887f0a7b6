"""``shuffledp demo``: a taxi-hailing PIC round over HTTP on loopback (the README's main job).

Starts the shuffler, the server and the bulletin board as three processes on loopback
(SQLite files in a temporary folder unless ``--db`` is given), then runs one round on
gMission instance 0: passengers (the tasks) and drivers (the workers) are the two groups,
the task is minimum-weight matching, every group uses Minkowski Response calibrated to
``--epsilon-c``, and every user is one simulated client speaking HTTP through the SDK.  It
prints the privacy ledger, the utility against the non-private matching, the matched pairs
that completed a signed post exchange, and the board viewer's address.

The temporary folder (keys, the operator token, the databases and logs: ~11 MB) is deleted at the
end; with ``--data-dir`` or ``--keep-serving`` it is kept and its path printed.  When the round
fails, the services' logs are first copied to a folder of their own, whose path is printed.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from shuffledp.cli import _support as S
from shuffledp.cli._output import PhaseProgress, console, emit_result, number, table
from shuffledp.errors import DataError

__all__ = ["app", "demo_cmd"]

app = typer.Typer(help="A PIC round over HTTP on loopback.", cls=S.OneLineGroup)


@app.command("demo", cls=S.OneLineCommand)
def demo_cmd(
    ctx: typer.Context,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help="Database URL for the services (postgresql://...); default: SQLite files in a temporary folder.",
        ),
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            "--data-dir", help="Folder for keys, databases and logs, kept; default: a temporary folder, deleted."
        ),
    ] = None,
    instance: Annotated[
        int, typer.Option("--instance", help="gMission instance, 0-9.", parser=S.count_option("--instance", 0, 9))
    ] = 0,
    epsilon_c: Annotated[
        float,
        typer.Option(
            "--epsilon-c",
            parser=S.epsilon_option("--epsilon-c", S.SEARCH_MAX_EPSILON),
            help="Target central epsilon of each group (at most the service's cap: the top of the local-epsilon "
            "search, which a shuffled epsilon never exceeds).",
        ),
    ] = 1.0,
    data_root: Annotated[
        Path | None,
        typer.Option("--data-root", help="Folder holding spatial_crowdsourcing/ (default: ../shared/data)."),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed", help="Seed of the simulated clients' noise (default: fresh).", parser=S.seed_option("--seed")
        ),
    ] = None,
    keep_serving: Annotated[
        bool, typer.Option("--keep-serving", help="Keep the services (and the viewer) running until Ctrl-C.")
    ] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")] = False,
) -> None:
    """Run a taxi-hailing round (gMission, min-weight matching, Minkowski Response) over HTTP."""
    import numpy as np

    from shuffledp.cli.serve import check_settings, shown_database
    from shuffledp.datasets import load_crowdsourcing
    from shuffledp.service.client import AsyncPicServiceClient
    from shuffledp.service.local import LocalServices
    from shuffledp.service.simulate import run_http_round

    # the services read SHUFFLEDP_* too: every setting is checked before anything starts
    given = {k: v for k, v in {"db_url": db, "data_dir": data_dir}.items() if v is not None}
    check_settings(ctx, given, folder=data_dir is not None)
    start = time.perf_counter()
    try:
        inst = load_crowdsourcing("gmission", instance, root=data_root)
    except DataError as exc:  # name the option that points at the data
        if data_root is not None:
            raise DataError(f"--data-root {str(data_root)!r} must hold spatial_crowdsourcing/: {exc}") from None
        raise DataError(f"{exc} (give the folder holding spatial_crowdsourcing/ with --data-root)") from None
    groups = [("passengers", inst.users), ("drivers", inst.workers)]
    folder = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix="shuffledp-demo-"))
    services = LocalServices(folder, db_url=db)
    err = console.__class__(stderr=True)
    err.print(f"starting shuffler, server and bulletin board on loopback (data in {folder})", soft_wrap=True)
    ok = False
    try:
        services.start_all()
        err.print(f"services ready after {time.perf_counter() - start:.1f} s: shuffler {services.url('shuffler')}, "
                  f"server {services.url('server')}, board {services.url('bulletin')}", soft_wrap=True)  # fmt: skip
        spec = {
            "task": {"name": "min-weight"},
            "randomizer": "minkowski",
            "epsilon_c": epsilon_c,
            "ttl_seconds": 3600.0,
        }

        async def go():  # noqa: ANN202
            async with AsyncPicServiceClient(services.url("shuffler"), server_url=services.url("server"),
                                             operator_token=services.token()) as sdk:  # fmt: skip
                with PhaseProgress() as note:
                    return await run_http_round(sdk, groups, spec, rng=np.random.default_rng(seed), progress=note)

        result = asyncio.run(go())
        elapsed = time.perf_counter() - start
        viewer = f"{services.url('bulletin')}/rounds/{result.round_id}"
        pairs = result.posts_sent // 2
        if json_out:
            inputs = {
                "db": None if db is None else shown_database(db),
                "data_dir": data_dir,
                "instance": instance,
                "epsilon_c": epsilon_c,
                "data_root": data_root,
                "seed": seed,
                "keep_serving": keep_serving,
            }
            emit_result(inputs, {"round_id": result.round_id, "state": result.state,
                                 "users": sum(len(X) for _, X in groups), "admitted": result.admitted,
                                 "outputs": result.outputs, "outputs_verified": result.outputs_verified,
                                 "ledger": result.ledger, "utility": result.utility, "matched_pairs_posted": pairs,
                                 "posts_verified": result.posts_verified, "signatures": result.signatures,
                                 "viewer": viewer, "seconds": {**result.seconds, "demo_total": elapsed}})  # fmt: skip
        else:
            console.print(f"round {result.round_id}: {result.state}; {result.admitted} of "
                          f"{sum(len(X) for _, X in groups)} users admitted, {result.outputs} outputs decrypted, "
                          f"every output checked against F_PIC: {number(result.outputs_verified)}")  # fmt: skip
            table(["group", "local epsilon", "valid", "n'", "epsilon_c", "delta"],
                  [[r["group"], r["local_epsilon"], r["valid"], r["n_prime"], r["epsilon_c"], r["delta"]] for r in result.ledger],
                  title="privacy ledger (from the signed parameters and board)")  # fmt: skip
            u = result.utility
            table(["private travel cost", "non-private travel cost", "ratio"],
                  [[u.get("travel_cost"), u.get("travel_cost_non_private"), u.get("travel_cost_ratio")]],
                  title="utility: minimum-weight matching")  # fmt: skip
            console.print(f"{pairs} matched pairs completed a signed post exchange through the shuffler's relay "
                          f"(all verified: {number(result.posts_verified)}); signatures: "
                          + ", ".join(f"{k} {v}" for k, v in result.signatures.items()))  # fmt: skip
            console.print(f"demo took {elapsed:.1f} s; board viewer: {viewer}", soft_wrap=True)
        ok = result.state == "published" and bool(result.outputs_verified)
        if keep_serving:
            err.print("serving until Ctrl-C")
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                pass
    finally:
        services.stop()
        _tidy(folder, temporary=data_dir is None and not keep_serving, ok=ok, err=err)
    if not ok:
        raise typer.Exit(1)


def _tidy(folder: Path, *, temporary: bool, ok: bool, err: Any) -> None:
    """The demo's folder (keys, the operator token, databases, logs): kept and named if the user chose it
    (``--data-dir``) or kept the services up (``--keep-serving``); else deleted, after copying the services'
    logs to a folder of their own if the round did not succeed."""
    if not temporary:
        err.print(f"data (keys, databases, logs) kept in {folder}", soft_wrap=True)
        return
    if not ok:
        logs = Path(tempfile.mkdtemp(prefix="shuffledp-demo-logs-"))
        for log in folder.glob("*.log"):
            shutil.copy2(log, logs / log.name)
        err.print(f"the services' logs were copied to {logs}", soft_wrap=True)
    shutil.rmtree(folder, ignore_errors=True)
