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
