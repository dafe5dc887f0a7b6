"""Framing shared by every PIC wire message: the 5-byte header, a bounds-checked reader, field checks.

Layouts of the messages themselves: `.messages` and `.bulletin`.
"""

from __future__ import annotations

import secrets
from enum import IntEnum
from typing import Any

from shuffledp.errors import MessageFormatError

PROTOCOL = "shuffledp-pic"
VERSION = 2  # 2: two HPKE layers, parameter hash bound everywhere, signed batches (issue 17)
MAGIC = b"PIC"
HEADER_SIZE = len(MAGIC) + 2
ROUND_ID_SIZE = 16


class MessageType(IntEnum):
    """The ``type`` byte of the header."""

    SUBMISSION = 1  # client -> shuffler: the outer envelope
    ROUND_PARAMS = 2
    BOARD_ENTRY = 3
    BOARD_HEAD = 4
    BOARD_SLICE = 5
    POST = 6
    BATCH = 7  # shuffler -> server: a signed, shuffled batch of inner envelopes
    VIEW = 8  # shuffler -> board: the parameter hash the shuffler holds, signed


def header(kind: MessageType) -> bytes:
    """magic || version || type."""
    return MAGIC + bytes([VERSION, kind])


class Reader:
    """Sequential parser of one message; every shortfall is a ``MessageFormatError``."""

    def __init__(self, data: Any, kind: MessageType) -> None:
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise MessageFormatError("field", f"{kind.name.lower()} must be bytes, got {type(data).__name__}")
        self.data = bytes(data)
        self.pos = 0
        self.kind = kind
        self._checkheader()

    def _checkheader(self) -> None:
        name = self.kind.name.lower()
        if len(self.data) < HEADER_SIZE:
            raise MessageFormatError(
                "length", f"{name} is {len(self.data)} bytes, shorter than the {HEADER_SIZE}-byte header"
            )
        magic, version, kind = self.data[:3], self.data[3], self.data[4]
        if magic != MAGIC:
            raise MessageFormatError("magic", f"{name} starts with {magic!r}, expected magic {MAGIC!r}")
        if version != VERSION:
            raise MessageFormatError(
                "version", f"{name} has protocol version {version}; this build speaks version {VERSION}"
            )
        if kind != self.kind:
            try:
                known = MessageType(kind).name.lower()
            except ValueError:
                known = f"unknown type {kind}"
            raise MessageFormatError("type", f"expected a {name} message (type {int(self.kind)}), got {known}")
        self.pos = HEADER_SIZE

    def take(self, n: int, what: str) -> bytes:
        if len(self.data) - self.pos < n:
            raise MessageFormatError(
                "length",
                f"{self.kind.name.lower()} truncated: {what} needs {n} bytes, {len(self.data) - self.pos} left",
            )
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def uint(self, size: int, what: str) -> int:
        return int.from_bytes(self.take(size, what), "big")

    def sized(self, len_size: int, what: str) -> bytes:
        return self.take(self.uint(len_size, f"{what} length"), what)

    def done(self) -> None:
        extra = len(self.data) - self.pos
        if extra:
            raise MessageFormatError("length", f"{self.kind.name.lower()} has {extra} unexpected trailing bytes")


def as_bytes(data: Any, what: str) -> bytes:
    """Bytes-like input (bytes, bytearray, memoryview) as immutable bytes; anything else is a "field" error."""
    if isinstance(data, bytes):
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    raise MessageFormatError("field", f"{what} must be bytes, got {type(data).__name__}")


def sized(data: bytes, len_size: int) -> bytes:
    """``len(data)`` on ``len_size`` big-endian bytes, then ``data``."""
    return len(data).to_bytes(len_size, "big") + data


def check_round_id(round_id: Any) -> bytes:
    if not isinstance(round_id, bytes) or len(round_id) != ROUND_ID_SIZE:
        raise MessageFormatError("field", f"round_id must be {ROUND_ID_SIZE} bytes, got {round_id!r}")
    return round_id


def check_int(value: Any, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise MessageFormatError("field", f"{name} must be an integer in [{low}, {high}], got {value!r}")
    return value


def check_group_id(group_id: Any) -> int:
    return check_int(group_id, "group_id", 0, 2**16 - 1)


def new_round_id() -> bytes:
    """A fresh 16-byte round id from the OS CSPRNG."""
    return secrets.token_bytes(ROUND_ID_SIZE)
