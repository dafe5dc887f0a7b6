"""The one error hierarchy of shuffledp (DESIGN.md, "Conventions").

Every error says what was wrong, with the offending value, and what is allowed.
Each subclass also derives from the closest builtin so callers that catch
``ValueError`` keep working.
"""

from __future__ import annotations


class ShuffleDPError(Exception):
    """Root of every error raised on purpose by shuffledp."""


class DomainError(ShuffleDPError, ValueError):
    """An input lies outside a randomizer's (or task's) input domain."""


class PrivacyParameterError(ShuffleDPError, ValueError):
    """A privacy parameter (epsilon, delta, n, p, beta, q, ...) is out of range."""


class ShapeError(ShuffleDPError, ValueError):
    """An array has the wrong shape or dtype for the call."""


class DataError(ShuffleDPError, ValueError):
    """A data file is missing or malformed."""


class ProtocolError(ShuffleDPError):
    """A protocol message or step violates the protocol."""


class AnonymityThresholdError(ProtocolError):
    """Too few honest users in a group to reach the promised amplification."""


class CryptoError(ShuffleDPError):
    """Encryption, decryption or signature verification failed."""


class ExperimentError(ShuffleDPError, ValueError):
    """An unknown experiment or an invalid experiment option."""


class EnvelopeSizeError(CryptoError, ValueError):
    """A plaintext is longer than the fixed envelope size the round declared."""


class MessageFormatError(ProtocolError, ValueError):
    """A wire message is malformed; ``reason`` is a short code for counting rejections.

    Codes: "magic", "version", "type", "length", "field", "canonical", "round", "group",
    "pseudonym", "digest".
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason

    def __reduce__(self):  # keep ``reason`` across pickling (e.g. to worker processes)
        return (type(self), (self.reason, str(self)))


class AuditError(ShuffleDPError):
    """A randomizer failed an audit: its sampler does not realize the law it declares."""


class UnsupportedEventError(PrivacyParameterError):
    """An accountant cannot price this privacy event (wrong kind, or outside its method's regime)."""


class OutsideRegimeError(UnsupportedEventError):
    """The event is of a supported kind, but the method certifies no finite epsilon at these parameters."""


class ValidityConditionError(OutsideRegimeError):
    """A theorem's validity condition fails (e.g. RR-Shuffle's lambda >= 14 log(4/delta)).

    ``minimum_n`` / ``maximum_epsilon`` / ``minimum_p`` say what would work, when known (else None).
    """

    def __init__(self, message: str, *, minimum_n: int | None = None, maximum_epsilon: float | None = None,
                 minimum_p: float | None = None) -> None:
        super().__init__(message)
        self.minimum_n, self.maximum_epsilon, self.minimum_p = minimum_n, maximum_epsilon, minimum_p

    def __reduce__(self):  # keep the attributes across pickling
        return (_rebuild_validity_error, (str(self), self.minimum_n, self.maximum_epsilon, self.minimum_p))


def _rebuild_validity_error(message, minimum_n, maximum_epsilon, minimum_p):
    return ValidityConditionError(message, minimum_n=minimum_n, maximum_epsilon=maximum_epsilon, minimum_p=minimum_p)
