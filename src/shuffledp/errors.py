"""The one error hierarchy of shuffledp (DESIGN.md, "Conventions").

Every error says what was wrong, with the offending value, and what is allowed.
Each subclass also derives from the closest builtin so callers that catch
``ValueError`` keep working.
"""

from __future__ import annotations

__all__ = [
    "AnonymityThresholdError",
    "ArgumentTypeError",
    "AuditError",
    "CryptoError",
    "DataError",
    "DomainError",
    "EnvelopeSizeError",
    "ExperimentError",
    "MessageFormatError",
    "NoCloneBoundError",
    "OptionalDependencyError",
    "OutsideRegimeError",
    "ParameterTypeError",
    "PolicyError",
    "PrivacyLevelError",
    "PrivacyParameterError",
    "ProtocolError",
    "ShapeError",
    "ShuffleDPError",
    "UnprovenBoundError",
    "UnsupportedEventError",
    "ValidityConditionError",
]


class ShuffleDPError(Exception):
    """Root of every error raised on purpose by shuffledp.

    Catch it to handle any refusal of the library; each subclass also derives from
    the closest builtin (``ValueError`` for bad values), so existing handlers work.
    Messages name the user's parameter, the offending value and what is allowed.

    Examples
    --------
    >>> from shuffledp import ShuffleDPError
    >>> from shuffledp.randomizers import KRandomizedResponse
    >>> try:
    ...     KRandomizedResponse(epsilon=1.0, k=1)
    ... except ShuffleDPError as exc:
    ...     print(type(exc).__name__, isinstance(exc, ValueError))
    PrivacyParameterError True
    """


class ArgumentTypeError(ShuffleDPError, TypeError):
    """An argument is of the wrong type (e.g. ``rng`` that is not a ``numpy.random.Generator``).

    A subclass of ``TypeError``, as Python raises for a wrong type.

    Examples
    --------
    >>> import numpy as np
    >>> from shuffledp.randomizers import Laplace
    >>> Laplace(epsilon=1.0, dim=2).randomize(np.zeros((3, 2)), 0)
    Traceback (most recent call last):
        ...
    shuffledp.errors.ArgumentTypeError: rng must be a numpy.random.Generator or None (e.g. numpy.random.default_rng(0)), got int 0
    """


class DomainError(ShuffleDPError, ValueError):
    """An input lies outside a randomizer's (or task's) input domain.

    Examples
    --------
    >>> import numpy as np
    >>> from shuffledp.randomizers import Laplace
    >>> Laplace(epsilon=1.0, dim=2).randomize(np.array([[0.0, 0.0], [2.0, 0.0]]))
    Traceback (most recent call last):
        ...
    shuffledp.errors.DomainError: X[1] = ...
    """


class PrivacyParameterError(ShuffleDPError, ValueError):
    """A privacy parameter (epsilon, delta, n, p, beta, q, ...) is out of range.

    Examples
    --------
    >>> from shuffledp.randomizers import Laplace
    >>> Laplace(epsilon=-1.0)
    Traceback (most recent call last):
        ...
    shuffledp.errors.PrivacyParameterError: epsilon must be ...
    """


class ParameterTypeError(PrivacyParameterError, ArgumentTypeError):
    """A parameter of the wrong type: a string or a bool where a number is expected (``eps0='2'``,
    ``n='10000'``).

    Both a `PrivacyParameterError` (``except PrivacyParameterError`` keeps catching it) and a
    ``TypeError``, as Python raises for a wrong type.  Worded like a range error.

    Examples
    --------
    >>> from shuffledp import shuffle_epsilon
    >>> shuffle_epsilon("10000", 1e-6, eps0=2.0)
    Traceback (most recent call last):
        ...
    shuffledp.errors.ParameterTypeError: n must be an integer in [1, 2^53]; got '10000'
    >>> issubclass(ParameterTypeError, TypeError), issubclass(ParameterTypeError, ValueError)
    (True, True)
    """


class ShapeError(ShuffleDPError, ValueError):
    """An array has the wrong shape or dtype for the call.

    Examples
    --------
    >>> from shuffledp.tasks import radius_neighbors
    >>> radius_neighbors([1.0, 2.0], radius=0.5)
    Traceback (most recent call last):
        ...
    shuffledp.errors.ShapeError: reports must have shape (n, d) with d >= 1, got shape (2,)
    """


class DataError(ShuffleDPError, ValueError):
    """A data file is missing or malformed (the message names the file and line).

    Examples
    --------
    >>> from shuffledp.datasets import crowdsourcing_path
    >>> crowdsourcing_path("nosuchset")
    Traceback (most recent call last):
        ...
    shuffledp.errors.DataError: dataset must be one of ['everysender', 'gmission'], got 'nosuchset'
    """


class ProtocolError(ShuffleDPError):
    """A protocol message or step violates the protocol (PIC §5)."""


