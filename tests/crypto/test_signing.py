"""Ed25519 signatures with domain separation: valid verifies, anything else fails with CryptoError."""

import pytest

from shuffledp.crypto import SIGNATURE_SIZE, SigningKeyPair
from shuffledp.errors import CryptoError

MESSAGE = b"the board of round 7"


@pytest.fixture(scope="module")
def key():
    return SigningKeyPair.generate()


def test_valid_signature_verifies(key):
    sig = key.sign(MESSAGE, context="pic/board")
    assert len(sig) == SIGNATURE_SIZE
    key.verify_key.verify(sig, MESSAGE, context="pic/board")  # no exception


@pytest.mark.parametrize("bit", [0, 7, 100, 511])
def test_flipped_signature_bit_fails(key, bit):
    sig = bytearray(key.sign(MESSAGE, context="pic/board"))
    sig[bit // 8] ^= 1 << (bit % 8)
    with pytest.raises(CryptoError, match="invalid pic/board signature"):
        key.verify_key.verify(bytes(sig), MESSAGE, context="pic/board")


@pytest.mark.parametrize("bit", range(0, 8 * len(MESSAGE), 13))
def test_flipped_message_bit_fails(key, bit):
    sig = key.sign(MESSAGE, context="pic/board")
    msg = bytearray(MESSAGE)
    msg[bit // 8] ^= 1 << (bit % 8)
    with pytest.raises(CryptoError):
        key.verify_key.verify(sig, bytes(msg), context="pic/board")


def test_signature_for_one_context_fails_under_another(key):
    sig = key.sign(MESSAGE, context="pic/board")
    with pytest.raises(CryptoError):
        key.verify_key.verify(sig, MESSAGE, context="pic/post")


def test_context_and_message_boundary_is_unambiguous(key):
    # shifting bytes between context and message must change what is signed
    sig = key.sign(b"cd", context="ab")
    with pytest.raises(CryptoError):
        key.verify_key.verify(sig, b"bcd", context="a")


def test_other_key_fails(key):
    sig = key.sign(MESSAGE, context="pic/board")
    with pytest.raises(CryptoError):
        SigningKeyPair.generate().verify_key.verify(sig, MESSAGE, context="pic/board")


@pytest.mark.parametrize("length", [0, 63, 65])
def test_wrong_length_signature_fails(key, length):
    with pytest.raises(CryptoError, match=f"signature must be 64 bytes, got {length}"):
        key.verify_key.verify(b"\x00" * length, MESSAGE, context="pic/board")
