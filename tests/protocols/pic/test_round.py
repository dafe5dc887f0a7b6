"""One in-process PIC round: outputs equal F_PIC's, the privacy plan meets its target, refusals are priced."""

import math

import numpy as np
import pytest

from shuffledp.accounting import local_epsilon, matching_population, shuffle_epsilon
from shuffledp.datasets import synthetic_instance
from shuffledp.errors import PrivacyParameterError
from shuffledp.protocols.pic.computation import PicTask
from shuffledp.protocols.pic.round import RoundConfig, plan_groups, run_round
from shuffledp.randomizers import make_randomizer


def _groups(seed, n_users=60, n_workers=50):
    rng = np.random.default_rng(seed)
    inst = synthetic_instance(n_users, n_workers, rng)
    return [("users", inst.users), ("workers", inst.workers)], rng


@pytest.mark.parametrize("task", [PicTask("min-weight"), PicTask("max-matching"), PicTask("neighbors", k=3)])
def test_real_round_matches_the_ideal_functionality(task):
    groups, rng = _groups(11)
    groups = groups[: task.n_groups]
    config = RoundConfig(task, "minkowski", 1.0)
    real = run_round(groups, config, rng)
    assert real.metrics["outputs_verified"] is True and real.metrics["posts_verified"] is True
    groups2, rng2 = _groups(11)
    ideal = run_round(groups2[: task.n_groups], config, rng2, ideal=True)
    assert ideal.identity_outputs == real.identity_outputs  # every user, partner by partner
    assert ideal.outputs_digest() == real.outputs_digest()
    assert all(
        len(user) == (task.k if task.name == "neighbors" else user and 1 or 0) for user in real.identity_outputs[0]
    )


def test_matching_outputs_are_mutual_and_the_pairs_are_the_task_s():
    groups, rng = _groups(12)
    real = run_round(groups, RoundConfig(PicTask("min-weight"), "laplace", 2.0), rng)
    users, workers = real.identity_outputs
    assert sum(1 for u in users if u) == len(workers)  # the smaller group is fully matched
    for j, recs in enumerate(workers):
        ((g, i, _),) = recs
        assert g == 0 and users[i][0][:2] == (1, j)


def test_privacy_plan_meets_the_target_and_follows_section_5_3():
    config = RoundConfig(PicTask("max-matching"), "minkowski", 1.0, corrupted=5)
    params, plans = plan_groups(config, [("users", 400), ("workers", 300)])
    for g, p in zip(params, plans):
        n = p.n_i
        assert p.delta == pytest.approx(0.01 / n) and p.threshold == n
        assert p.exposure == 5 and p.n_prime_planned == matching_population(n, 5) == n - 10
        family = lambda e: make_randomizer("minkowski", e, dim=2)  # noqa: E731
        assert g.local_epsilon == p.local_epsilon == local_epsilon(1.0, n - 10, 0.01 / n, family=family)
        p.settle(n, n, {})
        R = make_randomizer("minkowski", p.local_epsilon, dim=2)
        assert p.epsilon_c == shuffle_epsilon(n - 10, 0.01 / n, params=R.amplification_parameters()) <= 1.0
        assert p.target_met and p.n_prime == n - 10
        assert p.epsilon_c_pic_eq1 == shuffle_epsilon(n - 10, 0.01 / n, eps0=p.local_epsilon, method="pic-eq1")
    neighbors = plan_groups(RoundConfig(PicTask("neighbors", k=4), "minkowski", 1.0, corrupted=3), [("u", 500)])[1][0]
    assert neighbors.exposure == 12 and neighbors.n_prime_planned == 500 - 3 - 12


def test_deanonymized_users_are_taken_off_every_groups_n_prime_planned_and_settled():
    config = RoundConfig(PicTask("min-weight"), "minkowski", 1.0, corrupted=2, deanonymized=1)
    _, plans = plan_groups(config, [("users", 400), ("workers", 300)])
    assert [(p.exposure, p.n_prime_planned) for p in plans] == [(3, 400 - 5), (3, 300 - 5)]
    assert all("1 user(s) assumed de-anonymised" in p.exposure_rule for p in plans)
    plans[0].settle(400, 400, {})
    assert plans[0].n_prime == 395
    neighbors = RoundConfig(PicTask("neighbors", k=4), "minkowski", 1.0, corrupted=3, deanonymized=2)
    assert plan_groups(neighbors, [("u", 500)])[1][0].n_prime_planned == 500 - 3 - 12 - 2
    with pytest.raises(PrivacyParameterError, match="deanonymized.*-1"):
        RoundConfig(PicTask("min-weight"), "minkowski", 1.0, deanonymized=-1)


