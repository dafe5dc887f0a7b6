"""Fixed-size HPKE envelopes (RFC 9180, base mode, single shot) bound to a context.

``seal`` pads the payload to the declared size (`.padding`), then encrypts it
with HPKE to the recipient's public key; the result is ``enc || ciphertext`` and its
length depends only on the suite and the declared size (`sealed_size`).

``cryptography``'s HPKE API has no AAD, so the context -- protocol name and
version, purpose, round id and group id -- is bound through HPKE's ``info``
(it enters the key schedule, RFC 9180 §5.1): an envelope opened under any other
context fails authentication.  ``info`` is::

    length_prefixed(b"shuffledp/hpke-info", protocol, version (2 B, big-endian),
                    purpose, round_id, group_id (4 B, big-endian; empty if none), binding)

``binding`` is whatever else the envelope must commit to (e.g. the hash of the signed round
parameters, or the sender and recipient of a post); empty by default.

with `shuffledp.crypto._encoding.length_prefixed` (4-byte length before each field).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cryptography.exceptions import InvalidTag

from shuffledp.crypto._encoding import length_prefixed
from shuffledp.crypto.kem import KemKeyPair, KemPublicKey, Suite, get_suite
from shuffledp.crypto.padding import pad, padded_size, unpad
from shuffledp.errors import CryptoError

__all__ = ["HpkeContext", "seal", "sealed_size", "unseal"]

_INFO_LABEL = b"shuffledp/hpke-info"


@dataclass(frozen=True)
class HpkeContext:
    """What an envelope is for; bound into HPKE ``info`` so it cannot be replayed elsewhere.

    ``group_id=None`` marks a message that belongs to a round but to no group.

    Parameters
    ----------
    protocol : str
        Protocol name, non-empty (e.g. ``"pic"``).
    version : int
        Protocol version, in [0, 65535].
    purpose : str
        What the envelope carries, non-empty (e.g. ``"report"``).
    round_id : bytes
        The round's identifier, non-empty.
    group_id : int or None, default None
        The group, in [0, 2^32), or None.
    binding : bytes, default b""
        Further bytes the envelope commits to (at most 2^16 bytes).

    Raises
    ------
    CryptoError
        For any field outside these ranges.

    Examples
    --------
    >>> from shuffledp.crypto import HpkeContext
    >>> ctx = HpkeContext("pic", 1, "report", round_id=bytes(16), group_id=0)
    >>> ctx.info().startswith(bytes([0, 0, 0, 19]) + b"shuffledp/hpke-info")
    True
    """

    protocol: str
    version: int
    purpose: str
    round_id: bytes
    group_id: int | None = None
    binding: bytes = b""
    _info: bytes = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("protocol", "purpose"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise CryptoError(f"HpkeContext {name} must be a non-empty string, got {value!r}")
        if isinstance(self.version, bool) or not isinstance(self.version, int) or not 0 <= self.version < 2**16:
            raise CryptoError(f"HpkeContext version must be an integer in [0, 65535], got {self.version!r}")
        if not isinstance(self.round_id, bytes) or not self.round_id:
            raise CryptoError(f"HpkeContext round_id must be non-empty bytes, got {self.round_id!r}")
        g = self.group_id
        if g is not None and (isinstance(g, bool) or not isinstance(g, int) or not 0 <= g < 2**32):
            raise CryptoError(f"HpkeContext group_id must be None or an integer in [0, 2**32), got {g!r}")
        if not isinstance(self.binding, bytes) or len(self.binding) > 2**16:
            raise CryptoError(
                f"HpkeContext binding must be bytes of length <= 65536, got {type(self.binding).__name__}"
            )
        group = b"" if g is None else g.to_bytes(4, "big")
        info = length_prefixed(
            _INFO_LABEL,
            self.protocol.encode(),
            self.version.to_bytes(2, "big"),
            self.purpose.encode(),
            self.round_id,
            group,
            self.binding,
        )
        object.__setattr__(self, "_info", info)

    def info(self) -> bytes:
        """The HPKE ``info`` string (layout in the module docstring), computed once."""
        return self._info


def sealed_size(suite: str | Suite, payload_size: int) -> int:
    """Length of every sealed envelope for ``payload_size``: enc + (payload_size + 1) + AEAD tag.

    Parameters
    ----------
    suite : str or Suite
        The suite (see `get_suite`).
    payload_size : int
        The round's declared payload size, >= 0.

    Returns
    -------
    int
        The envelope length in bytes.

    Raises
    ------
    CryptoError
        For an unknown suite or an invalid payload size.

    Examples
    --------
    >>> from shuffledp.crypto import sealed_size
    >>> sealed_size("x25519", 100)      # 32 + 101 + 16
    149
    >>> sealed_size("pq-hybrid", 100)   # 1120 + 101 + 16
    1237
    """
    s = get_suite(suite)
    return s.enc_size + padded_size(payload_size) + s.tag_size


def seal(recipient: KemPublicKey, payload: bytes, context: HpkeContext, payload_size: int) -> bytes:
    """Encrypt ``payload`` (at most ``payload_size`` bytes) to ``recipient`` under ``context``.

    The payload is padded to ``payload_size + 1`` bytes (`pad`) and sealed with
    HPKE base mode, single shot, with ``context.info()`` as ``info``.

    Parameters
    ----------
    recipient : KemPublicKey
        The recipient's public key.
    payload : bytes
        The plaintext, at most ``payload_size`` bytes.
    context : HpkeContext
        What the envelope is for; opening it under any other context fails.
    payload_size : int
        The round's declared payload size, >= 0.

    Returns
    -------
    bytes
        ``enc || ciphertext``, exactly ``sealed_size(suite, payload_size)`` bytes.

    Raises
    ------
    EnvelopeSizeError
        When the payload is longer than ``payload_size``.
    CryptoError
        When the recipient is not a usable key.

    Examples
    --------
    >>> from shuffledp.crypto import HpkeContext, KemKeyPair, seal, sealed_size, unseal
    >>> kp = KemKeyPair.generate()
    >>> ctx = HpkeContext("pic", 1, "report", round_id=bytes(16), group_id=0)
    >>> envelope = seal(kp.public_key, b"hi", ctx, payload_size=16)
    >>> len(envelope) == sealed_size("x25519", 16), unseal(kp, envelope, ctx, payload_size=16)
    (True, b'hi')
    """
    if not isinstance(recipient, KemPublicKey):
        raise CryptoError(f"recipient must be a KemPublicKey, got {type(recipient).__name__}")
    padded = pad(payload, payload_size)
    try:
        return recipient.suite.hpke_suite.encrypt(padded, recipient.hpke_key, info=context.info())
    except ValueError as exc:
        raise CryptoError(f"encryption to {recipient!r} failed: {exc}") from None


def unseal(key_pair: KemKeyPair, sealed: bytes, context: HpkeContext, payload_size: int) -> bytes:
    """Decrypt and unpad a `seal` output; any failure is a one-line `CryptoError`.

    Parameters
    ----------
    key_pair : KemKeyPair
        The recipient's key pair.
    sealed : bytes
        The envelope, ``sealed_size(suite, payload_size)`` bytes.
    context : HpkeContext
        The context it was sealed under.
    payload_size : int
        The round's declared payload size.

    Returns
    -------
    bytes
        The payload.

    Raises
    ------
    CryptoError
        For a wrong length, a tampered envelope, another key or another context.

    Examples
    --------
    >>> from shuffledp.crypto import HpkeContext, KemKeyPair, seal, unseal
    >>> kp = KemKeyPair.generate()
    >>> ctx = HpkeContext("pic", 1, "report", round_id=bytes(16), group_id=0)
    >>> envelope = seal(kp.public_key, b"hi", ctx, payload_size=16)
    >>> other_group = HpkeContext("pic", 1, "report", round_id=bytes(16), group_id=1)
    >>> unseal(kp, envelope, other_group, payload_size=16)
    Traceback (most recent call last):
        ...
    shuffledp.errors.CryptoError: decryption failed: the envelope was tampered with, or is for another key, round, group or purpose
    """
    if not isinstance(key_pair, KemKeyPair):
        raise CryptoError(f"key_pair must be a KemKeyPair, got {type(key_pair).__name__}")
    expected = sealed_size(key_pair.suite, payload_size)
    if not isinstance(sealed, (bytes, bytearray, memoryview)) or len(sealed) != expected:
        got = len(sealed) if isinstance(sealed, (bytes, bytearray, memoryview)) else type(sealed).__name__
        raise CryptoError(
            f"sealed envelope is {got} bytes; suite {key_pair.suite.name!r} with payload_size "
            f"{payload_size} expects {expected}"
        )
    try:
        padded = key_pair.suite.hpke_suite.decrypt(sealed, key_pair._hpke_key, info=context.info())
    except (InvalidTag, ValueError):
        raise CryptoError(
            "decryption failed: the envelope was tampered with, or is for another key, round, group or purpose"
        ) from None
    return unpad(padded, payload_size)