class AnonymityThresholdError(ProtocolError):
    """Too few honest users in a group to reach the promised amplification (PIC §5.3)."""


class CryptoError(ShuffleDPError):
    """Encryption, decryption or signature verification failed, or a key is malformed.

    Examples
    --------
    >>> from shuffledp.crypto import get_suite
    >>> get_suite("rsa")
    Traceback (most recent call last):
        ...
    shuffledp.errors.CryptoError: suite must be one of x25519, pq-hybrid; got 'rsa'
    """


class ExperimentError(ShuffleDPError, ValueError):
    """An unknown experiment or an invalid experiment option."""


class EnvelopeSizeError(CryptoError, ValueError):
    """A plaintext is longer than the fixed envelope size the round declared.

    Examples
    --------
    >>> from shuffledp.crypto import pad
    >>> pad(b"too long", 4)
    Traceback (most recent call last):
        ...
    shuffledp.errors.EnvelopeSizeError: plaintext is 8 bytes but the declared payload_size is 4; ...
    """


class MessageFormatError(ProtocolError, ValueError):
    """A wire message is malformed; ``reason`` is a short code for counting rejections.

    Codes: "magic", "version", "type", "length", "field", "canonical", "round", "group",
    "pseudonym", "digest"; PIC admission and links (issue 17): "view", "decrypt", "enrolment",
    "one-per-user", "replay", "closed", "signature", "count", "short", "bucket".

    Parameters
    ----------
    reason : str
        One of the codes above.
    message : str
        The one-line explanation.

    Examples
    --------
    >>> from shuffledp.errors import MessageFormatError, ProtocolError
    >>> exc = MessageFormatError("magic", "message does not start with b'PIC'")
    >>> exc.reason, isinstance(exc, ProtocolError), str(exc)
    ('magic', True, "message does not start with b'PIC'")
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason

    def __reduce__(self):  # keep ``reason`` across pickling (e.g. to worker processes)
        return (type(self), (self.reason, str(self)))


class PolicyError(ProtocolError, ValueError):
    """Signed round parameters fall outside the local policy a PIC client was given (issue 17).

    ``reason`` names the rule: "local-epsilon", "threshold", "task", "bucket-bits",
    "min-bucket-size", or "view" (the shuffler announced another parameter set: a split view).

    Examples
    --------
    >>> from shuffledp.errors import PolicyError
    >>> exc = PolicyError("threshold", "group users has threshold 1; this client needs at least 50")
    >>> exc.reason, isinstance(exc, ValueError)
    ('threshold', True)
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason

    def __reduce__(self):
        return (type(self), (self.reason, str(self)))


class OptionalDependencyError(ShuffleDPError, ImportError):
    """A feature needs an optional extra that is not installed; the message names the ``pip install`` line.

    A subclass of ``ImportError``, as Python raises for a missing module.

    Examples
    --------
    >>> issubclass(OptionalDependencyError, ImportError)
    True
    """


class AuditError(ShuffleDPError):
    """A randomizer failed an audit: its sampler does not realize the law it declares."""


class UnsupportedEventError(PrivacyParameterError):
    """An accountant cannot price this privacy event (wrong kind, or outside its method's regime)."""


class OutsideRegimeError(UnsupportedEventError):
    """The event is of a supported kind, but the method certifies no finite epsilon at these parameters."""


class PrivacyLevelError(ShuffleDPError, ValueError):
    """A privacy level that is not on the menu, a menu without levels, or a level nobody chose."""


class ValidityConditionError(OutsideRegimeError):
    """A theorem's validity condition fails (e.g. RR-Shuffle's lambda >= 14 log(4/delta)).

    ``minimum_n`` / ``maximum_epsilon`` / ``minimum_p`` say what would work, when known (else None).
    """

    def __init__(
        self,
        message: str,
        *,
        minimum_n: int | None = None,
        maximum_epsilon: float | None = None,
        minimum_p: float | None = None,
    ) -> None:
        super().__init__(message)
        self.minimum_n, self.maximum_epsilon, self.minimum_p = minimum_n, maximum_epsilon, minimum_p

    def __reduce__(self):  # keep the attributes across pickling
        return (_rebuild_validity_error, (str(self), self.minimum_n, self.maximum_epsilon, self.minimum_p))


def _rebuild_validity_error(message, minimum_n, maximum_epsilon, minimum_p):
    return ValidityConditionError(message, minimum_n=minimum_n, maximum_epsilon=maximum_epsilon, minimum_p=minimum_p)


class UnprovenBoundError(PrivacyParameterError):
    """A bound asked for with parameters its proof does not cover (e.g. the variation-ratio pair with a
    randomizer's own beta below tanh(eps0/2): docs/which-bound.md)."""


class NoCloneBoundError(PrivacyParameterError):
    """A randomizer family (or its parameters) for which no clone capacity is derived (issue 10)."""
