"""Fixed-size padding: exact inversion, constant length, oversize refused."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffledp.crypto import pad, padded_size, unpad
from shuffledp.errors import CryptoError, EnvelopeSizeError

SIZE = 40


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=SIZE))
def test_pad_round_trips_and_has_constant_length(payload):
    padded = pad(payload, SIZE)
    assert len(padded) == padded_size(SIZE) == SIZE + 1
    assert unpad(padded, SIZE) == payload


@pytest.mark.parametrize("payload", [b"", b"\x00", b"\x80", b"a\x80\x00", b"\x00" * SIZE, b"\x80" * SIZE])
def test_payloads_that_look_like_padding_are_recovered(payload):
    assert unpad(pad(payload, SIZE), SIZE) == payload


def test_exact_layout_is_marker_then_zeros():
    assert pad(b"ab", 5) == b"ab\x80\x00\x00\x00"


def test_oversize_payload_is_refused_with_a_named_error():
    with pytest.raises(EnvelopeSizeError, match="41 bytes .* payload_size is 40"):
        pad(b"x" * (SIZE + 1), SIZE)


@pytest.mark.parametrize("size", [-1, 2.5, True, "8"])
def test_bad_payload_size_is_refused(size):
    with pytest.raises(EnvelopeSizeError, match="payload_size"):
        pad(b"", size)


@pytest.mark.parametrize(
    "padded",
    [b"\x00" * (SIZE + 1), b"x" * (SIZE + 1), b"x" * SIZE, b"x" * SIZE + b"\x80\x00"],
    ids=["all-zero", "no-marker", "short", "long"],
)
def test_unpad_rejects_malformed_padding(padded):
    with pytest.raises(CryptoError):
        unpad(padded, SIZE)
