"""Set-valued data of the segmented paper §6: uniform synthetic sets, the UCI MSNBC format, the MSNBC-like stand-in."""

import itertools

import numpy as np
import pytest
from scipy import stats

from shuffledp.datasets.setvalued import (
    MAX_TABLE_ENTRIES,
    MSNBC_CATEGORIES,
    fix_set_size,
    item_frequencies,
    load_msnbc,
    msnbc_like_sets,
    read_msnbc,
    uniform_item_sets,
)
from shuffledp.errors import DataError, PrivacyParameterError

MSNBC_TEXT = """% Different categories found in input file:

frontpage news tech local opinion on-air misc weather msn-news health living business msn-sports sports summary bbs travel

% Sequences:

1 1
2
3 2 2 4 2 2 2 3 3
5
17 17 1 9
"""


def _distinct_in_domain(sets, d):
    assert sets.dtype == np.int64 and sets.min() >= 0 and sets.max() < d
    ordered = np.sort(sets, axis=1)
    assert not np.any(ordered[:, 1:] == ordered[:, :-1])


def test_uniform_item_sets_are_uniform_over_all_subsets():
    rng = np.random.default_rng(3)
    d, s, n = 5, 2, 20_000
    sets = uniform_item_sets(n, d, s, rng)
    assert sets.shape == (n, s)
    _distinct_in_domain(sets, d)
    # each of the C(5, 2) = 10 subsets equally likely: chi-square on the subset counts
    codes = (1 << sets).sum(axis=1)
    subsets = [sum(1 << j for j in c) for c in itertools.combinations(range(d), s)]
    observed = np.array([(codes == c).sum() for c in subsets])
    assert observed.sum() == n
    assert stats.chisquare(observed).pvalue > 1e-3


def test_uniform_item_sets_rejects_more_items_than_the_domain():
    with pytest.raises(DataError, match="s \\(items per user\\) must be at most d=4, got s=5"):
        uniform_item_sets(10, 4, 5)
    with pytest.raises(PrivacyParameterError, match="n must be an integer"):
        uniform_item_sets(0, 4, 2)


def test_read_msnbc_parses_the_uci_format(tmp_path):
    path = tmp_path / "msnbc990928.seq"
    path.write_text(MSNBC_TEXT)
    data = read_msnbc(path)
    assert len(data.categories) == MSNBC_CATEGORIES and data.categories[0] == "frontpage"
    assert [s.tolist() for s in data.sets] == [[0], [1], [1, 2, 3], [4], [0, 8, 16]]
    assert load_msnbc(root=tmp_path.parent / "nowhere", path=path).sets[2].tolist() == [1, 2, 3]


def test_load_msnbc_names_the_missing_file(tmp_path):
    with pytest.raises(DataError, match="msnbc990928.seq"):
        load_msnbc(root=tmp_path)


@pytest.mark.parametrize(
    "line, message",
    [("1 x 3", "must list category numbers"), ("0 2", "must lie in \\[1, 17\\]"), ("18", "must lie in \\[1, 17\\]")],
)
def test_read_msnbc_names_the_bad_line(tmp_path, line, message):
    path = tmp_path / "bad.seq"
    path.write_text(MSNBC_TEXT + line + "\n")
    with pytest.raises(DataError, match=f"bad.seq:12: .*{message}"):
        read_msnbc(path)


def test_fix_set_size_samples_large_sets_and_pads_small_ones():
    rng = np.random.default_rng(5)
    big, small = np.array([0, 1, 2, 3, 4, 5]), np.array([7])
    out = fix_set_size([big, small] * 3000, 10, 4, rng)
    _distinct_in_domain(out, 10)
    sampled, padded = out[0::2], out[1::2]
    assert np.isin(sampled, big).all()  # a subset of the user's own items
    assert (padded == 7).any(axis=1).all()  # the user's item is kept
    # random selection is uniform: each of the 6 items kept with probability 4/6
    assert stats.chisquare(np.bincount(sampled.ravel(), minlength=6)[:6]).pvalue > 1e-3
    # padding is uniform over the 9 items the user lacks: 3 of 9 each
    pad = padded[padded != 7]
    assert stats.chisquare(np.bincount(pad, minlength=10)[np.arange(10) != 7]).pvalue > 1e-3


def test_fix_set_size_rejects_items_outside_the_domain():
    with pytest.raises(DataError, match="sets\\[1\\] must hold items in \\[0, 16\\]"):
        fix_set_size([np.array([1]), np.array([17])], 17, 4)


def test_msnbc_like_sets_are_skewed_over_17_categories():
    rng = np.random.default_rng(11)
    sets = msnbc_like_sets(20_000, rng)
    assert sets.shape == (20_000, 4)
    _distinct_in_domain(sets, MSNBC_CATEGORIES)
    freq = item_frequencies(sets, MSNBC_CATEGORIES)
    assert freq.sum() == pytest.approx(4.0)
    # Zipf popularity: the first category is the most held, the order decreases (to sampling noise)
    assert freq[0] == freq.max() and freq[0] > freq[1] > freq[4] > freq[16]
    assert stats.spearmanr(np.arange(MSNBC_CATEGORIES), freq).statistic < -0.9


def test_item_frequencies_counts_users_per_item():
    assert item_frequencies(np.array([[0, 1], [1, 2]]), 4).tolist() == [0.5, 1.0, 0.5, 0.0]


@pytest.mark.parametrize(
    "content, where, message",
    [
        (b"\x80\x81 binary\n1 2\n", ":1: ", "ASCII text"),
        ("a b c\n1 2 caf\u00e9\n".encode("latin-1"), ":2: ", "ASCII text"),
        (b"a b\n1 99999999999999999999999\n", ":2: ", "must lie in \\[1, 2\\]"),
        (b"a b\n1 +2\n", ":2: ", "must list category numbers"),
        (b"a b\n1_0\n", ":2: ", "must list category numbers"),
    ],
)
def test_read_msnbc_names_file_and_line_for_undecodable_or_huge_tokens(tmp_path, content, where, message):
    path = tmp_path / "odd.seq"
    path.write_bytes(content)
    with pytest.raises(DataError, match=f"odd.seq{where}.*{message}"):
        read_msnbc(path)


def test_load_msnbc_refuses_a_path_that_is_not_a_path():
    with pytest.raises(DataError, match="path must be a file path \\(str or os.PathLike\\), got 3 of type int"):
        load_msnbc(3)
    with pytest.raises(DataError, match="root must be a file path"):
        load_msnbc(root=3)
    with pytest.raises(DataError, match="path must be a file path"):
        read_msnbc(None)


@pytest.mark.parametrize("make", [lambda n: uniform_item_sets(n, 128, 4), lambda n: msnbc_like_sets(n)])
def test_generators_cap_the_table_size_with_a_named_error(make):
    with pytest.raises(DataError, match="n \\* d must be at most 100,000,000 .*got n=1,000,000,000,000"):
        make(10**12)
    assert make(MAX_TABLE_ENTRIES // 128 // 1000).shape[1] == 4  # well below the cap: fine
