"""Harnesses of the PIC attack suite: a step-by-step round rig, a malicious server, a network observer.

`Rig` runs one round role by role over bytes (clients -> shuffler -> server -> board ->
clients) so an attack can step in between any two roles.  `NetworkObserver` sees every
byte into and out of the shuffler.  `MaliciousServer` is a `Server` that alters, drops or
tags reports after decryption (what a deviating server can do with L before computing f).
"""

from __future__ import annotations

import numpy as np

from shuffledp.crypto import SigningKeyPair
from shuffledp.protocols.pic._wire import HEADER_SIZE, ROUND_ID_SIZE
from shuffledp.protocols.pic.batches import SignedBatch
from shuffledp.protocols.pic.bulletin import BulletinBoard
from shuffledp.protocols.pic.client import Client, ClientPolicy, VerifiedDownloads
from shuffledp.protocols.pic.computation import PicTask
from shuffledp.protocols.pic.identity import SigningIdentity
from shuffledp.protocols.pic.messages import GroupParams, ReportFormat, open_report
from shuffledp.protocols.pic.reports import group_randomizer
from shuffledp.protocols.pic.server import Server
from shuffledp.protocols.pic.shuffler import Shuffler

LOC = ReportFormat("float64", 2)
# What every submission of a group shows in the clear: header, round id, group id (messages.py).
# Shared by the whole group, it links no one; the observer looks for links in the sealed part only.
PUBLIC_PREFIX = HEADER_SIZE + ROUND_ID_SIZE + 2


class NetworkObserver:
    """Everything that crosses the wire on both sides of the shuffler, in order."""

    def __init__(self) -> None:
        self.inbound: list[bytes] = []  # client -> shuffler
        self.outbound: list[bytes] = []  # shuffler -> server (each released batch, as bytes)

    def links_by_bytes(self, window: int = 32) -> int:
        """How many inbound messages share a ``window``-byte substring of their sealed part (after the
        group's public prefix) with some outbound message."""
        out = b"".join(self.outbound)
        linked = 0
        for msg in self.inbound:
            if any(msg[i : i + window] in out for i in range(PUBLIC_PREFIX, len(msg) - window + 1, 8)):
                linked += 1
        return linked


class MaliciousServer(Server):
    """A server that deviates after decryption: ``alter`` maps group -> {row: new x'}, ``drop`` group -> rows."""

    alter: dict[int, dict[int, list[float]]] = {}
    drop: dict[int, list[int]] = {}

    def decrypt(self, group_id, *args, **kwargs):
        d = super().decrypt(group_id, *args, **kwargs)
        R = group_randomizer(self.params.group(group_id))
        for row, value in self.alter.get(group_id, {}).items():
            d.reports.values[row] = value
            d.reports.estimates[row] = R.estimate(np.asarray([value], dtype=np.float64))[0]
        rows = self.drop.get(group_id, [])
        if rows:
            keep = np.ones(d.valid, dtype=bool)
            keep[rows] = False
            d.keep(keep, "dropped-by-server")
            d.rejected.pop("dropped-by-server", None)  # and hides it
        return d


