"""The privacy ledger (PIC §5.2-5.3, §7, §8) priced through events and accountants."""

from __future__ import annotations

import json
import math

import pytest

from shuffledp.accounting import events as E
from shuffledp.accounting.accountants import VariationRatioAccountant
from shuffledp.accounting.bounds import shuffle_epsilon
from shuffledp.accounting.ledger import PrivacyLedger, anonymous_count, local_epsilon_for
from shuffledp.accounting.pld_accountant import PLDAccountant
from shuffledp.accounting.population import anonymous_population
from shuffledp.errors import PrivacyParameterError
from shuffledp.randomizers import MinkowskiResponse


def _record(ledger, round_id="r1", group="A", **kw):
    R = MinkowskiResponse(2.0, dim=2)
    args = dict(
        round_id=round_id,
        group=group,
        randomizer="minkowski",
        local_epsilon=2.0,
        params=R.amplification_parameters(),
        received=1_000,
        valid=990,
        corrupted=20,
        exposed=5,
    )
    args.update(kw)
    return ledger.record(**args)


def test_n_prime_follows_the_rules():
    assert anonymous_count(990, 20, 5) == (anonymous_population(990, 20, 5), "full download: n' = valid - |C| - |U|")
    # bucketed download: the victim hides among its bucket only; every corrupted user may be in it
    assert anonymous_count(990, 20, 5, bucket_bits=3, smallest_bucket=100)[0] == 75
    # a round that happened is priced even when |C| + |U| fill the pool: the victim alone (n' = 1), rule named
    n_prime, rule = anonymous_count(990, 200, 5, bucket_bits=3, smallest_bucket=100)
    assert n_prime == 1 and "bucketed download (b=3)" in rule and "pool of 100" in rule
    assert anonymous_count(10, 6, 4)[0] == 1 and anonymous_count(10, 6, 3)[0] == 1 and anonymous_count(0, 0, 0)[0] == 1
    assert anonymous_count(10, 5, 4) == (1, "full download: n' = valid - |C| - |U|")  # one left: the victim
    with pytest.raises(PrivacyParameterError, match="smallest_bucket"):
        anonymous_count(990, 20, 5, bucket_bits=3)


def test_row_prices_its_release_and_shows_eq1_beside_it():
    ledger = PrivacyLedger()
    row = _record(ledger)
    assert row.n_prime == 965 and row.delta == pytest.approx(0.01 / 1_000)  # §7's default delta
    assert row.epsilon_c() == shuffle_epsilon(965, row.delta, params=row.params)
    assert row.eq1_epsilon() == math.inf or row.eq1_epsilon() >= row.epsilon_c()
    invalid = _record(ledger, group="B", valid=900, invalid={"tampered": 60, "duplicate": 40})
    assert invalid.n_prime == 875 and invalid.epsilon_c() > row.epsilon_c()  # fewer valid reports: less amplification


def test_key_reuse_is_a_linked_event_and_rounds_compose():
    ledger = PrivacyLedger()
    first = _record(ledger)
    reused = _record(ledger, round_id="r2", key_reuse=3)
    assert reused.event == E.LinkedEvent(E.ShuffleEvent(reused.params, reused.n_prime), 3)
    assert reused.epsilon_c() > first.epsilon_c()
    total = ledger.user_epsilon("A", 1e-5)
    assert total == PLDAccountant().compose(E.ComposedEvent((first.event, reused.event))).get_epsilon(1e-5)
    assert max(r.epsilon_c(VariationRatioAccountant()) for r in ledger.rows) <= total


def test_ledger_round_trips_through_json_and_renders():
    ledger = PrivacyLedger()
    _record(ledger)
    _record(ledger, group="B", bucket_bits=2, smallest_bucket=200)
    text = ledger.to_json()
    back = PrivacyLedger.from_dict(json.loads(text))
    assert back.rows == ledger.rows
    assert ledger.table().row_count == 2