def test_invalid_reports_lower_n_prime_and_are_priced():
    groups, rng = _groups(13)
    config = RoundConfig(PicTask("min-weight"), "minkowski", 1.0, min_fraction=0.9)

    def channel(group_id, envelopes):
        if group_id != 0:
            return envelopes
        bad = bytearray(envelopes[0])
        bad[-1] ^= 1
        return [bytes(bad), envelopes[1][:-3], *envelopes[2:], envelopes[2]]  # tampered, truncated, resent

    result = run_round(groups, config, rng, channel=channel)
    users = result.privacy[0]
    # the outer layer refuses the tampered submission at the shuffler; the resend is idempotent (not counted twice)
    assert result.metrics["shuffler_rejected"] == {"decrypt": 1, "length": 1}
    assert (users.received, users.valid_reports, users.invalid_reports) == (58, 58, {})
    assert users.threshold == 54 and users.n_prime == 58 and users.target_met
    assert result.metrics["users_without_output"] == 2 and result.metrics["outputs_verified"] is True
    # the ledger prices the same release (same n', same epsilon_c) and keeps the refusals
    row = result.ledger().rows[0]
    assert (row.valid, row.n_prime, row.invalid) == (58, 58, {})
    assert row.epsilon_c() == users.epsilon_c
    assert result.ledger().user_epsilon("users", users.delta) == users.epsilon_c  # one round: the round itself


def test_round_json_holds_no_secret_or_report(tmp_path):
    groups, rng = _groups(14, 20, 20)
    result = run_round(groups, RoundConfig(PicTask("min-weight"), "minkowski", 1.0), rng)
    text = repr(result.metrics) + repr([p.to_json() for p in result.privacy]) + repr(result.utility)
    for row in result.identity_outputs[0]:
        for _, _, report in row:
            assert report.hex() not in text


def test_too_few_users_for_k_neighbours_is_named():
    from shuffledp.errors import DomainError

    with pytest.raises(DomainError, match="k=5 neighbours need more than 5 users in group users, whose threshold is 5"):
        plan_groups(RoundConfig(PicTask("neighbors", k=5), "minkowski", 1.0), [("users", 5)])


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("epsilon_c", math.nan, r"epsilon_c must be a number in \[2\^-52, inf\); got nan"),
        ("epsilon_c", -1.0, "epsilon_c must be"),
        ("delta", 0.0, r"delta must be a number in \(0, 1\); got 0.0"),
        ("suite", "foo", "suite must be one of"),
        ("randomizer", "foo", "randomizer must be one of"),
        ("corrupted", -1, "corrupted"),
        ("bucket_bits", 17, "bucket_bits"),
        ("min_bucket_size", 0, "min_bucket_size"),
        ("min_fraction", 0.0, "min_fraction"),
    ],
)
def test_a_bad_round_config_is_refused_by_field_name(field, value, message):
    from shuffledp.errors import ShuffleDPError

    args = {"task": PicTask("min-weight"), "randomizer": "minkowski", "epsilon_c": 1.0} | {field: value}
    with pytest.raises(ShuffleDPError, match=message):
        RoundConfig(**args)


def test_unreachable_target_names_the_field():
    with pytest.raises(PrivacyParameterError, match=r"epsilon_c 0.0001 is unreachable for group users \(n'=20"):
        plan_groups(RoundConfig(PicTask("neighbors"), "minkowski", 1e-4, delta=1e-15), [("users", 20)])


def test_no_secret_key_or_report_in_logs_or_round_json(monkeypatch, caplog):
    """Every one-time secret, the server's secrets and every report x' stay out of logs and round.json."""
    import json
    import logging

    from shuffledp.protocols.pic import messages, server
    from shuffledp.protocols.pic.round import round_report

    keys, server_keys = [], []
    real_generate = messages.OneTimeKeys.generate.__func__
    monkeypatch.setattr(
        messages.OneTimeKeys, "generate", classmethod(lambda cls, s: keys.append(real_generate(cls, s)) or keys[-1])
    )
    real_init = server.Server.__init__

    def init(self, *a, **kw):
        real_init(self, *a, **kw)
        server_keys.append((self._kem.secret_bytes(), self.identity.signing_key.secret_bytes()))

    monkeypatch.setattr(server.Server, "__init__", init)
    caplog.set_level(logging.DEBUG)
    groups, rng = _groups(15, 25, 20)
    result = run_round(groups, RoundConfig(PicTask("min-weight"), "minkowski", 1.0), rng)
    text = json.dumps(round_report(result, dataset="synthetic")) + caplog.text
    secrets = [k.kem.secret_bytes() for k in keys] + [k.signing.secret_bytes() for k in keys]
    secrets += [s for pair in server_keys for s in pair]
    reports = [x for group in result.identity_outputs for user in group for _, _, x in user]
    assert len(keys) == 45 and len(reports) == 40
    for blob in secrets + reports:
        assert blob.hex() not in text and blob[:12].hex() not in text and repr(blob)[2:30] not in text


def test_parallel_decryption_gives_the_same_valid_reports(monkeypatch):
    from shuffledp.protocols.pic import server as server_module

    monkeypatch.setattr(server_module, "PARALLEL_MIN", 1)
    groups, rng = _groups(16, 30, 30)
    result = run_round(groups, RoundConfig(PicTask("max-matching"), "minkowski", 1.0, workers=2), rng)
    assert result.metrics["outputs_verified"] is True
    assert [p.valid_reports for p in result.privacy] == [30, 30]
