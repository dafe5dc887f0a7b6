"""shuffledp: differential privacy in the shuffle model.

The common entry points are importable from the package itself::

    from shuffledp import shuffle_epsilon, shuffle_epsilon_lower, local_epsilon, VariationRatio
    from shuffledp import ShuffleDPError, PrivacyParameterError

Randomizers live in `shuffledp.randomizers`, the rest of the accounting in
`shuffledp.accounting`.  Everything but the errors is imported on first use, so
``import shuffledp`` stays cheap.
"""

from shuffledp._util.lazy import lazy_exports
from shuffledp.errors import (
    AnonymityThresholdError,
    ArgumentTypeError,
    CryptoError,
    DataError,
    DomainError,
    ExperimentError,
    ParameterTypeError,
    PrivacyParameterError,
    ProtocolError,
    ShapeError,
    ShuffleDPError,
    UnprovenBoundError,
)

_EXPORTS = {
    "VariationRatio": "shuffledp.params",
    "BlanketDecomposition": "shuffledp.params",
    "available_methods": "shuffledp.accounting.bounds",
    "shuffle_epsilon": "shuffledp.accounting.bounds",
    "shuffle_epsilon_lower": "shuffledp.accounting.bounds",
    "local_epsilon": "shuffledp.accounting.inverse",
}
_getattr, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


def _version() -> str:
    """The installed distribution's version (pyproject.toml is its single source)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("shuffledp")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


def __getattr__(name: str):
    if name == "__version__":
        globals()["__version__"] = value = _version()
        return value
    return _getattr(name)


__all__ = [
    "AnonymityThresholdError",
    "ArgumentTypeError",
    "CryptoError",
    "DataError",
    "DomainError",
    "ExperimentError",
    "ParameterTypeError",
    "PrivacyParameterError",
    "ProtocolError",
    "ShapeError",
    "ShuffleDPError",
    "UnprovenBoundError",
    *_EXPORTS,
]
