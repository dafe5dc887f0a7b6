"""Ed25519 signatures (RFC 8032, from ``cryptography``) with domain separation.

Every signature covers ``length_prefixed(b"shuffledp/signature", context, message)``
(`._encoding`), where ``context`` names what is signed (e.g. ``"pic/board"``):
a signature made for one kind of message never verifies as another kind.
Raw formats: public key 32 bytes, secret key 32 bytes (the RFC 8032 seed),
signature 64 bytes.
"""

from __future__ import annotations

from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric import ed25519

from shuffledp.crypto._encoding import length_prefixed
from shuffledp.crypto.kem import fingerprint
from shuffledp.errors import CryptoError

__all__ = ["SIGNATURE_SIZE", "SigningKeyPair", "VERIFY_KEY_SIZE", "VerifyKey"]

VERIFY_KEY_SIZE = 32
SECRET_KEY_SIZE = 32
#: Length in bytes of an Ed25519 signature.
SIGNATURE_SIZE = 64
_LABEL = b"shuffledp/signature"


def _signed_bytes(context: str, message: bytes) -> bytes:
    if not isinstance(context, str) or not context:
        raise CryptoError(f"signature context must be a non-empty string, got {context!r}")
    return length_prefixed(_LABEL, context.encode(), bytes(message))


def _check_bytes(what: str, data: Any, size: int) -> bytes:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise CryptoError(f"{what} must be bytes, got {type(data).__name__}")
    if len(data) != size:
        raise CryptoError(f"{what} must be {size} bytes, got {len(data)}")
    return bytes(data)


class VerifyKey:
    """An Ed25519 public key (RFC 8032; compare and hash by its bytes).

    Load one with `from_bytes`, or take `SigningKeyPair.verify_key`.

    Examples
    --------
    >>> from shuffledp.crypto import SigningKeyPair, VerifyKey
    >>> pair = SigningKeyPair.generate()
    >>> VerifyKey.from_bytes(pair.verify_key.to_bytes()) == pair.verify_key
    True
    """

    __slots__ = ("_key", "_raw")

    def __init__(self, key: ed25519.Ed25519PublicKey) -> None:
        """Internal; use `from_bytes` or `SigningKeyPair.verify_key`."""
        self._key = key
        self._raw = key.public_bytes_raw()

    @classmethod
    def from_bytes(cls, data: bytes) -> VerifyKey:
        """Load a raw 32-byte Ed25519 public key."""
        raw = _check_bytes("Ed25519 verify key", data, VERIFY_KEY_SIZE)
        try:
            return cls(ed25519.Ed25519PublicKey.from_public_bytes(raw))
        except ValueError:
            raise CryptoError("invalid Ed25519 verify key bytes") from None

    def to_bytes(self) -> bytes:
        """The raw 32-byte public key."""
        return self._raw

    def verify(self, signature: bytes, message: bytes, *, context: str) -> None:
        """Return if ``signature`` is this key's signature of ``message`` under ``context``; else raise.

        Parameters
        ----------
        signature : bytes
            64 bytes.
        message : bytes
            The signed message.
        context : str
            What kind of message was signed (non-empty, e.g. ``"pic/board"``).

        Raises
        ------
        CryptoError
            For a malformed or invalid signature, or one made under another context.
        """
        sig = _check_bytes("signature", signature, SIGNATURE_SIZE)
        try:
            self._key.verify(sig, _signed_bytes(context, message))
        except InvalidSignature:
            raise CryptoError(f"invalid {context} signature for verify key {fingerprint(self._raw)}") from None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, VerifyKey):
            return NotImplemented
        return self._raw == other._raw

    def __hash__(self) -> int:
        return hash(self._raw)

    def __repr__(self) -> str:
        return f"VerifyKey(fingerprint={fingerprint(self._raw)!r})"


class SigningKeyPair:
    """An Ed25519 key pair; the secret half never appears in ``repr``, ``str`` or logs, nor pickles.

    Signatures are domain-separated by a context string (module docstring).

    Attributes
    ----------
    verify_key : VerifyKey
        The public half.

    Examples
    --------
    >>> from shuffledp.crypto import SIGNATURE_SIZE, SigningKeyPair
    >>> pair = SigningKeyPair.generate()
    >>> signature = pair.sign(b"board v1", context="pic/board")
    >>> len(signature) == SIGNATURE_SIZE
    True
    >>> pair.verify_key.verify(signature, b"board v1", context="pic/board")   # returns None: valid
    >>> pair.verify_key.verify(signature, b"board v1", context="pic/report")
    Traceback (most recent call last):
        ...
    shuffledp.errors.CryptoError: invalid pic/report signature for verify key ...
    """

    __slots__ = ("_secret", "verify_key")

    def __init__(self, secret: ed25519.Ed25519PrivateKey) -> None:
        """Internal; use `generate` or `from_secret_bytes`."""
        self._secret = secret
        self.verify_key = VerifyKey(secret.public_key())

    @classmethod
    def generate(cls) -> SigningKeyPair:
        """A fresh key pair from the OS CSPRNG (via OpenSSL)."""
        return cls(ed25519.Ed25519PrivateKey.generate())

    @classmethod
    def from_secret_bytes(cls, data: bytes) -> SigningKeyPair:
        """Load a key pair from `secret_bytes` output (32 bytes)."""
        return cls(
            ed25519.Ed25519PrivateKey.from_private_bytes(_check_bytes("Ed25519 secret key", data, SECRET_KEY_SIZE))
        )

    def secret_bytes(self) -> bytes:
        """The raw 32-byte secret key.  Handle with care: store it encrypted, never log it."""
        return self._secret.private_bytes_raw()

    def sign(self, message: bytes, *, context: str) -> bytes:
        """The 64-byte signature of ``message`` under ``context``."""
        return self._secret.sign(_signed_bytes(context, message))

    def __repr__(self) -> str:
        return f"SigningKeyPair(verify_key={fingerprint(self.verify_key.to_bytes())!r})"

    __str__ = __repr__

    def __reduce__(self) -> Any:
        raise TypeError("SigningKeyPair is not picklable; use secret_bytes() explicitly if you must store it")
