"""Key objects: generation, raw serialisation with validated lengths, no secret in repr."""

import base64
import pickle

import pytest

from shuffledp.crypto import SUITE_NAMES, KemKeyPair, KemPublicKey, SigningKeyPair, VerifyKey, get_suite
from shuffledp.errors import CryptoError

EXPECTED_SIZES = {"x25519": (32, 32), "pq-hybrid": (1184 + 32, 64 + 32)}  # (public, secret): FIPS 203 + RFC 7748


def _secret_encodings(secret: bytes) -> list[str]:
    return [
        secret.hex(),
        secret.hex().upper(),
        base64.b64encode(secret).decode(),
        base64.urlsafe_b64encode(secret).decode(),
    ]


@pytest.mark.parametrize("suite", SUITE_NAMES)
def test_kem_key_pair_round_trips_through_raw_bytes(suite):
    kp = KemKeyPair.generate(suite)
    public_size, secret_size = EXPECTED_SIZES[suite]
    assert len(kp.public_key.to_bytes()) == public_size == get_suite(suite).public_key_size
    assert len(kp.secret_bytes()) == secret_size == get_suite(suite).secret_key_size
    again = KemKeyPair.from_secret_bytes(suite, kp.secret_bytes())
    assert again.public_key == kp.public_key
    assert again.secret_bytes() == kp.secret_bytes()
    loaded = KemPublicKey.from_bytes(suite, kp.public_key.to_bytes())
    assert loaded == kp.public_key and hash(loaded) == hash(kp.public_key)


@pytest.mark.parametrize("suite", SUITE_NAMES)
def test_fresh_key_pairs_differ(suite):
    assert KemKeyPair.generate(suite).public_key != KemKeyPair.generate(suite).public_key


@pytest.mark.parametrize("suite", SUITE_NAMES)
@pytest.mark.parametrize("delta", [-1, 1])
def test_wrong_length_keys_are_refused(suite, delta):
    public_size, secret_size = EXPECTED_SIZES[suite]
    with pytest.raises(CryptoError, match=f"public key for suite '{suite}' must be {public_size} bytes"):
        KemPublicKey.from_bytes(suite, b"\x01" * (public_size + delta))
    with pytest.raises(CryptoError, match=f"secret key for suite '{suite}' must be {secret_size} bytes"):
        KemKeyPair.from_secret_bytes(suite, b"\x01" * (secret_size + delta))


def test_public_keys_of_different_suites_are_not_interchangeable():
    raw = KemKeyPair.generate("x25519").public_key.to_bytes()
    with pytest.raises(CryptoError, match="pq-hybrid"):
        KemPublicKey.from_bytes("pq-hybrid", raw)


def test_unknown_suite_names_the_choices():
    with pytest.raises(CryptoError, match="x25519, pq-hybrid; got 'rsa'"):
        KemKeyPair.generate("rsa")


@pytest.mark.parametrize("suite", SUITE_NAMES)
def test_repr_and_str_of_kem_key_pair_hold_no_secret(suite):
    kp = KemKeyPair.generate(suite)
    secret = kp.secret_bytes()
    for text in (repr(kp), str(kp), f"{kp}", repr([kp])):
        for encoded in _secret_encodings(secret):
            assert encoded not in text
        # a substring of the secret would also be a leak: no 8-byte window in hex appears
        assert not any(secret[i : i + 8].hex() in text for i in range(len(secret) - 7))


def test_repr_of_signing_key_pair_holds_no_secret():
    kp = SigningKeyPair.generate()
    secret = kp.secret_bytes()
    for text in (repr(kp), str(kp), f"{kp!r}"):
        for encoded in _secret_encodings(secret):
            assert encoded not in text
        assert not any(secret[i : i + 8].hex() in text for i in range(len(secret) - 7))


def test_key_pairs_refuse_pickling():
    with pytest.raises(TypeError, match="not picklable"):
        pickle.dumps(KemKeyPair.generate())
    with pytest.raises(TypeError, match="not picklable"):
        pickle.dumps(SigningKeyPair.generate())


def test_signing_key_pair_round_trips_through_raw_bytes():
    kp = SigningKeyPair.generate()
    again = SigningKeyPair.from_secret_bytes(kp.secret_bytes())
    assert again.verify_key == kp.verify_key
    assert VerifyKey.from_bytes(kp.verify_key.to_bytes()) == kp.verify_key
    with pytest.raises(CryptoError, match="must be 32 bytes, got 31"):
        VerifyKey.from_bytes(b"\x00" * 31)
    with pytest.raises(CryptoError, match="must be 32 bytes, got 33"):
        SigningKeyPair.from_secret_bytes(b"\x00" * 33)
