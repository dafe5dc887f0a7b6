"""Scale-out: with a 2-worker Dask LocalCluster the server decrypts and seals on the workers (and a restarted
shuffler unwraps its stored submissions there), and the board is verified by the same clients (every output
checked against F_PIC) as without it."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from service_helpers import SMALL_SPEC

from shuffledp.service.client import AsyncPicServiceClient
from shuffledp.service.local import LocalServices
from shuffledp.service.simulate import run_http_round

pytestmark = [pytest.mark.service, pytest.mark.timeout(600)]


def _round(services: LocalServices, seed: int):
    rng = np.random.default_rng(seed)
    groups = [("a", rng.uniform(-1, 1, (30, 2))), ("b", rng.uniform(-1, 1, (25, 2)))]

    async def go():  # noqa: ANN202
        async with AsyncPicServiceClient(services.url("shuffler"), server_url=services.url("server"),
                                         operator_token=services.token()) as sdk:  # fmt: skip
            return await run_http_round(sdk, groups, SMALL_SPEC, rng=rng, posts=False)

    return asyncio.run(go())


def _restart_with_stored_submissions(services: LocalServices) -> dict[str, int]:
    """Submit to an open round, SIGKILL the shuffler, restart it: it rebuilds the round by unwrapping on the cluster."""
    from shuffledp.crypto import VerifyKey
    from shuffledp.protocols.pic import Client
    from shuffledp.service.client import PicServiceClient

    with PicServiceClient(
        services.url("shuffler"), server_url=services.url("server"), operator_token=services.token()
    ) as sdk:
        info = sdk.create_round({**SMALL_SPEC, "groups": [{"name": "a", "size": 12}, {"name": "b", "size": 12}]})
        rid = bytes.fromhex(info["round_id"])
        keys = [VerifyKey.from_bytes(bytes.fromhex(sdk.key_config(r)["verify_key"])) for r in ("server", "shuffler")]
        signed, view = sdk.round_params(rid), sdk.view(rid)
        rng = np.random.default_rng(2)
        for i, cred in enumerate(sdk.enrol(24)):
            c = Client(keys[0], i // 12, shuffler_key=keys[1], credential=cred)
            c.join(signed, view)
            assert sdk.submit(rid, c.prepare(rng.uniform(-1, 1, 2), rng)) == "admitted"
        services.restart("shuffler")
        services.wait_ready(("shuffler",))
        import httpx

        return httpx.get(f"{services.url('shuffler')}/v1/rounds/{rid.hex()}").json()["admitted"]


def test_board_from_a_two_worker_dask_cluster_is_verified_by_the_same_clients(tmp_path):
    distributed = pytest.importorskip("distributed")

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        services = LocalServices(tmp_path / "dask", dask_scheduler=cluster.scheduler_address)
        services.env["SHUFFLEDP_DASK_CHUNK"] = "7"  # several tasks per batch, on both workers
        with services:
            with_dask = _round(services, 1)
            admitted = _restart_with_stored_submissions(services)
        with distributed.Client(cluster.scheduler_address) as c:
            prefixes = c.run_on_scheduler(
                lambda dask_scheduler: {k: dict(v.states) for k, v in dask_scheduler.task_prefixes.items()}
            )
            workers = c.run(lambda dask_worker: dask_worker.state.executed_count)
        assert {"open_chunk", "seal_chunk", "unwrap_chunk"} <= set(prefixes), (
            f"not everything ran on the cluster: {prefixes}"
        )
        assert admitted == {"0": 12, "1": 12}
        assert len(workers) == 2 and sum(workers.values()) >= 16  # 30 + 25 envelopes and outputs in chunks of 7
    with LocalServices(tmp_path / "local") as services:
        without = _round(services, 1)
    for r in (with_dask, without):
        assert r.state == "published" and r.outputs == 55 and r.outputs_verified, r
    assert [row["valid"] for row in with_dask.ledger] == [row["valid"] for row in without.ledger] == [30, 25]
    assert with_dask.utility == without.utility  # same reports (same seed), same matching