def test_server_budget_meets_the_target():
    family = lambda e: MinkowskiResponse(e, dim=2)  # noqa: E731
    eps = local_epsilon_for(1.0, 1e-5, 965, family)
    reached = VariationRatioAccountant().compose(family(eps).shuffle_event(965)).get_epsilon(1e-5)
    assert 1.0 * (1 - 1e-6) <= reached <= 1.0
    with pytest.raises(PrivacyParameterError, match="no local epsilon"):
        local_epsilon_for(1e-4, 1e-5, 10, family)


def test_bad_rows_are_named_errors():
    with pytest.raises(PrivacyParameterError, match="valid"):
        _record(PrivacyLedger(), valid=2_000)
    with pytest.raises(PrivacyParameterError, match="no round"):
        PrivacyLedger().user_event("Z")


def test_malformed_ledger_json_is_a_named_error():
    ledger = PrivacyLedger()
    _record(ledger)
    data = json.loads(ledger.to_json())
    data["rows"][0]["n_prime"] = 5_000  # does not follow from the counts
    with pytest.raises(PrivacyParameterError, match="does not follow"):
        PrivacyLedger.from_dict(data)
    del data["rows"][0]["valid"]
    with pytest.raises(PrivacyParameterError, match="malformed"):
        PrivacyLedger.from_dict(data)
    with pytest.raises(PrivacyParameterError, match="bucket_bits"):
        anonymous_count(10, 0, 0, bucket_bits=-1)


def test_ledger_inputs_are_checked_when_recorded():
    ledger = PrivacyLedger()
    _record(ledger)
    for kwargs, match in (
        (dict(group="B", local_epsilon=math.nan), "local_epsilon"),
        (dict(group="B", round_id=None), "round_id"),
        (dict(group="B", invalid={"x": -5}), "invalid"),
        (dict(group="B", invalid=[1]), "invalid"),
        (dict(), "already in the ledger"),
    ):
        with pytest.raises(PrivacyParameterError, match=match):
            _record(ledger, **kwargs)
    for bad in (None, [], {"rows": None}):
        with pytest.raises(PrivacyParameterError, match="ledger"):
            PrivacyLedger.from_dict(bad)
    with pytest.raises(PrivacyParameterError, match="not valid"):
        PrivacyLedger.from_json("{")
    assert PrivacyLedger.from_json(ledger.to_json()).rows == ledger.rows


def test_an_uncertifiable_row_is_shown_not_fatal():
    from shuffledp.params import VariationRatio

    ledger = PrivacyLedger()
    ledger.record(
        round_id="r",
        group="P",
        randomizer="poisson",
        local_epsilon=1.0,
        params=VariationRatio(math.inf, 0.5, 2.0, 2.0),
        received=10,
        valid=10,
        delta=1e-6,
    )
    assert ledger.table().row_count == 1


def test_an_uncertified_epsilon_is_inf_in_the_ledger_table_and_json_with_the_reason_under_the_table():
    """The one rule (shuffledp._util.numbers): infinity is "inf" in a cell and in JSON, never "n/a" or null."""
    from rich.console import Console

    from shuffledp.params import VariationRatio

    ledger = PrivacyLedger()
    ledger.record(round_id="r", group="P", randomizer="poisson", local_epsilon=1.0,
                  params=VariationRatio(math.inf, 0.5, 2.0, 2.0), received=10, valid=10, delta=1e-6)  # fmt: skip
    assert ledger.rows[0].eq1_epsilon() == math.inf  # Eq. 1 outside its regime too
    row = ledger.to_dict()["rows"][0]
    assert (row["epsilon_c"], row["eq1_epsilon"]) == ("inf", "inf")  # were null
    assert json.loads(ledger.to_json())["rows"][0]["eq1_epsilon"] == "inf"
    console = Console(width=200, record=True)
    console.print(ledger.table())
    text = console.export_text()
    line = next(line for line in text.splitlines() if line.startswith("│ r "))
    assert [cell.strip() for cell in line.split("│")[-3:-1]] == ["inf", "inf"]  # eps_c, Eq. 1: were "n/a"
    assert "n/a" not in text and "inf: the bound certifies nothing" in text
