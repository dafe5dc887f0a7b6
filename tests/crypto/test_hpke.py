"""HPKE envelopes: round trips, context binding, fixed size, tamper/truncation/wrong-key failures."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffledp.crypto import SUITE_NAMES, HpkeContext, KemKeyPair, KemPublicKey, get_suite, seal, sealed_size, unseal
from shuffledp.errors import CryptoError, EnvelopeSizeError

SIZE = 81
_KEYS = {name: KemKeyPair.generate(name) for name in SUITE_NAMES}
CTX = HpkeContext(protocol="shuffledp-pic", version=1, purpose="report", round_id=bytes(range(16)), group_id=3)


@pytest.fixture(scope="module", params=SUITE_NAMES)
def key(request):
    return KemKeyPair.generate(request.param)


def test_round_trip(key):
    payload = b"pseudonym || report"
    sealed = seal(key.public_key, payload, CTX, SIZE)
    assert unseal(key, sealed, CTX, SIZE) == payload


def test_sealed_size_is_enc_plus_padded_payload_plus_tag(key):
    s = key.suite
    expected = {"x25519": 32, "pq-hybrid": 1088 + 32}[s.name] + SIZE + 1 + 16  # RFC 9180 Nenc, FIPS 203 ct, GCM tag
    assert sealed_size(s, SIZE) == expected
    assert len(seal(key.public_key, b"", CTX, SIZE)) == expected


@settings(max_examples=60, deadline=None)
@given(payload=st.binary(max_size=SIZE), suite=st.sampled_from(SUITE_NAMES))
def test_every_envelope_has_the_same_length_whatever_its_plaintext(payload, suite):
    key = _KEYS[suite]
    sealed = seal(key.public_key, payload, CTX, SIZE)
    assert len(sealed) == sealed_size(suite, SIZE)
    assert unseal(key, sealed, CTX, SIZE) == payload


def test_encryption_is_randomised(key):
    assert seal(key.public_key, b"same", CTX, SIZE) != seal(key.public_key, b"same", CTX, SIZE)


def test_oversize_plaintext_is_refused(key):
    with pytest.raises(EnvelopeSizeError, match="82 bytes"):
        seal(key.public_key, b"x" * (SIZE + 1), CTX, SIZE)


def _positions(key):
    """Byte positions covering the KEM encapsulation, the ciphertext body and the tag."""
    n, enc = sealed_size(key.suite, SIZE), key.suite.enc_size
    return [0, enc // 2, enc - 1, enc, enc + SIZE // 2, n - 17, n - 1]


def test_tampered_envelope_fails_everywhere(key):
    sealed = seal(key.public_key, b"payload", CTX, SIZE)
    for pos in _positions(key):
        bad = bytearray(sealed)
        bad[pos] ^= 0x01
        with pytest.raises(CryptoError, match="decryption failed") as info:
            unseal(key, bytes(bad), CTX, SIZE)
        assert type(info.value) is CryptoError


@pytest.mark.parametrize("cut", [1, 16, 40])
def test_truncated_or_extended_envelope_fails(key, cut):
    sealed = seal(key.public_key, b"payload", CTX, SIZE)
    with pytest.raises(CryptoError, match="expects"):
        unseal(key, sealed[:-cut], CTX, SIZE)
    with pytest.raises(CryptoError, match="expects"):
        unseal(key, sealed + b"\x00" * cut, CTX, SIZE)


@pytest.mark.parametrize(
    "other",
    [
        HpkeContext("shuffledp-pic", 1, "report", bytes(range(1, 17)), 3),  # another round
        HpkeContext("shuffledp-pic", 1, "report", bytes(range(16)), 4),  # another group
        HpkeContext("shuffledp-pic", 1, "report", bytes(range(16)), None),  # no group
        HpkeContext("shuffledp-pic", 1, "output", bytes(range(16)), 3),  # another purpose
        HpkeContext("shuffledp-pic", 2, "report", bytes(range(16)), 3),  # another version
        HpkeContext("other-protocol", 1, "report", bytes(range(16)), 3),
    ],
    ids=["round", "group", "no-group", "purpose", "version", "protocol"],
)
def test_wrong_context_fails(key, other):
    sealed = seal(key.public_key, b"payload", CTX, SIZE)
    with pytest.raises(CryptoError, match="decryption failed"):
        unseal(key, sealed, other, SIZE)


def test_wrong_key_fails(key):
    sealed = seal(key.public_key, b"payload", CTX, SIZE)
    with pytest.raises(CryptoError, match="decryption failed"):
        unseal(KemKeyPair.generate(key.suite), sealed, CTX, SIZE)


def test_envelope_of_one_suite_does_not_open_with_the_other():
    sealed = seal(_KEYS["x25519"].public_key, b"payload", CTX, SIZE)
    with pytest.raises(CryptoError, match="expects"):
        unseal(_KEYS["pq-hybrid"], sealed, CTX, SIZE)


def test_info_encoding_is_unambiguous():
    a = HpkeContext("ab", 1, "c", b"r", 0).info()
    b = HpkeContext("a", 1, "bc", b"r", 0).info()
    c = HpkeContext("a", 1, "b", b"cr", 0).info()
    assert len({a, b, c}) == 3
    assert HpkeContext("p", 1, "x", b"r", None).info() != HpkeContext("p", 1, "x", b"r", 0).info()


def test_info_layout():
    info = HpkeContext("p", 258, "x", b"\xaa", 5).info()
    fields = [b"shuffledp/hpke-info", b"p", b"\x01\x02", b"x", b"\xaa", b"\x00\x00\x00\x05", b""]
    assert info == b"".join(len(f).to_bytes(4, "big") + f for f in fields)
    bound = HpkeContext("p", 258, "x", b"\xaa", 5, binding=b"hash").info()
    assert bound == info[:-4] + (4).to_bytes(4, "big") + b"hash"


def test_an_envelope_opens_only_under_its_binding():
    ctx = HpkeContext("pic", 1, "report", bytes(16), 0, binding=b"params-hash-1")
    sealed = seal(_KEYS["x25519"].public_key, b"payload", ctx, SIZE)
    other = HpkeContext("pic", 1, "report", bytes(16), 0, binding=b"params-hash-2")
    with pytest.raises(CryptoError, match="decryption failed"):
        unseal(_KEYS["x25519"], sealed, other, SIZE)
    assert unseal(_KEYS["x25519"], sealed, ctx, SIZE) == b"payload"


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"protocol": ""}, "protocol"),
        ({"purpose": 3}, "purpose"),
        ({"version": 2**16}, "version"),
        ({"round_id": b""}, "round_id"),
        ({"round_id": "abc"}, "round_id"),
        ({"group_id": -1}, "group_id"),
    ],
)
def test_bad_context_is_refused(kwargs, match):
    base = {"protocol": "p", "version": 1, "purpose": "x", "round_id": b"r", "group_id": 0}
    with pytest.raises(CryptoError, match=match):
        HpkeContext(**(base | kwargs))


def test_low_order_recipient_key_is_refused_with_crypto_error():
    zero_point = KemPublicKey.from_bytes("x25519", bytes(32))  # the identity: no shared secret
    with pytest.raises(CryptoError, match="encryption to"):
        seal(zero_point, b"payload", CTX, SIZE)


def test_non_key_arguments_are_refused():
    with pytest.raises(CryptoError, match="recipient must be a KemPublicKey"):
        seal(b"\x00" * 32, b"", CTX, SIZE)
    with pytest.raises(CryptoError, match="key_pair must be a KemKeyPair"):
        unseal(get_suite("x25519"), b"", CTX, SIZE)
