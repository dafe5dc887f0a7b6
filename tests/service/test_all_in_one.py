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
