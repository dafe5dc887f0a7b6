"""Fixed-size padding of plaintexts (ISO/IEC 7816-4 style), so sizes leak nothing.

Every plaintext of a round is padded to the round's declared ``payload_size``
before encryption: ``pad(m) = m || 0x80 || 0x00 * (payload_size - len(m))``, always
``payload_size + 1`` bytes long.  The marker byte makes the padding unambiguous
(any ``m``, including one ending in zeros or in 0x80, is recovered exactly).
Equal lengths for every message of a group is required because an observer of the
users-to-shuffler channel sees ciphertext sizes (metric-privacy-shuffler §8).
"""

from __future__ import annotations

from shuffledp.errors import CryptoError, EnvelopeSizeError

__all__ = ["check_payload_size", "pad", "padded_size", "unpad"]

_MARKER = b"\x80"


def padded_size(payload_size: int) -> int:
    """Length of every padded plaintext for a declared ``payload_size``: ``payload_size + 1``.

    Raises
    ------
    EnvelopeSizeError
        When ``payload_size`` is not an integer >= 0.

    Examples
    --------
    >>> from shuffledp.crypto import padded_size
    >>> padded_size(4)
    5
    """
    return check_payload_size(payload_size) + 1


def check_payload_size(payload_size: int) -> int:
    """``payload_size`` as an int, or raise if it is not an integer >= 0."""
    if isinstance(payload_size, bool) or not isinstance(payload_size, int) or payload_size < 0:
        raise EnvelopeSizeError(f"payload_size must be an integer >= 0, got {payload_size!r}")
    return payload_size


def pad(payload: bytes, payload_size: int) -> bytes:
    """Pad ``payload`` to ``payload_size + 1`` bytes: payload || 0x80 || zeros.

    Parameters
    ----------
    payload : bytes
        At most ``payload_size`` bytes.
    payload_size : int
        The declared size, >= 0.

    Returns
    -------
    bytes
        The padded plaintext.

    Raises
    ------
    EnvelopeSizeError
        When the payload is longer than ``payload_size`` or the size is invalid.

    Examples
    --------
    >>> from shuffledp.crypto import pad
    >>> pad(b"ab", 4)
    b'ab\\x80\\x00\\x00'
    """
    check_payload_size(payload_size)
    if len(payload) > payload_size:
        raise EnvelopeSizeError(
            f"plaintext is {len(payload)} bytes but the declared payload_size is {payload_size}; "
            "a round's envelopes all carry at most payload_size bytes"
        )
    return bytes(payload) + _MARKER + bytes(payload_size - len(payload))


def unpad(padded: bytes, payload_size: int) -> bytes:
    """Invert `pad`.

    Parameters
    ----------
    padded : bytes
        A padded plaintext of ``payload_size + 1`` bytes.
    payload_size : int
        The declared size, >= 0.

    Returns
    -------
    bytes
        The payload.

    Raises
    ------
    CryptoError
        When ``padded`` is not a valid padding of that size.

    Examples
    --------
    >>> from shuffledp.crypto import pad, unpad
    >>> unpad(pad(b"ab\\x80\\x00", 8), 8)     # any payload is recovered exactly
    b'ab\\x80\\x00'
    """
    if len(padded) != padded_size(payload_size):
        raise CryptoError(f"padded plaintext is {len(padded)} bytes, expected {payload_size + 1}")
    body = bytes(padded).rstrip(b"\x00")
    if not body.endswith(_MARKER):
        raise CryptoError("padded plaintext has no 0x80 end-of-payload marker")
    return body[:-1]
