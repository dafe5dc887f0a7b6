"""The shuffler F_Shuffle of PIC (pic-usenix25 §5.1 step 3, Figure 3): anonymity, never plaintext.

Trusted for anonymity only.  It holds its own long-term signing identity and a fresh KEM key
per round, both named in the server-signed round parameters; it never holds the server's
key, so it sees who sends but never a report.  Per round:

1. `Shuffler.open` verifies the signed parameters (server key pinned, its own keys named)
   and returns a signed `ViewAnnouncement` of their hash for the board: clients submit only
   under that one view.
2. `Shuffler.submit` opens the outer layer (bound to the parameter hash: a submission made
   under another view does not open), checks the sender's enrolment credential and admits
   **one submission per enrolled user per round and group**.  Resending the same submission
   id with the same inner envelope is idempotent; any other reuse of an id is a replay.
3. `Shuffler.release` permutes the inner envelopes with the OS CSPRNG once the group holds
   at least its threshold of admitted, distinct users, and returns a `SignedBatch`.

Refusals raise `MessageFormatError` and are counted in `Shuffler.rejected` by reason:
framing codes, "decrypt" (tampered, or sealed under another key or view), "enrolment",
"one-per-user", "replay", "closed".

Sybils: the threshold counts enrolled identities, so the anonymity set is only as good as
enrolment (one identity per person: an account, a device attestation).  The ledger states
this assumption.
"""

from __future__ import annotations

import hashlib
import secrets
from collections import Counter
from dataclasses import dataclass

import numpy as np

from shuffledp.crypto import KemKeyPair, KemPublicKey, VerifyKey
from shuffledp.errors import AnonymityThresholdError, CryptoError, MessageFormatError, ProtocolError
from shuffledp.protocols.pic._wire import as_bytes
from shuffledp.protocols.pic.batches import SignedBatch, ViewAnnouncement
from shuffledp.protocols.pic.identity import SigningIdentity
from shuffledp.protocols.pic.messages import CREDENTIAL_SIZE, RoundParams, SignedRoundParams, Submission

__all__ = ["ADMITTED", "DUPLICATE", "Enrolment", "Shuffler", "csprng_permutation"]

ADMITTED = "admitted"
DUPLICATE = "duplicate"


def csprng_permutation(n: int) -> np.ndarray:
    """A uniform random permutation of ``range(n)`` drawn from the OS CSPRNG (``secrets``).

    Sorts n independent uniform 64-bit keys from ``secrets.token_bytes``: conditioned on
    the keys being distinct, their ranking is a uniform permutation; a tie (probability
    about n^2 / 2^65) redraws every key, so the result is exactly uniform.  Vectorised.
    """
    if n < 2:
        return np.arange(n, dtype=np.intp)
    while True:
        keys = np.frombuffer(secrets.token_bytes(8 * n), dtype=np.uint64)
        order = np.argsort(keys, kind="stable")
        if np.all(keys[order[1:]] != keys[order[:-1]]):
            return order


class Enrolment:
    """Who may submit: one random credential per enrolled user (kept only as its SHA-256)."""

    def __init__(self) -> None:
        self._users: dict[bytes, int] = {}

    def enroll(self) -> bytes:
        """A new user's credential (32 random bytes), handed to that user once over an authenticated channel."""
        credential = secrets.token_bytes(CREDENTIAL_SIZE)
        self._users[hashlib.sha256(credential).digest()] = len(self._users)
        return credential

    def user(self, credential: bytes) -> int | None:
        """The enrolled user holding ``credential``, or None."""
        return self._users.get(hashlib.sha256(credential).digest())

    def __len__(self) -> int:
        return len(self._users)


@dataclass
class _Admitted:
    submission_id: bytes
    inner: bytes


