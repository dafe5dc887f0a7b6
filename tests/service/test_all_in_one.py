"""``shuffledp serve all``: the three services in one process and one database, linked in process, run a full round."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import httpx
import numpy as np
import pytest
from service_helpers import SMALL_SPEC

from shuffledp.service.client import AsyncPicServiceClient
from shuffledp.service.local import free_port
from shuffledp.service.simulate import run_http_round

pytestmark = [pytest.mark.service, pytest.mark.timeout(300)]


def test_all_in_one_runs_a_round_under_one_port(tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([sys.executable, "-m", "shuffledp", "serve", "all", "--port", str(port), "--data-dir", str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        end = time.monotonic() + 60
        while True:
            try:
                if all(httpx.get(f"{base}/{r}/readyz").status_code == 200 for r in ("shuffler", "server", "board")):
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < end and proc.poll() is None, "serve all did not become ready"
            time.sleep(0.1)
        rng = np.random.default_rng(5)
        groups = [("a", rng.uniform(-1, 1, (14, 2))), ("b", rng.uniform(-1, 1, (11, 2)))]
        token = (tmp_path / "keys" / "operator.token").read_text().strip()

        async def go():  # noqa: ANN202
            async with AsyncPicServiceClient(
                f"{base}/shuffler", server_url=f"{base}/server", operator_token=token
            ) as sdk:
                return await run_http_round(sdk, groups, SMALL_SPEC, rng=rng)

        r = asyncio.run(go())
        assert r.state == "published" and r.outputs == 25 and r.outputs_verified and r.posts_verified
        assert (tmp_path / "pic.sqlite3").exists()  # one database for the three
        page = httpx.get(f"{base}/board/", follow_redirects=True).text
        assert f'href="/board/rounds/{r.round_id}"' in page
        assert httpx.get(base + "/", follow_redirects=True).url.path == "/board/"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_all_in_one_answers_unknown_paths_at_its_root_with_a_problem(tmp_path):
    from shuffledp.service.apps import all_in_one
    from shuffledp.service.settings import ServiceSettings

    app = all_in_one(ServiceSettings(data_dir=tmp_path))

    async def go() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://all") as c:
            return [await c.get("/nope"), await c.post("/healthz"), await c.get("/server/nope")]

    try:
        answers = asyncio.run(go())
    finally:
        for role in ("shuffler", "board"):
            svc = app.state.apps[role].state.service
            (svc.committer if role == "shuffler" else svc.posts).close()
        app.state.apps["server"].state.service.store.close()
    for r, status, code in zip(answers, (404, 405, 404), ("not-found", "method-not-allowed", "not-found"), strict=True):
        assert r.status_code == status and r.headers["content-type"] == "application/problem+json", (r, r.text)
        assert r.json()["type"] == f"urn:shuffledp:pic:problem:{code}"
