"""shuffledp: differential privacy in the shuffle model."""

__version__ = "0.1.0"
