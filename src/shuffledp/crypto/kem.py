"""HPKE suites (RFC 9180) and their KEM key pairs, from ``cryptography``.

Two suites, chosen per round by name:

============  ==============================  ============  ==========  ======  =========
name          KEM                             KDF           AEAD        enc     public key
============  ==============================  ============  ==========  ======  =========
x25519        DHKEM(X25519, HKDF-SHA256)      HKDF-SHA256   AES-256-GCM 32 B    32 B
pq-hybrid     ML-KEM-768 + X25519 (hybrid)    HKDF-SHA256   AES-256-GCM 1120 B  1216 B
============  ==============================  ============  ==========  ======  =========

Raw key formats (ours; ``cryptography`` gives the hybrid key no serialisation):

- x25519: public = the 32-byte X25519 public key; secret = the 32-byte X25519 private key.
- pq-hybrid: public = ML-KEM-768 encapsulation key (1184 B) || X25519 public key (32 B);
  secret = ML-KEM-768 seed (64 B) || X25519 private key (32 B).

A `KemKeyPair` never shows its secret in ``repr``/``str``; the secret leaves
the object only through the explicitly named `KemKeyPair.secret_bytes`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hpke
from cryptography.hazmat.primitives.asymmetric import mlkem, x25519

from shuffledp.errors import CryptoError

__all__ = ["DEFAULT_SUITE", "KemKeyPair", "KemPublicKey", "SUITE_NAMES", "Suite", "fingerprint", "get_suite"]

_X25519_KEY = 32
_MLKEM768_PUBLIC = 1184
_MLKEM768_SEED = 64
_MLKEM768_CIPHERTEXT = 1088
_AEAD_TAG = 16
# Nenc: RFC 9180 Table 2 (DHKEM(X25519)); ML-KEM-768 ciphertext (FIPS 203) || X25519 share for the hybrid.
# Written out because KEM.enc_length() only exists in newer cryptography releases; tests check
# them against the ciphertexts cryptography actually produces.
_X25519_ENC = _X25519_KEY
_HYBRID_ENC = _MLKEM768_CIPHERTEXT + _X25519_KEY


def fingerprint(public_bytes: bytes) -> str:
    """Short public identifier of a key: the first 8 bytes of SHA-256 of its raw bytes, in hex."""
    return hashlib.sha256(public_bytes).hexdigest()[:16]


class _X25519Keys:
    """Key handling of the DHKEM(X25519) suite."""

    public_size = _X25519_KEY
    secret_size = _X25519_KEY

    @staticmethod
    def generate() -> tuple[Any, Any]:
        secret = x25519.X25519PrivateKey.generate()
        return secret, secret.public_key()

    @staticmethod
    def load_secret(data: bytes) -> tuple[Any, Any]:
        secret = x25519.X25519PrivateKey.from_private_bytes(data)
        return secret, secret.public_key()

    @staticmethod
    def load_public(data: bytes) -> Any:
        return x25519.X25519PublicKey.from_public_bytes(data)

    @staticmethod
    def secret_raw(secret: Any) -> bytes:
        return secret.private_bytes_raw()

    @staticmethod
    def public_raw(public: Any) -> bytes:
        return public.public_bytes_raw()


@dataclass(frozen=True)
class _HybridSecret:
    """The two halves of an ML-KEM-768 + X25519 secret and the combined HPKE key."""

    mlkem: Any
    x25519: Any
    combined: Any


@dataclass(frozen=True)
class _HybridPublic:
    mlkem: Any
    x25519: Any
    combined: Any


class _HybridKeys:
    """Key handling of the ML-KEM-768 + X25519 hybrid suite."""

    public_size = _MLKEM768_PUBLIC + _X25519_KEY
    secret_size = _MLKEM768_SEED + _X25519_KEY

    @staticmethod
    def _pair(m: Any, x: Any) -> tuple[_HybridSecret, _HybridPublic]:
        mp, xp = m.public_key(), x.public_key()
        secret = _HybridSecret(m, x, hpke.MLKEM768X25519PrivateKey(m, x))
        return secret, _HybridPublic(mp, xp, secret.combined.public_key())

    @classmethod
    def generate(cls) -> tuple[_HybridSecret, _HybridPublic]:
        return cls._pair(mlkem.MLKEM768PrivateKey.generate(), x25519.X25519PrivateKey.generate())

    @classmethod
    def load_secret(cls, data: bytes) -> tuple[_HybridSecret, _HybridPublic]:
        m = mlkem.MLKEM768PrivateKey.from_seed_bytes(data[:_MLKEM768_SEED])
        return cls._pair(m, x25519.X25519PrivateKey.from_private_bytes(data[_MLKEM768_SEED:]))

    @staticmethod
    def load_public(data: bytes) -> _HybridPublic:
        m = mlkem.MLKEM768PublicKey.from_public_bytes(data[:_MLKEM768_PUBLIC])
        x = x25519.X25519PublicKey.from_public_bytes(data[_MLKEM768_PUBLIC:])
        return _HybridPublic(m, x, hpke.MLKEM768X25519PublicKey(m, x))

    @staticmethod
    def secret_raw(secret: _HybridSecret) -> bytes:
        return secret.mlkem.private_bytes_raw() + secret.x25519.private_bytes_raw()

    @staticmethod
    def public_raw(public: _HybridPublic) -> bytes:
        return public.mlkem.public_bytes_raw() + public.x25519.public_bytes_raw()


@dataclass(frozen=True, eq=False)
class Suite:
    """One HPKE ciphersuite (RFC 9180): its name, the ``cryptography`` suite object and wire sizes.

    Obtain one with `get_suite`; the table of the module docstring lists both.

    Attributes
    ----------
    name : str
        ``"x25519"`` or ``"pq-hybrid"``.
    hpke_suite : cryptography.hazmat.primitives.hpke.Suite
        The suite object that encrypts and decrypts.
    keys : object
        The suite's raw key format (internal).
    enc_size : int
        Length in bytes of the encapsulated key that starts every envelope.

    Examples
    --------
    >>> from shuffledp.crypto import get_suite
    >>> s = get_suite("x25519")
    >>> s.enc_size, s.public_key_size, s.secret_key_size, s.tag_size
    (32, 32, 32, 16)
    """

    name: str
    hpke_suite: Any
    keys: Any
    enc_size: int

    @property
    def public_key_size(self) -> int:
        """Length in bytes of a raw public key of this suite."""
        return self.keys.public_size

    @property
    def secret_key_size(self) -> int:
        """Length in bytes of a raw secret key of this suite."""
        return self.keys.secret_size

    @property
    def tag_size(self) -> int:
        """Length in bytes of the AEAD tag (AES-256-GCM: 16)."""
        return _AEAD_TAG

    def __repr__(self) -> str:
        return f"Suite({self.name!r})"


def _make_suites() -> dict[str, Suite]:
    kdf, aead = hpke.KDF.HKDF_SHA256, hpke.AEAD.AES_256_GCM
    return {
        "x25519": Suite("x25519", hpke.Suite(hpke.KEM.X25519, kdf, aead), _X25519Keys, _X25519_ENC),
        "pq-hybrid": Suite("pq-hybrid", hpke.Suite(hpke.KEM.MLKEM768_X25519, kdf, aead), _HybridKeys, _HYBRID_ENC),
    }


_SUITES = _make_suites()
#: Names of the available suites, for `get_suite`.
SUITE_NAMES: tuple[str, ...] = tuple(_SUITES)
#: The suite a round uses unless it names another.
DEFAULT_SUITE = "x25519"


def get_suite(suite: str | Suite) -> Suite:
    """The suite named ``suite`` (one of `SUITE_NAMES`), or ``suite`` itself.

    Parameters
    ----------
    suite : str or Suite
        A suite name, or a suite (returned as it is).

    Returns
    -------
    Suite
        The suite.

    Raises
    ------
    CryptoError
        For an unknown name (the message lists the names).

    Examples
    --------
    >>> from shuffledp.crypto import SUITE_NAMES, get_suite
    >>> SUITE_NAMES
    ('x25519', 'pq-hybrid')
    >>> get_suite("pq-hybrid").public_key_size    # ML-KEM-768 (1184 B) || X25519 (32 B)
    1216
    """
    if isinstance(suite, Suite):
        return suite
    if suite not in _SUITES:
        raise CryptoError(f"suite must be one of {', '.join(SUITE_NAMES)}; got {suite!r}")
    return _SUITES[suite]


def _check_length(what: str, data: bytes, expected: int, suite: Suite) -> bytes:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise CryptoError(f"{what} must be bytes, got {type(data).__name__}")
    if len(data) != expected:
        raise CryptoError(f"{what} for suite {suite.name!r} must be {expected} bytes, got {len(data)}")
    return bytes(data)


def _unsupported(suite: Suite, exc: Exception) -> CryptoError:
    return CryptoError(f"suite {suite.name!r} is not supported by the installed cryptography/OpenSSL: {exc}")


class KemPublicKey:
    """A recipient's HPKE public key for one suite (compare and hash by suite and bytes).

    Load one with `from_bytes`, or take `KemKeyPair.public_key`.

    Attributes
    ----------
    suite : Suite
        The suite the key belongs to.

    Examples
    --------
    >>> from shuffledp.crypto import KemKeyPair, KemPublicKey
    >>> kp = KemKeyPair.generate("x25519")
    >>> raw = kp.public_key.to_bytes()
    >>> len(raw), KemPublicKey.from_bytes("x25519", raw) == kp.public_key
    (32, True)
    """

    __slots__ = ("_key", "_raw", "suite")

    def __init__(self, suite: Suite, key: Any, raw: bytes) -> None:
        """Internal; use `from_bytes` or `KemKeyPair.public_key`."""
        self.suite = suite
        self._key = key
        self._raw = raw

    @classmethod
    def from_bytes(cls, suite: str | Suite, data: bytes) -> KemPublicKey:
        """Load a raw public key (length checked against the suite).

        Raises
        ------
        CryptoError
            For an unknown suite, a wrong length or invalid key bytes.
        """
        s = get_suite(suite)
        raw = _check_length("public key", data, s.public_key_size, s)
        try:
            key = s.keys.load_public(raw)
        except UnsupportedAlgorithm as exc:
            raise _unsupported(s, exc) from None
        except ValueError as exc:
            raise CryptoError(f"invalid {s.name} public key: {exc}") from None
        return cls(s, key, raw)

    def to_bytes(self) -> bytes:
        """The raw public key (format in the module docstring)."""
        return self._raw

    @property
    def hpke_key(self) -> Any:
        """The key object ``cryptography``'s HPKE suite takes."""
        return getattr(self._key, "combined", self._key)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, KemPublicKey):
            return NotImplemented
        return self.suite.name == other.suite.name and self._raw == other._raw

    def __hash__(self) -> int:
        return hash((self.suite.name, self._raw))

    def __repr__(self) -> str:
        return f"KemPublicKey(suite={self.suite.name!r}, fingerprint={fingerprint(self._raw)!r})"


