"""The count-law engine (accounting._count_law): the streamed leave-one-out laws are bit for bit the
prefix-suffix products they replace, and hold few laws at a time."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from shuffledp.accounting import _count_law as CL


def _prefix_suffix_reference(values, counts, cut):
    """The former implementation: every prefix and suffix product kept alive."""
    g = values.size
    share = cut / (4.0 * max(g, 1))
    leaves = [CL.binomial_count(int(m), float(q), share) for q, m in zip(values, counts)]
    minus = [CL.binomial_count(int(m) - 1, float(q), share) for q, m in zip(values, counts)]
    prefix, suffix = [CL.ONE], [CL.ONE]
    for leaf in leaves[:-1]:
        prefix.append(CL.trim(CL.convolve(prefix[-1], leaf), share))
    for leaf in leaves[:0:-1]:
        suffix.append(CL.trim(CL.convolve(suffix[-1], leaf), share))
    suffix.reverse()
    return [CL.trim(CL.convolve(CL.convolve(prefix[i], suffix[i]), minus[i]), share) for i in range(g)]


@pytest.mark.parametrize("g, users", [(1, 5), (2, 7), (17, 40), (120, 3000), (401, 5000)])
def test_streamed_leave_one_out_is_bit_for_bit_the_prefix_suffix_product(g, users):
    rng = np.random.default_rng(g)
    values = np.sort(rng.choice(np.linspace(0.02, 0.98, 2000), g, replace=False))
    counts = rng.multinomial(users - g, np.full(g, 1.0 / g)) + 1
    streamed = CL.leave_one_out(values, counts, 1e-14)
    assert not isinstance(streamed, list)  # a generator: laws are produced one at a time
    streamed = list(streamed)
    reference = _prefix_suffix_reference(values, counts, 1e-14)
    assert len(streamed) == g
    for a, b in zip(streamed, reference):
        assert (a.offset, a.rel, a.abs_err, a.missing, a.mu, a.var) == (
            b.offset,
            b.rel,
            b.abs_err,
            b.missing,
            b.mu,
            b.var,
        )
        assert np.array_equal(a.pmf, b.pmf)


def test_streamed_leave_one_out_holds_few_laws():
    values = np.linspace(0.05, 0.95, 2000)
    counts = np.ones(2000, dtype=np.int64)
    tracemalloc.start()
    try:
        for _ in CL.leave_one_out(values, counts, 1e-14):
            pass
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 6e6  # keeping every prefix and suffix (2 x 2000 laws of ~300 entries) takes ~10 MB more
