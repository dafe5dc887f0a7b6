"""Test-suite settings shared by every test directory.

Hypothesis runs derandomized by default, so a failure reproduces on every run and
on every machine (the examples are derived from each test's source, not from a
random seed), with a bounded time per example and the reproduction blob printed.
``HYPOTHESIS_PROFILE=stress`` selects a larger, randomized exploration for a
manual or nightly run; it still honours a test's own ``max_examples``.
"""

import gzip
import math
import os
import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "repeatable",
    derandomize=True,
    # generous: the accounting examples take up to a few seconds at large n on a busy machine
    deadline=30_000,
    print_blob=True,
    # a derandomized run has nothing to replay from the example database
    database=None,
)
settings.register_profile(
    "stress",
    derandomize=False,
    max_examples=1_000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


def _common_ratio(P: np.ndarray, eps0: float) -> float:
    """Common ratio of a transition matrix, straight from the definition (`BlanketDecomposition`).

    For each pair of inputs (x0, x1), with e = e^eps0, the victim's common part at output y is
    C(y) = min(P[x0, y], P[x1, y]) - |P[x0, y] - P[x1, y]|/(e - 1); every user's row must hold
    |P[x0, y] - P[x1, y]|/(e - 1) + C(y)/ratio at y.  The ratio is the smallest that does so for
    every row, pair and output (1 when there is no common part).  Written with plain loops,
    independently of `shuffledp.randomizers._decomposition`.
    """
    P = np.asarray(P, dtype=np.float64)
    em1 = math.expm1(eps0)
    blanket = [min(P[z, y] for z in range(P.shape[0])) for y in range(P.shape[1])]
    ratio = 1.0
    for i in range(P.shape[0]):
        for j in range(P.shape[0]):
            if i == j or np.array_equal(P[i], P[j]):
                continue
            for y in range(P.shape[1]):
                a, b = P[i, y], P[j, y]
                gap = abs(a - b) / em1
                common = min(a, b) - gap
                if common <= 1e-12 * max(a, b):  # none (k-RR's own columns, up to rounding)
                    continue
                room = blanket[y] - gap
                ratio = max(ratio, math.inf if room <= 0.0 else common / room)
    return ratio


@pytest.fixture
def common_ratio() -> Callable[[np.ndarray, float], float]:
    return _common_ratio


def _idx_bytes(magic_type: int, array: np.ndarray) -> bytes:
    """An IDX file's bytes: magic 00 00 <type> <ndim>, big-endian uint32 sizes, big-endian values."""
    dtype = {0x08: ">u1", 0x0B: ">i2", 0x0D: ">f4"}[magic_type]
    head = bytes([0, 0, magic_type, array.ndim]) + b"".join(struct.pack(">I", n) for n in array.shape)
    return head + array.astype(dtype).tobytes()


def _mnist_files(folder: Path, n: int = 5, gz: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Write n random 28x28 images and labels as MNIST's training IDX pair under ``folder``; return them."""
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, size=n, dtype=np.uint8)
    wrap = gzip.compress if gz else (lambda b: b)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train-images-idx3-ubyte").write_bytes(wrap(_idx_bytes(0x08, images)))
    (folder / "train-labels-idx1-ubyte").write_bytes(wrap(_idx_bytes(0x08, labels)))
    return images, labels


@pytest.fixture
def idx_bytes() -> Callable[[int, np.ndarray], bytes]:
    return _idx_bytes


@pytest.fixture
def mnist_files() -> Callable[..., tuple[np.ndarray, np.ndarray]]:
    return _mnist_files
