"""Scale-out of the PIC server's decryption on a Dask cluster (``--dask-scheduler ADDRESS``; ``shuffledp[scale]``).

With a scheduler address, the server sends each received batch's inner envelopes in chunks
to the workers; each task carries the round's signed parameters and KEM secret, opens its
chunk with the same `shuffledp.protocols.pic.messages.open_report` the in-process server
uses, and returns the plaintexts and its refusal counts; the key lives only in that task's
arguments and is dropped with it (Dask forgets a task's inputs once its result is gathered,
and nothing is persisted on a worker).  Validation, f(L), sealing and signing stay on the
server, so the board is the same function of the batch either way and clients verify it
with the same code (tests/service/test_scale.py).

What runs where at 10^7 users is in the README ("PIC as a service: scale").
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from typing import Any

#: Envelopes per task: large enough that a task's overhead (about 1 ms) is small beside its work (~50 us each).
CHUNK = 5_000


def connect(address: str) -> Any:
    """A Dask client of the scheduler at ``address`` (``tcp://host:port``)."""
    try:
        from distributed import Client
    except ImportError as exc:  # pragma: no cover - the scale extra is missing
        raise RuntimeError("--dask-scheduler needs the scale extra: pip install 'shuffledp[scale]'") from exc
    return Client(address, timeout="30s", set_as_default=False)


def _open_chunk(signed: bytes, verify_key: bytes, suite: str, secret: bytes, group_id: int,
                envelopes: list[bytes]) -> tuple[list[bytes], dict[str, int]]:  # fmt: skip
    """Worker side: open one chunk of inner envelopes (the key exists only for this call)."""
    from shuffledp.crypto import KemKeyPair, VerifyKey
    from shuffledp.protocols.pic.messages import SignedRoundParams
    from shuffledp.protocols.pic.server import _open_all

    params = SignedRoundParams.from_bytes(signed, server_key=VerifyKey.from_bytes(verify_key)).params
    key = KemKeyPair.from_secret_bytes(suite, secret)
    plaintexts, rejected = _open_all(params, key, group_id, envelopes)
    del key, secret
    return plaintexts, dict(rejected)


def attach_server(server: Any, client: Any, chunk: int | None = None) -> None:
    """Make ``server`` (a `shuffledp.protocols.pic.Server`) open its batches on the Dask cluster of ``client``
    (``chunk`` envelopes per task; default `CHUNK`, or ``SHUFFLEDP_DASK_CHUNK``)."""
    chunk = int(chunk or os.environ.get("SHUFFLEDP_DASK_CHUNK") or CHUNK)

    def dask_open(group_id: int, envelopes: Sequence[bytes]) -> tuple[list[bytes], Counter[str]]:
        args = (server.signed_params(), server.verify_key.to_bytes(), server.params.suite, server._kem.secret_bytes(), group_id)
        parts = [list(envelopes[i : i + chunk]) for i in range(0, len(envelopes), chunk)] or [[]]
        futures = [client.submit(_open_chunk, *args, part, pure=False) for part in parts]
        results = client.gather(futures)
        del futures  # release the tasks (and the key in their arguments) on the cluster
        plaintexts = [p for part, _ in results for p in part]
        return plaintexts, sum((Counter(r) for _, r in results), Counter())

    server._open = dask_open