class KemKeyPair:
    """An HPKE key pair; the secret half never appears in ``repr``, ``str`` or logs, nor pickles.

    Create one with `generate` (OS CSPRNG) or `from_secret_bytes`.

    Attributes
    ----------
    suite : Suite
        The suite of the key pair.
    public_key : KemPublicKey
        The public half, to publish.

    Examples
    --------
    >>> from shuffledp.crypto import KemKeyPair
    >>> kp = KemKeyPair.generate()
    >>> kp.suite.name, repr(kp).startswith("KemKeyPair(suite='x25519', public=")
    ('x25519', True)
    >>> KemKeyPair.from_secret_bytes("x25519", kp.secret_bytes()).public_key == kp.public_key
    True
    """

    __slots__ = ("_secret", "public_key", "suite")

    def __init__(self, suite: Suite, secret: Any, public_key: KemPublicKey) -> None:
        """Internal; use `generate` or `from_secret_bytes`."""
        self.suite = suite
        self._secret = secret
        self.public_key = public_key

    @classmethod
    def _build(cls, s: Suite, secret: Any, public: Any) -> KemKeyPair:
        return cls(s, secret, KemPublicKey(s, public, s.keys.public_raw(public)))

    @classmethod
    def generate(cls, suite: str | Suite = DEFAULT_SUITE) -> KemKeyPair:
        """A fresh key pair from the OS CSPRNG (via OpenSSL)."""
        s = get_suite(suite)
        try:
            secret, public = s.keys.generate()
        except UnsupportedAlgorithm as exc:
            raise _unsupported(s, exc) from None
        return cls._build(s, secret, public)

    @classmethod
    def from_secret_bytes(cls, suite: str | Suite, data: bytes) -> KemKeyPair:
        """Load a key pair from `secret_bytes` output (length checked)."""
        s = get_suite(suite)
        raw = _check_length("secret key", data, s.secret_key_size, s)
        try:
            secret, public = s.keys.load_secret(raw)
        except UnsupportedAlgorithm as exc:
            raise _unsupported(s, exc) from None
        except ValueError:
            raise CryptoError(f"invalid {s.name} secret key bytes") from None
        return cls._build(s, secret, public)

    def secret_bytes(self) -> bytes:
        """The raw secret key.  Handle with care: store it encrypted, never log it."""
        return self.suite.keys.secret_raw(self._secret)

    @property
    def _hpke_key(self) -> Any:
        """The private key object ``cryptography``'s HPKE suite takes (for `.hpke` only)."""
        return getattr(self._secret, "combined", self._secret)

    def __repr__(self) -> str:
        return f"KemKeyPair(suite={self.suite.name!r}, public={fingerprint(self.public_key.to_bytes())!r})"

    __str__ = __repr__

    def __reduce__(self) -> Any:
        raise TypeError("KemKeyPair is not picklable; use secret_bytes() explicitly if you must store it")
