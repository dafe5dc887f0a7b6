"""The shuffler F_Shuffle of PIC (pic-usenix25 §5.1 step 3, Figure 3): anonymity, never plaintext.

It sees only envelopes (bytes) and the public, signed round parameters; it holds no
decryption key.  Per (round, group) it accepts envelopes of the round's exact length,
drops exact duplicates, and releases the group only once it holds at least the
group's anonymity threshold, permuted uniformly with the OS CSPRNG.
"""

from __future__ import annotations

import secrets
from collections import Counter

import numpy as np

from shuffledp.crypto import VerifyKey
from shuffledp.errors import AnonymityThresholdError, MessageFormatError
from shuffledp.protocols.pic.messages import Envelope, RoundParams, SignedRoundParams


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


class Shuffler:
    """Collects one round's envelopes per group, then releases each group shuffled.

    Rejections are counted in `rejected` by reason (the ``MessageFormatError``
    codes, plus ``"duplicate"`` and ``"closed"``) and raised to the sender.
    """

    def __init__(self, signed_params: bytes, server_key: VerifyKey) -> None:
        self.params: RoundParams = SignedRoundParams.from_bytes(signed_params, server_key=server_key).params
        self._pending: dict[int, dict[bytes, None]] = {g.group_id: {} for g in self.params.groups}
        self._released: set[int] = set()
        self.rejected: Counter[str] = Counter()

    def _refuse(self, reason: str, message: str) -> MessageFormatError:
        self.rejected[reason] += 1
        return MessageFormatError(reason, message)

    def submit(self, envelope: bytes) -> None:
        """Accept one envelope (checked: this round, a known group, the round's length)."""
        try:
            env = Envelope.from_bytes(envelope, self.params)
        except MessageFormatError as exc:
            raise self._refuse(exc.reason, str(exc)) from None
        if env.group_id in self._released:
            raise self._refuse("closed", f"group {env.group_id} was already released; envelope refused")
        pending = self._pending[env.group_id]
        if envelope in pending:
            raise self._refuse("duplicate", f"an identical envelope was already submitted to group {env.group_id}")
        pending[bytes(envelope)] = None

    def count(self, group_id: int) -> int:
        """Envelopes held for ``group_id``."""
        self.params.group(group_id)
        return len(self._pending[group_id])

    def release(self, group_id: int) -> list[bytes]:
        """The group's envelopes in a fresh uniform order; the group then closes.

        Raises `AnonymityThresholdError` while fewer than the group's threshold are held.
        """
        group = self.params.group(group_id)
        if group_id in self._released:
            raise MessageFormatError("closed", f"group {group_id} was already released")
        held = list(self._pending[group_id])
        if len(held) < group.threshold:
            raise AnonymityThresholdError(
                f"group {group_id} ({group.name}) holds {len(held)} envelopes, below its anonymity threshold "
                f"{group.threshold}; it is not released"
            )
        self._released.add(group_id)
        self._pending[group_id] = {}
        return [held[i] for i in csprng_permutation(len(held))]
