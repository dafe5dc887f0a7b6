"""A PIC user u_{i,j} (pic-usenix25 §5.1 steps 2 and 6; Remarks 2-3; §8: fresh keys per round).

A `Client` joins one round: it verifies the server's signed parameters,
draws fresh one-time keys (the pseudonym), randomizes its input with its group's
R_i and seals ``pk || x'`` to the server.  After the round it verifies the signed
board, finds its entry, decrypts its output y, and exchanges signed, encrypted
posts with the partners y names (and only with them).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from shuffledp.crypto import VerifyKey
from shuffledp.errors import CryptoError, MessageFormatError, ProtocolError
from shuffledp.protocols.pic.bulletin import BoardEntry, BoardSlice
from shuffledp.protocols.pic.computation import decode_output
from shuffledp.protocols.pic.messages import (
    Envelope,
    GroupParams,
    OneTimeKeys,
    Post,
    Pseudonym,
    RoundParams,
    SignedRoundParams,
    encode_report,
)
from shuffledp.protocols.pic.reports import group_randomizer


class VerifiedDownloads:
    """Verified copies of what the server publishes: signed round parameters and board downloads.

    Verification (the server's signature; for a board, also every entry against its
    bucket digest) is a pure function of the bytes and the trusted server key, so
    clients on one machine (one device, or one simulation) may share this cache: each
    distinct download is verified once, which keeps n users reading an n-entry board
    O(n).  Bytes that differ in any way are a different download, verified afresh.
    """

    def __init__(self, server_key: VerifyKey) -> None:
        self.server_key = server_key
        self._params: dict[bytes, RoundParams] = {}
        self._boards: dict[bytes, dict[bytes, BoardEntry]] = {}

    def round_params(self, signed: bytes) -> RoundParams:
        """Verified round parameters; ``CryptoError``/``MessageFormatError`` if they do not verify."""
        if signed not in self._params:
            self._params[bytes(signed)] = SignedRoundParams.from_bytes(signed, server_key=self.server_key).params
        return self._params[signed]

    def board(self, download: bytes) -> dict[bytes, BoardEntry]:
        """Pseudonym -> entry of a verified board download (whole board or one bucket)."""
        if download not in self._boards:
            sl = BoardSlice.from_bytes(download)
            self._boards[bytes(download)] = {e.pseudonym: e for e in sl.verify(self.server_key)}
        return self._boards[download]


class Client:
    """One user in one round; build a new Client for every round (one-time keys, §8)."""

    def __init__(self, server_key: VerifyKey, group_id: int, downloads: VerifiedDownloads | None = None) -> None:
        """``downloads``: a cache shared with co-located clients trusting the same key (else a private one)."""
        self.server_key = server_key
        self.group_id = group_id
        shared = downloads is not None and downloads.server_key == server_key
        self._downloads = downloads if shared else VerifiedDownloads(server_key)
        self.params: RoundParams | None = None
        self._keys: OneTimeKeys | None = None
        self.output: bytes | None = None
        self.partners: list[tuple[bytes, np.ndarray]] = []

    def join(self, signed_params: bytes) -> GroupParams:
        """Verify the round parameters (step 1), draw this round's one-time keys; returns the group."""
        if self.params is not None:
            raise ProtocolError("this client already joined a round; one-time keys are never reused (§8)")
        params = self._downloads.round_params(signed_params)
        group = params.group(self.group_id)
        self.params, self._keys = params, OneTimeKeys.generate(params.suite)
        return group

    @property
    def pseudonym(self) -> Pseudonym:
        return self._joined()[1].pseudonym

    def _joined(self) -> tuple[RoundParams, OneTimeKeys]:
        if self.params is None or self._keys is None:
            raise ProtocolError("join a round (verify its signed parameters) first")
        return self.params, self._keys

    def seal(self, report: Any) -> bytes:
        """Step 2 for an already randomized report x': the envelope ``HPKE_server(pk || x')``."""
        params, keys = self._joined()
        fmt = params.group(self.group_id).report
        return Envelope.seal(params, self.group_id, encode_report(keys.pseudonym, report, fmt)).to_bytes()

    def prepare(self, x: Any, rng: np.random.Generator | None = None) -> bytes:
        """Step 2: randomize the private input ``x`` with the group's R_i, then `seal`."""
        params, _ = self._joined()
        R = group_randomizer(params.group(self.group_id))
        return self.seal(R.randomize(np.asarray(x, dtype=np.float64)[None, :], rng)[0])

    def retrieve(self, download: bytes) -> bytes:
        """Step 6: verify the board download (whole board or this pseudonym's bucket), find the entry, decrypt y."""
        params, keys = self._joined()
        entry = self._downloads.board(download).get(keys.pseudonym.to_bytes())
        if entry is None:
            raise MessageFormatError("pseudonym", "the board holds no entry for this client's pseudonym")
        if entry.group_id != self.group_id:
            raise MessageFormatError("group", f"the board files this pseudonym under group {entry.group_id}")
        self.output = entry.open(params, keys)
        self.partners = decode_output(self.output, params.suite, params.group(self.group_id).report)
        return self.output

    def _partner_keys(self) -> list[Pseudonym]:
        params, _ = self._joined()
        return [Pseudonym.from_bytes(params.suite, p) for p, _ in self.partners]

    def post_to(self, recipient: bytes, message: bytes) -> bytes:
        """Remark 3: ``(pk_B, Enc_pk_B(p), Sign_sk_A(c))`` to a partner named in this client's output."""
        params, keys = self._joined()
        partner = next((p for p in self._partner_keys() if p.to_bytes() == recipient), None)
        if partner is None:
            raise ProtocolError("posts go only to partners named in this client's output")
        return Post.create(params, keys, partner, message).to_bytes()

    def read_post(self, data: bytes) -> tuple[bytes, bytes]:
        """Verify a post's signature against this client's partners, then decrypt: ``(sender, p)``.

        Raises ``CryptoError`` if no partner signed it, ``MessageFormatError`` if it is
        malformed, for another round or for another pseudonym.
        """
        params, keys = self._joined()
        partners = self._partner_keys()
        if not partners:
            raise CryptoError("post signature does not verify under any expected sender's key (no partners)")
        sender, message = Post.from_bytes(data).open(params, keys, partners)
        return sender.to_bytes(), message
