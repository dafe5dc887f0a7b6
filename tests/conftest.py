"""Test-suite settings shared by every test directory.

Hypothesis runs derandomized by default, so a failure reproduces on every run and
on every machine (the examples are derived from each test's source, not from a
random seed), with a bounded time per example and the reproduction blob printed.
``HYPOTHESIS_PROFILE=stress`` selects a larger, randomized exploration for a
manual or nightly run; it still honours a test's own ``max_examples``.
"""

import os

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
