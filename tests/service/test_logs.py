"""No secret, report or plaintext reaches a log line: the logs of a full round are grepped for every one of them."""

from __future__ import annotations

import base64

import pytest
from service_helpers import read_logs

pytestmark = pytest.mark.service


def _forms(data: bytes) -> list[str]:
    """The ways a byte string could be written into a log line."""
    b64 = base64.b64encode(data).decode()
    return [
        data.hex(),
        data.hex().upper(),
        b64,
        base64.urlsafe_b64encode(data).decode().rstrip("="),
        b64[:24],
        repr(data)[2:30],
    ]


def test_logs_of_a_full_round_hold_no_secret_report_or_plaintext(services, published_round):
    result = published_round["result"]
    logs = read_logs(services)
    assert "server published round" in logs  # the logs are those of a whole round
    secrets_: list[bytes] = []
    keys = services.data_dir / "keys"
    for path in keys.iterdir():
        if not path.is_file():
            continue
        text = path.read_text().split()
        secrets_ += [
            bytes.fromhex(part) for part in text if len(part) >= 32 and all(c in "0123456789abcdef" for c in part)
        ]
        if path.suffix == ".token":
            assert text[0] not in logs, path.name
    assert secrets_, "the key folder holds the identities"
    for sub in result.acknowledged:  # whole submissions, and their encrypted parts
        secrets_ += [sub, sub[23:55]]
    for secret in secrets_:
        for form in _forms(secret):
            assert form not in logs, f"a secret or submission appears in the logs ({form[:8]}...)"
    for line in logs.splitlines():
        assert "Authorization" not in line and "Bearer " not in line


def test_a_background_step_failing_while_a_peer_is_down_logs_one_warning_and_backs_off(caplog, tmp_path):
    """Not one line (or traceback) every 0.2 s: one WARNING naming the error, waits doubling, one INFO on recovery."""
    import asyncio
    import logging

    import httpx

    from shuffledp.service import server_app
    from shuffledp.service.settings import ServiceSettings

    app = server_app.create_app(ServiceSettings(data_dir=tmp_path, reconcile_seconds=0.01))
    svc = app.state.service
    calls: list[float] = []

    async def step() -> None:  # the shuffler and the board are down for the first 6 steps
        calls.append(asyncio.get_running_loop().time())
        if len(calls) <= 6:
            raise httpx.ConnectError("All connection attempts failed")

    svc.step = step

    async def go() -> None:
        task = asyncio.create_task(svc._loop())
        while len(calls) < 8:
            await asyncio.sleep(0.01)
        task.cancel()

    with caplog.at_level(logging.DEBUG, logger="shuffledp.service"):
        asyncio.run(asyncio.wait_for(go(), 30))
    svc.store.close()
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "ConnectError" in warnings[0].getMessage() and warnings[0].exc_info is None
    assert len([r for r in caplog.records if r.levelno == logging.INFO]) == 1  # working again
    gaps = [b - a for a, b in zip(calls, calls[1:], strict=False)]
    assert gaps[0] < gaps[2] < gaps[4] and gaps[4] >= 0.3  # 0.02, 0.04, ... 0.64: backing off