class Rig:
    """One round, role by role; every step is a method an attack may replace or interleave."""

    def __init__(self, task: PicTask, *, n: int = 12, threshold: int | None = None, randomizer: str = "laplace",
                 local_epsilon: float = 2.0, server_cls: type[Server] = Server, observer: NetworkObserver | None = None,
                 bucket_bits: int = 0, min_bucket_size: int = 1, fmt: ReportFormat = LOC, dim: int = 2,
                 identity: SigningIdentity | None = None) -> None:  # fmt: skip
        self.task, self.n, self.fmt = task, n, fmt
        threshold = n if threshold is None else threshold
        names = ("users", "workers")[: task.n_groups]
        groups = [GroupParams(g, name, randomizer, local_epsilon, fmt, threshold, 1e-3, {"dim": dim})
                  for g, name in enumerate(names)]  # fmt: skip
        identity = identity or SigningIdentity.ephemeral()
        self.shuffler = Shuffler(identity.verify_key)
        self.server = server_cls("x25519", groups, task, (self.shuffler.kem_public_key, self.shuffler.verify_key),
                                 identity=identity, bucket_bits=bucket_bits, min_bucket_size=min_bucket_size)  # fmt: skip
        self.params = self.server.params
        self.signed = self.server.signed_params()
        self.board = BulletinBoard(self.server.verify_key)
        self.view = self.shuffler.open(self.signed)
        self.board.publish_view(self.view)
        self.observer = observer
        self.downloads = VerifiedDownloads(self.server.verify_key, self.shuffler.verify_key)
        self.clients: dict[int, list[Client]] = {g.group_id: [] for g in groups}

    # -- clients
    def enrol(self) -> bytes:
        return self.shuffler.enrolment.enroll()

    def client(self, group: int, credential: bytes | None = None, signed: bytes | None = None, **kwargs) -> Client:
        kwargs.setdefault("policy", ClientPolicy.permissive())
        c = Client(self.server.verify_key, group, shuffler_key=self.shuffler.verify_key,
                   credential=credential or self.enrol(), downloads=self.downloads, **kwargs)  # fmt: skip
        c.join(self.signed if signed is None else signed, self.view)
        self.clients[group].append(c)
        return c

    def envelope(self, c: Client, report) -> bytes:
        return c.seal(np.asarray(report, dtype=np.float64))

    def submit(self, envelope: bytes, client: Client | None = None) -> str:
        if self.observer is not None:
            self.observer.inbound.append(bytes(envelope))
        return self.shuffler.submit(envelope)

    def honest(self, group: int, count: int, rng: np.random.Generator) -> list[Client]:
        out = []
        for _ in range(count):
            c = self.client(group)
            self.submit(self.envelope(c, rng.uniform(-1, 1, 2)), c)
            out.append(c)
        return out

    # -- shuffler -> server
    def release(self, group: int) -> bytes:
        batch = self.shuffler.release(group)
        if self.observer is not None:
            self.observer.outbound.append(batch)
        return batch

    def inner_envelopes(self, batch: bytes) -> list[bytes]:
        return list(SignedBatch.from_bytes(batch).envelopes)

    def open_inner(self, params, key, envelope: bytes, group: int = 0) -> bytes:
        return open_report(params, key, group, envelope)

    def append_copy(self, batch: bytes) -> bytes:
        """What a man in the middle can do to a signed batch: append a copy of one envelope (not re-signed)."""
        return batch + SignedBatch.from_bytes(batch).envelopes[3]

    def forge_batch(self, batch: bytes, keep: int) -> bytes:
        """A batch cut to ``keep`` envelopes and signed by a key that is not the shuffler's."""
        b = SignedBatch.from_bytes(batch)
        return SignedBatch.sign(b.round_id, b.group_id, b.params_hash, b.envelopes[:keep], b.inner_size,
                                SigningKeyPair.generate()).to_bytes()  # fmt: skip

    def corrupt_batch(self, batch: bytes, count: int) -> bytes:
        """A batch in which ``count`` admitted users sent an inner envelope that does not decrypt
        (signed by the shuffler, which cannot see inside)."""
        b = SignedBatch.from_bytes(batch)
        envs = [bytes(e) for e in b.envelopes]
        for i in range(count):
            envs[i] = envs[i][:-1] + bytes([envs[i][-1] ^ 1])
        return SignedBatch.sign(b.round_id, b.group_id, b.params_hash, envs, b.inner_size,
                                self.shuffler.identity.signing_key).to_bytes()  # fmt: skip

    def deliver(self, group: int, batch: bytes):
        return self.server.receive(batch)

    def run_server(self, batches=None) -> bytes:
        gids = [g.group_id for g in self.params.groups]
        batches = batches or {g: self.release(g) for g in gids}
        self.decrypted = {g: self.deliver(g, batches[g]) for g in gids}
        board = self.server.publish()
        self.board.publish(board)
        return board

    def retrieve_all(self) -> dict[Client, bytes | None]:
        download = self.board.download(self.params.round_id)
        out = {}
        for row in self.clients.values():
            for c in row:
                try:
                    out[c] = c.retrieve(download)
                except Exception:  # noqa: BLE001 - an attack test counts who got nothing
                    out[c] = None
        return out
