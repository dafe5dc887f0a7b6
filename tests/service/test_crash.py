"""Crash safety: the shuffler and the server are SIGKILLed at 20 randomized points of a round and restarted.

The round still completes, and no acknowledged submission is lost: every client whose
submission was acknowledged finds its output on the signed board (and every output passes
the clients' independent F_PIC check), on SQLite and on PostgreSQL.

Design (fast enough for every run): one round of 2 x 40 users; a submitter thread sends each
client's submission until it is acknowledged (an exact resend is idempotent), while the main
thread kills a random one of the two processes at a random moment, restarts it and waits
until it is ready: 12 points while submissions arrive, then the round is closed and 8 more
points fall while the shuffler releases and delivers and the server decrypts, computes and
publishes (each restart resumes from the stored state).
"""

from __future__ import annotations

import contextlib
import random
import threading
import time

import httpx
import numpy as np
import pytest
from service_helpers import SMALL_SPEC

from conftest import fresh_postgres_db
from shuffledp.crypto import VerifyKey
from shuffledp.protocols.pic import Client, PicTask
from shuffledp.protocols.pic.round import _independent_check
from shuffledp.service.client import PicServiceClient, ServiceError
from shuffledp.service.local import LocalServices

pytestmark = [pytest.mark.service, pytest.mark.timeout(600)]
POINTS, DURING_SUBMISSIONS = 20, 12


def _crash_round(folder, db_url: str | None, seed: int) -> dict:
    rnd = random.Random(seed)
    services = LocalServices(folder, db_url=db_url).start_all()
    try:
        sdk = PicServiceClient(services.url("shuffler"), server_url=services.url("server"), operator_token=services.token(),
                               retries=50)  # fmt: skip
        n = 40
        info = sdk.create_round(
            {**SMALL_SPEC, "min_fraction": 0.5, "groups": [{"name": "a", "size": n}, {"name": "b", "size": n}]}
        )
        rid = bytes.fromhex(info["round_id"])
        server_key = VerifyKey.from_bytes(bytes.fromhex(sdk.key_config("server")["verify_key"]))
        shuffler_key = VerifyKey.from_bytes(bytes.fromhex(sdk.key_config("shuffler")["verify_key"]))
        signed, view = sdk.round_params(rid), sdk.view(rid)
        rng = np.random.default_rng(seed)
        clients = []
        for i, cred in enumerate(sdk.enrol(2 * n)):
            c = Client(server_key, i // n, shuffler_key=shuffler_key, credential=cred)
            c.join(signed, view)
            c.prepare(rng.uniform(-1, 1, 2), rng)
            clients.append(c)
        acked: list[Client] = []
        stop = threading.Event()

        def submit_all() -> None:
            with httpx.Client(timeout=10) as http:
                url = f"{services.url('shuffler')}/v1/rounds/{rid.hex()}/submissions"
                body = lambda c: {"submission": __import__("base64").b64encode(c.submission).decode()}  # noqa: E731
                for c in clients:
                    while not stop.is_set():
                        try:
                            r = http.post(url, json=body(c))
                        except httpx.HTTPError:
                            time.sleep(0.05)
                            continue  # killed mid-request: the answer is unknown, resend the same bytes
                        if r.status_code in (200, 201):
                            acked.append(c)
                            break
                        time.sleep(0.05)  # 503 not processed, 429: resend
                    time.sleep(rnd.uniform(0, 0.05))

        submitter = threading.Thread(target=submit_all)
        submitter.start()
        kills: list[tuple[str, str]] = []

        def kill_somewhere() -> None:
            role = rnd.choice(["shuffler", "server"])
            time.sleep(rnd.uniform(0.0, 0.4))
            state = "?"
            with contextlib.suppress(Exception):
                state = sdk.round_info(rid)["state"]
            services.restart(role)
            services.wait_ready((role,))
            kills.append((role, state))

        for _ in range(DURING_SUBMISSIONS):
            kill_somewhere()
        submitter.join(timeout=240)
        stop.set()
        assert len(acked) == len(clients), f"only {len(acked)} of {len(clients)} submissions acknowledged"
        for _ in range(POINTS - DURING_SUBMISSIONS):
            with contextlib.suppress(ServiceError, httpx.HTTPError):  # a restart in progress: close again later
                sdk.close_round(rid)
            kill_somewhere()
        assert len(kills) == POINTS
        sdk.close_round(rid)
        final = sdk.wait_round(rid, timeout=120)
        assert final["state"] == "published", final
        # zero acknowledged submissions lost: every acknowledged client is on the signed board and served
        download = sdk.download(rid, timeout=30)
        for c in acked:
            c.retrieve(download)
        params = clients[0].params
        assert _independent_check(
            params, PicTask.from_json(params.task), [clients[:n], clients[n:]], {id(c) for c in acked}
        )
        assert sum(b["envelopes"] for b in final["batches"].values()) == len(acked)
        sdk.close()
        return {"kills": kills, "acked": len(acked)}
    finally:
        services.stop()


def test_sigkill_at_20_points_loses_no_acknowledged_submission_sqlite(tmp_path):
    out = _crash_round(tmp_path, None, seed=int(time.time()) % 10_000)
    assert out["acked"] == 80 and {r for r, _ in out["kills"]} == {"shuffler", "server"}


@pytest.mark.postgres
def test_sigkill_at_20_points_loses_no_acknowledged_submission_postgres(tmp_path):
    out = _crash_round(tmp_path, fresh_postgres_db(), seed=int(time.time()) % 10_000)
    assert out["acked"] == 80
