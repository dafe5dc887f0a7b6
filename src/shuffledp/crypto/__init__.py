"""A thin, safe layer over ``cryptography``: HPKE envelopes and Ed25519 signatures.

No primitive is written here: HPKE (RFC 9180) and Ed25519 (RFC 8032) come from
``cryptography``.  This package fixes the choices a protocol must not get wrong:
named suites (`.kem`), context binding through HPKE ``info`` and fixed-size
envelopes (`.hpke`, `.padding`), domain-separated signatures
(`.signing`), validated raw key formats and secret-free ``repr``.  Every
failure is a `CryptoError`.
"""

from shuffledp.crypto.hpke import HpkeContext, seal, sealed_size, unseal
from shuffledp.crypto.kem import DEFAULT_SUITE, SUITE_NAMES, KemKeyPair, KemPublicKey, Suite, get_suite
from shuffledp.crypto.padding import pad, padded_size, unpad
from shuffledp.crypto.signing import SIGNATURE_SIZE, SigningKeyPair, VerifyKey

__all__ = [
    "DEFAULT_SUITE",
    "SIGNATURE_SIZE",
    "SUITE_NAMES",
    "HpkeContext",
    "KemKeyPair",
    "KemPublicKey",
    "SigningKeyPair",
    "Suite",
    "VerifyKey",
    "get_suite",
    "pad",
    "padded_size",
    "seal",
    "sealed_size",
    "unpad",
    "unseal",
]