class Shuffler:
    """Admits, batches and permutes one round's submissions per group (module docstring)."""

    def __init__(
        self,
        server_key: VerifyKey,
        *,
        suite: str = "x25519",
        identity: SigningIdentity | None = None,
        enrolment: Enrolment | None = None,
        kem: KemKeyPair | None = None,
    ) -> None:
        """``server_key``: the server identity this shuffler trusts; ``identity``: its own long-term key
        (ephemeral if None); ``enrolment``: who may submit (shared across rounds); ``kem``: the round's
        KEM key when a service restarts a round it stored (fresh if None: one key per round, §8)."""
        self.server_key = server_key
        self.identity = identity or SigningIdentity.ephemeral()
        self.enrolment = enrolment if enrolment is not None else Enrolment()
        self._kem = kem if kem is not None else KemKeyPair.generate(suite)  # fresh for the round (§8)
        self.params: RoundParams | None = None
        self.rejected: Counter[str] = Counter()

    @property
    def kem_public_key(self) -> KemPublicKey:
        """The round key clients seal the outer layer to (the server names it in the parameters)."""
        return self._kem.public_key

    @property
    def verify_key(self) -> VerifyKey:
        """The shuffler's long-term key, which signs batches and view announcements."""
        return self.identity.verify_key

    def open(self, signed_params: bytes) -> bytes:
        """Take the round's signed parameters; returns the signed view announcement for the board."""
        if self.params is not None:
            raise ProtocolError("this shuffler already runs a round; build one per round (fresh KEM key)")
        params = SignedRoundParams.from_bytes(as_bytes(signed_params, "signed parameters"), server_key=self.server_key,
                                              shuffler_key=self.verify_key).params  # fmt: skip
        if params.shuffler_kem_key != self.kem_public_key:
            raise CryptoError("round parameters name a shuffler KEM key other than this shuffler's")
        self.params = params
        self._pending: dict[int, dict[int, _Admitted]] = {g.group_id: {} for g in params.groups}
        self._ids: dict[bytes, tuple[int, int]] = {}
        self._released: set[int] = set()
        return ViewAnnouncement.sign(params.round_id, params.digest, self.identity.signing_key).to_bytes()

    def _round(self) -> RoundParams:
        if self.params is None:
            raise ProtocolError("open a round (verify its signed parameters) first")
        return self.params

    def _refuse(self, reason: str, message: str) -> MessageFormatError:
        self.rejected[reason] += 1
        return MessageFormatError(reason, message)

    def submit(self, submission: bytes, opened: tuple[bytes, bytes, bytes] | None = None) -> str:
        """Admit one submission; returns "admitted", or "duplicate" for an idempotent resend.

        ``opened`` is ``Submission.open``'s result when this shuffler's own key already opened the
        envelope elsewhere (a service's bulk unwrap on worker processes); None opens it here.
        """
        params = self._round()
        try:
            sub = Submission.from_bytes(as_bytes(submission, "submission"), params)
        except MessageFormatError as exc:
            raise self._refuse(exc.reason, str(exc)) from None
        g = sub.group_id
        if g in self._released:
            raise self._refuse("closed", f"group {g} was already released; submission refused")
        try:
            credential, submission_id, inner = opened if opened is not None else sub.open(params, self._kem)
        except (CryptoError, MessageFormatError):
            raise self._refuse(
                "decrypt", "submission does not open: tampered, or sealed for another key, group or parameter set"
            ) from None
        user = self.enrolment.user(credential)
        if user is None:
            raise self._refuse("enrolment", "submission carries no enrolled credential")
        seen = self._ids.get(submission_id)
        if seen is not None:
            first = self._pending[seen[1]].get(seen[0]) if seen[1] not in self._released else None
            if seen == (user, g) and first is not None and first.inner == inner:
                return DUPLICATE
            raise self._refuse("replay", "submission id was already used")
        if user in self._pending[g]:
            raise self._refuse("one-per-user", f"this user already has a submission in group {g} of this round")
        self._pending[g][user] = _Admitted(submission_id, inner)
        self._ids[submission_id] = (user, g)
        return ADMITTED

    def count(self, group_id: int) -> int:
        """Distinct enrolled users admitted to ``group_id``."""
        self._round().group(group_id)
        return len(self._pending[group_id])

    def release(self, group_id: int) -> bytes:
        """The group's inner envelopes in a fresh uniform order, as a `SignedBatch`; the group then closes.

        Raises `AnonymityThresholdError` while fewer distinct users than the group's threshold were admitted.
        """
        params = self._round()
        group = params.group(group_id)
        if group_id in self._released:
            raise MessageFormatError("closed", f"group {group_id} was already released")
        held = [a.inner for a in self._pending[group_id].values()]
        if len(held) < group.threshold:
            raise AnonymityThresholdError(
                f"group {group_id} ({group.name}) holds submissions of {len(held)} distinct enrolled users, below "
                f"its anonymity threshold {group.threshold}; it is not released"
            )
        self._released.add(group_id)
        self._pending[group_id] = {}
        shuffled = [held[i] for i in csprng_permutation(len(held))]
        batch = SignedBatch.sign(params.round_id, group_id, params.digest, shuffled, params.inner_size,
                                 self.identity.signing_key)  # fmt: skip
        return batch.to_bytes()
