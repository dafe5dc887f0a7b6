"""The one length-prefixed encoding used for HPKE ``info`` and signature contexts.

``length_prefixed(f1, ..., fk) = len(f1) || f1 || ... || len(fk) || fk`` with each
length a 4-byte big-endian unsigned integer.  Two different field lists never
encode to the same bytes (the encoding is prefix-free field by field), so no
two contexts can be confused.
"""

from __future__ import annotations

from shuffledp.errors import CryptoError

_MAX_FIELD = 2**32 - 1


def length_prefixed(*fields: bytes) -> bytes:
    """Concatenate ``fields``, each preceded by its length as a 4-byte big-endian integer."""
    parts = []
    for field in fields:
        if len(field) > _MAX_FIELD:
            raise CryptoError(f"a length-prefixed field may hold at most {_MAX_FIELD} bytes, got {len(field)}")
        parts.append(len(field).to_bytes(4, "big"))
        parts.append(bytes(field))
    return b"".join(parts)
