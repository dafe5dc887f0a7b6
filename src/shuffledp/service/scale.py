"""Scale-out of the PIC server's decryption and board sealing, and of the shuffler's bulk unwrap, on Dask.

(``--dask-scheduler ADDRESS``; ``shuffledp[scale]``.)  The shuffler unwraps online submissions in
process (45 us each, beside ~450 us of HTTP handling); its bulk unwrap -- every stored submission
of an open round, when a restarted shuffler rebuilds it -- runs on the workers (`unwrap_many`),
and the admission decisions are then replayed in order in process.

With a scheduler address, the server sends each received batch's inner envelopes in chunks
to the workers; each task carries the round's signed parameters and KEM secret, opens its
chunk with the same `shuffledp.protocols.pic.messages.open_report` the in-process server
uses, and returns the plaintexts and its refusal counts (sealing: chunks of (pseudonym, output)
pairs, public keys only, sealed with the server's own `_seal_all`); the key lives only in that task's
arguments and is dropped with it (Dask forgets a task's inputs once its result is gathered,
and nothing is persisted on a worker).  Validation, f(L) and signing stay on the
server, so the board is the same function of the batch either way and clients verify it
with the same code (tests/service/test_scale.py).

What runs where at 10^7 users is in the README ("PIC as a service: scale").
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from typing import Any

__all__ = ["attach_server", "connect", "unwrap_many"]

#: Envelopes per task: large enough that a task's overhead (about 1 ms) is small beside its work (~50 us each).
CHUNK = 5_000


def connect(address: str) -> Any:
    """A Dask client of the scheduler at ``address`` (``tcp://host:port``)."""
    try:
        from distributed import Client
    except ImportError as exc:  # pragma: no cover - the scale extra is missing
        raise RuntimeError("--dask-scheduler needs the scale extra: pip install 'shuffledp[scale]'") from exc
    return Client(address, timeout="30s", set_as_default=False)


def _unwrap_chunk(signed: bytes, verify_key: bytes, suite: str, secret: bytes,
                  submissions: list[bytes]) -> list[tuple[bytes, bytes, bytes] | None]:  # fmt: skip
    """Worker side: open the outer layer of stored submissions with the shuffler's round key (None: does not open)."""
    from shuffledp.crypto import KemKeyPair, VerifyKey
    from shuffledp.errors import CryptoError, MessageFormatError
    from shuffledp.protocols.pic.messages import SignedRoundParams, Submission

    params = SignedRoundParams.from_bytes(signed, server_key=VerifyKey.from_bytes(verify_key)).params
    key = KemKeyPair.from_secret_bytes(suite, secret)
    out: list[tuple[bytes, bytes, bytes] | None] = []
    for data in submissions:
        try:
            out.append(Submission.from_bytes(data, params).open(params, key))
        except (CryptoError, MessageFormatError):
            out.append(None)
    del key, secret
    return out


def unwrap_many(client: Any, signed: bytes, server_key: bytes, kem: Any, submissions: list[bytes],
                chunk: int | None = None) -> list[tuple[bytes, bytes, bytes] | None]:  # fmt: skip
    """The shuffler's bulk unwrap on the cluster (a round rebuilt after a restart): one result per submission."""
    chunk = int(chunk or os.environ.get("SHUFFLEDP_DASK_CHUNK") or CHUNK)
    args = (signed, server_key, kem.suite.name, kem.secret_bytes())
    futures = [client.submit(_unwrap_chunk, *args, submissions[i : i + chunk], pure=False)
               for i in range(0, len(submissions), chunk)]  # fmt: skip
    results = client.gather(futures)
    del futures
    return [r for part in results for r in part]


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
        args = (
            server.signed_params(),
            server.verify_key.to_bytes(),
            server.params.suite,
            server._kem.secret_bytes(),
            group_id,
        )
        parts = [list(envelopes[i : i + chunk]) for i in range(0, len(envelopes), chunk)] or [[]]
        futures = [client.submit(_open_chunk, *args, part, pure=False) for part in parts]
        results = client.gather(futures)
        del futures  # release the tasks (and the key in their arguments) on the cluster
        plaintexts = [p for part, _ in results for p in part]
        return plaintexts, sum((Counter(r) for _, r in results), Counter())

    def dask_seal(group_id: int, pseudonyms: Sequence[Any], outputs: Sequence[bytes]) -> tuple[list[Any], Any]:
        import numpy as np

        from shuffledp.protocols.pic.bulletin import BoardEntry

        args = (server.signed_params(), server.verify_key.to_bytes(), group_id)
        raw = [p.to_bytes() for p in pseudonyms]
        parts = [(raw[i : i + chunk], list(outputs[i : i + chunk])) for i in range(0, len(raw), chunk)]
        futures = [client.submit(_seal_chunk, *args, ps, ys, pure=False) for ps, ys in parts]
        results = client.gather(futures)
        del futures
        entries = [BoardEntry.from_bytes(e) for part, _ in results for e in part]
        ok = np.concatenate([o for _, o in results]) if results else np.ones(0, dtype=bool)
        return entries, ok

    server._open = dask_open
    server._seal = dask_seal


def _seal_chunk(signed: bytes, verify_key: bytes, group_id: int, pseudonyms: list[bytes],
                outputs: list[bytes]) -> tuple[list[bytes], Any]:  # fmt: skip
    """Worker side: seal one chunk of outputs to their pseudonyms (public keys only: no secret travels)."""
    from shuffledp.crypto import VerifyKey
    from shuffledp.protocols.pic.messages import Pseudonym, SignedRoundParams
    from shuffledp.protocols.pic.server import _seal_all

    params = SignedRoundParams.from_bytes(signed, server_key=VerifyKey.from_bytes(verify_key)).params
    entries, ok = _seal_all(params, group_id, [Pseudonym.from_bytes(params.suite, p) for p in pseudonyms], outputs)
    return [e.to_bytes() for e in entries], ok
