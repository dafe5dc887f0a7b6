"""One full PIC round in process (pic-usenix25 §5.1 steps 1-6, Remark 3), and its privacy per group.

`plan_groups` turns a target (epsilon_c, delta) into each group's local
epsilon (Amplify^-1, `local_epsilon`, with the group
randomizer's own amplification parameters) for the population n' that stays
anonymous (§5.2-5.3); `run_round` then runs the roles over bytes (the round as a sequence
of messages, README "PIC"): the shuffler's keys -> the server's signed parameters -> the
shuffler's view announcement -> each enrolled client's submission (two HPKE layers) ->
one signed batch per group -> the server's signed board -> each client's output -> posts
between mutual partners.  It then checks every output against an independent evaluation of
F_PIC (`.ideal`) on the reports the clients submitted (not on the server's list), so a
server that alters or drops reports is caught.  ``ideal=True`` runs F_PIC alone (no
cryptography) for fast simulation.

Privacy-conservative choices: each group's local epsilon is calibrated for the
*smallest* group the shuffler may release (its threshold), and the recorded
epsilon_c uses the reports that were actually *valid* (an invalid report hides no
one); if invalid reports push n' below the plan, ``target_met`` is False.
"""

from __future__ import annotations

import hashlib
import math
import secrets
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

import numpy as np

from shuffledp._util.numbers import json_value
from shuffledp._util.progress import ProgressReporter
from shuffledp._util.timing import accumulate
from shuffledp._util.validation import check_epsilon, check_positive_int, check_probability
from shuffledp.accounting import anonymous_population, local_epsilon, shuffle_epsilon
from shuffledp.accounting.ledger import PrivacyLedger, anonymous_count
from shuffledp.accounting.release import bound_name
from shuffledp.crypto import get_suite
from shuffledp.errors import DomainError, PrivacyParameterError, ShuffleDPError
from shuffledp.protocols.pic.bulletin import BulletinBoard, bucket_of
from shuffledp.protocols.pic.client import Client, ClientPolicy, VerifiedDownloads
from shuffledp.protocols.pic.computation import PicTask, decode_output, decode_value
from shuffledp.protocols.pic.ideal import ideal_pic
from shuffledp.protocols.pic.identity import SigningIdentity
from shuffledp.protocols.pic.messages import MAX_BUCKET_BITS, GroupParams, Pseudonym, RoundParams
from shuffledp.protocols.pic.reports import group_randomizer, report_format, report_range
from shuffledp.protocols.pic.server import Server
from shuffledp.protocols.pic.shuffler import ADMITTED, Shuffler
from shuffledp.randomizers import MinkowskiResponse
from shuffledp.randomizers.registry import available_randomizers, make_randomizer
from shuffledp.shuffle_audit import minkowski_lower_delta
from shuffledp.tasks import (
    Matching,
    Neighbors,
    k_nearest_neighbors,
    min_weight_matching,
    neighbor_scores,
    radius_matching,
    shapley_error,
    shapley_values,
    success_ratio,
    travel_cost,
)

#: Bytes of the post each user sends to each partner in a simulated round.
POST_SIZE = 16
#: The sybil assumption n' relies on (issue 17, item 4), stated in every round record.
ADMISSION_RULE = (
    "the shuffler admits one submission per enrolled user per round and group and releases a group only when "
    "its distinct admitted users meet the threshold; n' counts enrolled identities, so it assumes enrolment "
    "gives one identity per person (sybils are bounded by enrolment, not by the protocol)"
)


#: Largest n' whose independent check runs (the three-cell histogram law has about n'^2 / 2 states).
_CHECK_MAX_N = 20_000


@dataclass
class GroupPrivacy:
    """The privacy record of one group of one round (plain data; JSON via `to_json`).

    ``n_i`` users registered; the shuffler released ``received`` envelopes, of which
    ``valid_reports`` passed the server's checks (``invalid_reports`` by reason).  With
    ``corrupted`` = |C| assumed colluding with the server and ``exposure`` = |U| users
    de-anonymised after the computation (§5.3, ``exposure_rule``), the anonymous
    population is ``n_prime = |valid| - |C| - |U|`` (``n_prime_planned`` from the
    ``threshold`` the local epsilon was calibrated for).  ``epsilon_c`` is the upper
    bound proven for the randomizer's own parameters at ``n_prime`` and ``delta``, and
    ``method`` names it (docs/which-bound.md); ``epsilon_c_pic_eq1`` is PIC Eq. 1 at the same
    point (infinite outside its regime: written "inf" like every infinite epsilon).  ``check_delta`` is an independent *lower* bound on the
    true delta at ``epsilon_c`` (Minkowski Response: `shuffle_audit.minkowski_lower_delta`, a
    discretisation of the real output), so ``check_passed`` = check_delta <= delta says the
    bound survived a check it could fail; None for other randomizers.
    """

    group_id: int
    name: str
    randomizer: str
    n_i: int
    threshold: int
    corrupted: int
    exposure: int
    exposure_rule: str
    n_prime_planned: int
    target_epsilon: float
    delta: float
    local_epsilon: float
    randomizer_params: dict[str, Any] = field(default_factory=dict)
    received: int = 0
    valid_reports: int = 0
    invalid_reports: dict[str, int] = field(default_factory=dict)
    n_prime: int = 0
    epsilon_c: float = math.inf
    epsilon_c_pic_eq1: float = math.inf
    method: str = ""
    target_met: bool = False
    check_delta: float | None = None
    check_passed: bool | None = None
    bucket_bits: int = 0
    smallest_bucket: int | None = None
    n_prime_rule: str = ""
    admission: str = ADMISSION_RULE

    def settle(
        self,
        received: int,
        valid: int,
        invalid: dict[str, int],
        bucket_bits: int = 0,
        smallest_bucket: int | None = None,
    ) -> None:
        """Record the round's counts and price the group at the population that stayed valid.

        n' is the ledger's (`anonymous_count`: the bucket rule for a bucketed board, and never
        below 1, the victim itself), so the round record and the ledger always agree.
        """
        self.received, self.valid_reports, self.invalid_reports = received, valid, dict(invalid)
        self.bucket_bits, self.smallest_bucket = bucket_bits, smallest_bucket
        self.n_prime, self.n_prime_rule = anonymous_count(
            valid, self.corrupted, self.exposure, bucket_bits, smallest_bucket
        )
        R = make_randomizer(self.randomizer, self.local_epsilon, **self.randomizer_params)
        params = R.amplification_parameters()
        self.method = bound_name(params)
        self.epsilon_c = shuffle_epsilon(self.n_prime, self.delta, params=params)
        self.epsilon_c_pic_eq1 = shuffle_epsilon(self.n_prime, self.delta, eps0=self.local_epsilon, method="pic-eq1")
        self.target_met = self.epsilon_c <= self.target_epsilon
        if isinstance(R, MinkowskiResponse) and math.isfinite(self.epsilon_c) and self.n_prime <= _CHECK_MAX_N:
            self.check_delta = minkowski_lower_delta(R, self.n_prime, self.epsilon_c)
            self.check_passed = self.check_delta <= self.delta

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (`shuffledp._util.numbers.json_value`: an infinite epsilon_c is written "inf")."""
        return json_value(asdict(self))


def _population(task: PicTask, n: int, corrupted: int, deanonymized: int = 0) -> tuple[int, int, str]:
    """(n', |U|, rule) for a group of n under ``task`` with |C| = ``corrupted``, and ``deanonymized`` more
    users assumed exposed beyond the task's own |U| (`RoundConfig.deanonymized`)."""
    exposure = task.exposure(corrupted) + deanonymized
    extra = f"; plus {deanonymized} user(s) assumed de-anonymised (RoundConfig.deanonymized)" if deanonymized else ""
    if task.n_groups == 2:  # exposure(|C|) = |C|: n' = |G| - 2|C| (`matching_population`), less ``deanonymized``
        return anonymous_population(n, corrupted, exposure), exposure, "one-to-one matching: |U| <= |C| (§5.3)" + extra
    if not task.has_partners:
        rule = f"{task.name}: outputs name no partner and no posts are exchanged, |U| = 0 (§5.3, §7.3)"
        return anonymous_population(n, corrupted, exposure), exposure, rule + extra
    rule = f"k = {task.k} neighbours each, posts between mutual partners only: |U| <= k|C|"
    return anonymous_population(n, corrupted, exposure), exposure, rule + extra


@dataclass(frozen=True)
class RoundConfig:
    """What a round runs: the task, each group's randomizer, the target, the suite and the adversary assumed.

    ``validation`` is the server's private input of a ``shapley`` round (the validation gradient v of
    §7.3 / Appendix E, ``dim`` numbers: ``dim`` is the model dimension there); it is handed to the
    `Server` and to F_PIC, never signed or published.  Other tasks take none.

    ``deanonymized`` adds that many users to every group's |U| (§5.3) beyond what the task's rule gives,
    lowering n' by as many: PIC Appendix B prices its crowdsourcing rounds at n' = n_i - 1, i.e. 1.

    Examples
    --------
    A federated-learning round with incentives (§7.3): each of 8 users holds a gradient in [-1, 1]^5
    (clipped and scaled into the randomizer's domain), and receives its Shapley value:

    >>> import numpy as np
    >>> from shuffledp.protocols.pic import PicTask, RoundConfig, run_round
    >>> rng = np.random.default_rng(0)
    >>> G, v = rng.uniform(-1, 1, (8, 5)), rng.uniform(-1, 1, 5)
    >>> config = RoundConfig(PicTask("shapley"), "laplace", 4.0, dim=5, validation=v)
    >>> result = run_round([("users", G)], config, rng, ideal=True)
    >>> len(result.values[0]), result.privacy[0].exposure
    (8, 0)
    """

    task: PicTask
    randomizer: str
    epsilon_c: float
    delta: float | None = None  # None: 0.01 / n_i per group (§7)
    suite: str = "x25519"
    corrupted: int = 0
    min_fraction: float = 1.0  # shuffler threshold = ceil(min_fraction * n_i)
    dim: int = 2
    workers: int = 1
    bucket_bits: int = 0  # Remark 2: clients download only their bucket; the board uses at most this many bits
    min_bucket_size: int = 10  # ... and never a bucket with fewer entries (signed in the round parameters)
    validation: Any = field(default=None, compare=False, repr=False)  # the server's v (shapley only; private)
    # |U| assumed beyond the task's own rule in every group (PIC Appendix B prices crowdsourcing with one: n_i - 1)
    deanonymized: int = 0

    def __post_init__(self) -> None:
        """Refuse a bad value here, by field name, not later inside the round."""
        if not isinstance(self.task, PicTask):
            raise DomainError(f"task must be a PicTask, got {type(self.task).__name__}")
        if self.randomizer not in available_randomizers():
            raise DomainError(f"randomizer must be one of {available_randomizers()}, got {self.randomizer!r}")
        object.__setattr__(self, "epsilon_c", check_epsilon(self.epsilon_c, "epsilon_c"))
        if self.delta is not None:
            object.__setattr__(self, "delta", check_probability(self.delta, "delta"))
        get_suite(self.suite)
        object.__setattr__(self, "corrupted", check_positive_int(self.corrupted, "corrupted", minimum=0))
        object.__setattr__(self, "deanonymized", check_positive_int(self.deanonymized, "deanonymized", minimum=0))
        object.__setattr__(self, "dim", check_positive_int(self.dim, "dim"))
        object.__setattr__(self, "workers", check_positive_int(self.workers, "workers"))
        object.__setattr__(
            self, "bucket_bits", check_positive_int(self.bucket_bits, "bucket_bits", minimum=0, maximum=MAX_BUCKET_BITS)
        )
        object.__setattr__(self, "min_bucket_size", check_positive_int(self.min_bucket_size, "min_bucket_size"))
        if not (isinstance(self.min_fraction, (int, float)) and 0.0 < self.min_fraction <= 1.0):
            raise PrivacyParameterError(f"min_fraction must lie in (0, 1], got {self.min_fraction!r}")
        object.__setattr__(self, "validation", self.task.check_validation(self.validation, self.dim))


def plan_groups(config: RoundConfig, sizes: Sequence[tuple[str, int]]) -> tuple[list[GroupParams], list[GroupPrivacy]]:
    """Step 1's privacy plan: per group (name, n_i), its threshold, n', delta and the local epsilon."""
    if len(sizes) != config.task.n_groups:
        raise DomainError(f"task {config.task.name} needs {config.task.n_groups} group(s), got {len(sizes)}")
    kwargs = {"dim": config.dim}
    family = lambda eps0: make_randomizer(config.randomizer, eps0, **kwargs)  # noqa: E731
    fmt = report_format(family(1.0))
    groups, plans = [], []
    for gid, (name, n) in enumerate(sizes):
        threshold = max(1, math.ceil(config.min_fraction * n))
        if config.task.name == "neighbors" and threshold <= config.task.k:
            raise DomainError(
                f"k={config.task.k} neighbours need more than {config.task.k} users in group {name}, whose threshold is {threshold}"
            )
        delta = config.delta if config.delta is not None else 0.01 / n
        n_prime, exposure, rule = _population(config.task, threshold, config.corrupted, config.deanonymized)
        try:
            eps0 = local_epsilon(config.epsilon_c, n_prime, delta, family=family)
        except PrivacyParameterError as exc:
            raise PrivacyParameterError(
                f"epsilon_c {config.epsilon_c:g} is unreachable for group {name} (n'={n_prime}, delta={delta:g}): {exc}"
            ) from None
        groups.append(GroupParams(gid, name, config.randomizer, eps0, fmt, threshold, delta, kwargs))
        record = GroupPrivacy(gid, name, config.randomizer, n, threshold, config.corrupted, exposure, rule,
                              n_prime, config.epsilon_c, delta, eps0, dict(kwargs))  # fmt: skip
        plans.append(record)
    return groups, plans


@dataclass
class RoundResult:
    """Everything a round produced that may be published: no key, no report, no plaintext."""

    privacy: list[GroupPrivacy]
    identity_outputs: list[list[list[tuple[int, int, bytes]]]]  # [group][user] -> [(partner group, user, x' bytes)]
    metrics: dict[str, Any]
    utility: dict[str, float]
    values: list[list[float | None]] = field(default_factory=list)  # shapley: [group][user] -> value (None: no output)

    def ledger(self, round_id: str = "round-1") -> PrivacyLedger:
        """The round in the privacy ledger: one row (a priced event) per group, with the counts that set n'."""
        ledger = PrivacyLedger()
        for p in self.privacy:
            R = make_randomizer(p.randomizer, p.local_epsilon, **p.randomizer_params)
            ledger.record(
                round_id=round_id,
                group=p.name,
                randomizer=p.randomizer,
                local_epsilon=p.local_epsilon,
                params=R.amplification_parameters(),
                received=p.received,
                valid=p.valid_reports,
                corrupted=p.corrupted,
                exposed=p.exposure,
                delta=p.delta,
                invalid=p.invalid_reports,
                bucket_bits=p.bucket_bits,
                smallest_bucket=p.smallest_bucket,
            )
        return ledger

    def outputs_digest(self) -> str:
        """SHA-256 over every user's output in identity form (partner user and report), in user order."""
        h = hashlib.sha256()
        for group in self.identity_outputs:
            for records in group:
                h.update(len(records).to_bytes(2, "big"))
                for g, j, report in records:
                    h.update(g.to_bytes(2, "big") + j.to_bytes(8, "big") + report)
        for group_values in self.values:  # shapley rounds: every user's value (NaN stands for no output)
            h.update(np.array([math.nan if x is None else x for x in group_values], dtype=">f8").tobytes())
        return h.hexdigest()


def round_report(result: RoundResult, **inputs: Any) -> dict[str, Any]:
    """The JSON record of a round (``round.json``): the inputs given, sizes, timings, privacy per group,
    utility and verification, numbers by the one JSON rule (`shuffledp._util.numbers.json_value`: infinity
    "inf").  Holds no key, report or plaintext (only a digest of the outputs)."""
    m = result.metrics
    by_group = lambda attr: {p.name: getattr(p, attr) for p in result.privacy}  # noqa: E731
    report = {
        **inputs,
        "n_per_group": by_group("n_i"),
        **{
            key: m.get(key)
            for key in (
                "message_bytes",
                "inner_envelope_bytes",
                "board_bytes",
                "client_prepare_us",
                "shuffler_unwrap_us_per_envelope",
                "server_decrypt_us_per_message",
                "task_ms",
                "board_bucket_bits",
                "refused",
            )
        },  # fmt: skip
        "local_epsilon": by_group("local_epsilon"),
        "epsilon_c": by_group("epsilon_c"),
        "delta": by_group("delta"),
        "n_prime": by_group("n_prime"),
        "invalid_reports": by_group("invalid_reports"),
        "outputs_verified": m["outputs_verified"],
        "posts_verified": m["posts_verified"],
        "outputs_digest": result.outputs_digest(),
        "utility": result.utility,
        "privacy": [p.to_json() for p in result.privacy],
        "ledger": result.ledger().to_dict(),
        "metrics": m,
    }
    return json_value(report)


def _timed(metrics: dict[str, float], key: str, func: Callable[[], Any]) -> Any:
    """Run ``func``; add its CPU seconds (this thread, one core) under ``key`` and its wall seconds under ``key_wall``.

    Per-role costs are reported in CPU time of the calling thread (`shuffledp._util.timing`; a progress bar's
    refresh thread is not charged): on a shared machine wall time measures the
    neighbours' load as much as the protocol (gMission's 105-211 us/report of issue 17 were
    wall time at a load average of 4-5 on 2 cores; the CPU time is ~45 us at every size).
    """
    return accumulate(metrics, key, func)


class _CountingBoard:
    """The board as one client reads it (`Client.fetch_output`), counting the bytes of every download."""

    def __init__(self, board: BulletinBoard) -> None:
        self.board, self.bytes = board, 0

    def head(self, round_id: bytes) -> bytes:
        data = self.board.head(round_id)
        self.bytes += len(data)
        return data

    def download_bucket(self, round_id: bytes, bucket: int) -> bytes:
        data = self.board.download_bucket(round_id, bucket)
        self.bytes += len(data)
        return data


def run_round(
    groups: Sequence[tuple[str, np.ndarray]],
    config: RoundConfig,
    rng: np.random.Generator,
    *,
    ideal: bool = False,
    channel: Callable[[int, list[bytes]], list[bytes]] | None = None,
    progress: ProgressReporter | None = None,
) -> RoundResult:
    """Run one round on the true inputs ``groups = [(name, X_i)]`` (each row one user).

    ``channel(group_id, submissions)`` stands for the network between users and the
    shuffler (tests use it to tamper, drop, replay or duplicate); refusals are counted,
    never fatal.  Randomization draws from ``rng`` in group order, so the same seed gives
    the same reports x' with and without ``ideal``.
    """
    progress = progress or ProgressReporter(enabled=False)
    task = config.task
    param_groups, privacy = plan_groups(config, [(name, len(X)) for name, X in groups])
    fmt = param_groups[0].report
    t: dict[str, float] = {}
    start = time.perf_counter()
    randomize = lambda: [group_randomizer(g).randomize(X, rng) for g, (_, X) in zip(param_groups, groups, strict=True)]  # noqa: E731
    reports = _timed(t, "randomize_s", randomize)  # vectorised over each group's users: part of their prepare time
    if ideal:
        params = _ideal_params(config, param_groups)
        P = Pseudonym.size(config.suite)
        pseudonyms = [[secrets.token_bytes(P) for _ in X] for X in reports]
        inputs = {
            g.group_id: (_as_rows(ps, P), Xp) for g, ps, Xp in zip(param_groups, pseudonyms, reports, strict=True)
        }
        result = _timed(
            t, "round_s", lambda: ideal_pic(params, task, inputs, randomized=True, validation=config.validation)
        )
        outputs = [result.outputs[g.group_id] for g in param_groups]
        for rec, Xp in zip(privacy, reports, strict=True):
            rec.settle(len(Xp), len(Xp), {})
        metrics = {"round_seconds": t["round_s"], "outputs_verified": None, "posts_verified": None}
        owners = {p: (g, j) for g, ps in enumerate(pseudonyms) for j, p in enumerate(ps)}
        return _finish(groups, config, privacy, outputs, owners, fmt, metrics)

    # step 0: the shuffler's round keys, the server's parameters naming them, the shuffler's view
    shuffler_identity = SigningIdentity.ephemeral()
    server_identity = SigningIdentity.ephemeral()
    shuffler = Shuffler(server_identity.verify_key, suite=config.suite, identity=shuffler_identity)
    server = Server(config.suite, param_groups, task, (shuffler.kem_public_key, shuffler.verify_key),
                    identity=server_identity, post_payload_size=POST_SIZE, bucket_bits=config.bucket_bits,
                    min_bucket_size=config.min_bucket_size, workers=config.workers,
                    validation=config.validation)  # fmt: skip
    params = server.params
    signed = server.signed_params()
    board = BulletinBoard(server.verify_key)
    board.publish_view(shuffler.open(signed))
    view = board.view(params.round_id)
    policy = ClientPolicy(max(g.local_epsilon for g in param_groups), min(g.threshold for g in param_groups),
                          (task.name,), config.bucket_bits, config.min_bucket_size)  # fmt: skip
    downloads = VerifiedDownloads(server.verify_key, shuffler.verify_key)  # shared by the simulated users
    clients: list[list[Client]] = []
    admitted: set[int] = set()
    for g, Xp in zip(param_groups, reports, strict=True):
        row: list[Client] = []
        submissions = []
        for x in progress.track(Xp, f"clients of {g.name}: keys, two seals"):
            c = Client(server.verify_key, g.group_id, shuffler_key=shuffler.verify_key,
                       credential=shuffler.enrolment.enroll(), policy=policy, downloads=downloads)  # fmt: skip
            _timed(t, "join_s", partial(c.join, signed, view))
            submissions.append(_timed(t, "seal_s", partial(c.seal, x)))
            row.append(c)
        clients.append(row)
        owner = {s: c for s, c in zip(submissions, row, strict=True)}
        if channel is not None:
            submissions = channel(g.group_id, submissions)
        for sub in submissions:
            try:
                status = _timed(t, "shuffle_s", partial(shuffler.submit, sub))
            except ShuffleDPError:
                continue  # counted by the shuffler
            if status == ADMITTED and sub in owner:
                admitted.add(id(owner[sub]))  # the client holds its receipt
    batch_bytes = 0
    with progress.status("server: verify batches, decrypt, validate, compute f(L), seal the board"):
        for g in param_groups:
            batch = _timed(t, "shuffle_s", partial(shuffler.release, g.group_id))
            batch_bytes += len(batch)
            _timed(t, "decrypt_s", partial(server.receive, batch))
        board_bytes = _timed(t, "publish_s", server.publish)
    board.publish(board_bytes)
    download = board.download(params.round_id)
    missing, downloaded = 0, 0
    for row in clients:
        for c in progress.track(row, "clients: verify board, decrypt output"):
            reader = _CountingBoard(board)
            try:
                if config.bucket_bits:
                    _timed(t, "retrieve_s", partial(c.fetch_output, reader))
                else:
                    reader.bytes = len(download)
                    _timed(t, "retrieve_s", partial(c.retrieve, download))
            except ShuffleDPError:
                missing += 1  # the user's report was refused on the way: no output
            downloaded += reader.bytes
    round_seconds = time.perf_counter() - start
    head = board.head(params.round_id)
    bits = server.board_bucket_bits or 0
    for rec, g in zip(privacy, param_groups, strict=True):
        d = server._received[g.group_id]
        rec.settle(d.received, d.valid, d.rejected, bits, _smallest_bucket(d, bits) if bits else None)

    verified = _independent_check(params, task, clients, admitted, config.validation)
    post_stats: dict[str, float] = {}
    posts_ok = _timed(t, "posts_s", lambda: _exchange_posts(clients, board, params.round_id, progress, post_stats))

    n_users = sum(len(row) for row in clients)
    received = sum(d.received for d in server._received.values())
    valid = sum(d.valid for d in server._received.values())
    n_submitted = sum(len(row) for row in clients)
    t["client_s"] = t["randomize_s"] + t["join_s"] + t["seal_s"]
    t["client_s_wall"] = t["randomize_s_wall"] + t["join_s_wall"] + t["seal_s_wall"]
    n_posts = max(1, int(post_stats.get("posts", 0)))
    metrics = {
        "round_seconds": round_seconds,
        "client_prepare_us": 1e6 * t["client_s"] / n_users,
        "client_randomize_us": 1e6 * t["randomize_s"] / n_users,
        "client_join_us": 1e6 * t["join_s"] / n_users,
        "client_seal_us": 1e6 * t["seal_s"] / n_users,
        "shuffler_unwrap_us_per_envelope": 1e6 * t.get("shuffle_s", 0.0) / max(1, n_submitted),
        "server_decrypt_us_per_message": 1e6 * t["decrypt_s"] / max(1, received),
        "wall_us": {"client_prepare": 1e6 * t["client_s_wall"] / n_users,
                    "shuffler_unwrap_per_envelope": 1e6 * t.get("shuffle_s_wall", 0.0) / max(1, n_submitted),
                    "server_decrypt_per_message": 1e6 * t["decrypt_s_wall"] / max(1, received)},
        "timing": "per-role costs are CPU time of the calling thread on one core (time.thread_time); wall_us beside them",
        "task_ms": 1e3 * server.timings["task_s"],
        "task_cpu_ms": 1e3 * server.timings["task_cpu_s"],
        "board_seal_us_per_entry": 1e6 * server.timings["seal_s"] / max(1, valid),
        "board_seal_cpu_s": server.timings["seal_cpu_s"],
        "server_decrypt_cpu_s": t["decrypt_s"],
        "client_retrieve_us": 1e6 * t.get("retrieve_s", 0.0) / n_users,
        "client_download_bytes": downloaded / n_users,
        "posts_seconds": t["posts_s"],
        "posts_sent": int(post_stats.get("posts", 0)),
        "post_create_us": 1e6 * post_stats.get("create_s", 0.0) / n_posts,
        "post_read_us": 1e6 * post_stats.get("read_s", 0.0) / n_posts,
        "post_bytes": int(post_stats.get("bytes", 0)),
        "message_bytes": params.envelope_size,
        "inner_envelope_bytes": params.inner_size,
        "batch_bytes": batch_bytes,
        "board_bytes": len(board_bytes),
        "board_head_bytes": len(head),
        "board_bucket_bits": bits,
        "refused": {"shuffler": dict(shuffler.rejected), "server_batches": dict(server.refused_batches),
                    "server_reports": {g.name: dict(server._received[g.group_id].rejected) for g in param_groups}},
        "shuffler_rejected": dict(shuffler.rejected),
        "users_without_output": missing,
        "outputs_verified": verified,
        "posts_verified": posts_ok,
    }  # fmt: skip
    owners = {c.pseudonym.to_bytes(): (g, j) for g, row in enumerate(clients) for j, c in enumerate(row)}
    outputs = [[c.output for c in row] for row in clients]
    return _finish(groups, config, privacy, outputs, owners, fmt, metrics)


def _ideal_params(config: RoundConfig, param_groups: list[GroupParams]) -> RoundParams:
    """Round parameters for F_PIC alone (fresh keys nobody uses; ideal_pic reads the groups and sizes)."""
    from shuffledp.crypto import KemKeyPair

    kem = KemKeyPair.generate(config.suite).public_key
    a, b = SigningIdentity.ephemeral().verify_key, SigningIdentity.ephemeral().verify_key
    return RoundParams(
        bytes(16), config.suite, kem, a, tuple(param_groups), 0, POST_SIZE, kem, b, config.task.to_json()
    )


def _smallest_bucket(d: Any, bits: int) -> int:
    """Fewest entries of one group in any board bucket that holds some (the group's retrieval anonymity set)."""
    counts = Counter(bucket_of(p.to_bytes(), bits) for p in d.pseudonyms)
    return min(counts.values()) if counts else 0


def _independent_check(
    params: RoundParams,
    task: PicTask,
    clients: list[list[Client]],
    admitted: set[int],
    validation: np.ndarray | None = None,
) -> bool:
    """Deliverable 9: every user's output against F_PIC evaluated on what the *clients* submitted
    (and, for a shapley round, the server's ``validation`` gradient).

    The list is rebuilt from the clients' own (pseudonym, x') of every admitted submission that
    passes the public validation rules (the group's report range), not from the server's L; a
    server that alters, drops or adds a report changes some output and the check fails.
    """
    inputs, expected_users = {}, []
    for g, row in zip(params.groups, clients, strict=True):
        R = group_randomizer(g)
        sent = [c for c in row if id(c) in admitted and c.report is not None]
        X = np.array([c.report for c in sent], dtype=np.float64).reshape(len(sent), g.report.length)
        ok = report_range(R)(X) if len(X) else np.zeros(0, dtype=bool)
        sent = [c for c, keep in zip(sent, ok, strict=True) if keep]
        P = Pseudonym.size(params.suite)
        pseudonyms = _as_rows([c.pseudonym.to_bytes() for c in sent], P)
        inputs[g.group_id] = (pseudonyms, X[ok])
        expected_users.append(sent)
    ideal = ideal_pic(params, task, inputs, randomized=True, validation=validation)
    served = {id(c) for row in clients for c in row if c.output is not None}
    expected_ids = {id(c) for sent in expected_users for c in sent}
    if served != expected_ids:
        return False
    return all(
        c.output == y for g, sent in zip(params.groups, expected_users, strict=True)
        for c, y in zip(sent, ideal.outputs[g.group_id], strict=True)
    )  # fmt: skip


def _as_rows(pseudonyms: list[bytes], size: int) -> np.ndarray:
    return np.frombuffer(b"".join(pseudonyms), dtype=np.uint8).reshape(len(pseudonyms), size)


def _exchange_posts(
    clients: list[list[Client]],
    board: BulletinBoard,
    round_id: bytes,
    progress: ProgressReporter,
    stats: dict[str, float] | None = None,
) -> bool:
    """Remark 3: each served user posts a fresh token to each mutual partner (the only ones its
    client lets it contact); each recipient decrypts, verifies the signature and the token.

    ``stats`` receives the posts sent ("posts"), one post's size ("bytes") and the CPU seconds of
    creating ("create_s": sign, encrypt) and reading ("read_s": decrypt, verify) them."""
    stats = {} if stats is None else stats
    sent: dict[tuple[bytes, bytes], bytes] = {}
    served = [c for row in clients for c in row if c.output is not None]
    for c in progress.track(served, "posts: sign, encrypt, send"):
        me = c.pseudonym.to_bytes()
        for partner in c.post_targets():
            token = secrets.token_bytes(POST_SIZE)
            post = accumulate(stats, "create_s", partial(c.post_to, partner, token))
            board.post(post)
            sent[(me, partner)] = token
            stats["posts"], stats["bytes"] = stats.get("posts", 0) + 1, len(post)
    received = 0
    for c in progress.track(served, "posts: decrypt, verify, read"):
        me = c.pseudonym.to_bytes()
        for data in board.posts_for(round_id, me):
            sender, message = accumulate(stats, "read_s", partial(c.read_post, data))
            if sent.get((sender, me)) != message:
                return False
            received += 1
    return received == len(sent)


def _finish(
    groups: Sequence[tuple[str, np.ndarray]],
    config: RoundConfig,
    privacy: list[GroupPrivacy],
    outputs: list[list[bytes | None]],
    owners: dict[bytes, tuple[int, int]],
    fmt: Any,
    metrics: dict[str, Any],
) -> RoundResult:
    if not config.task.has_partners:  # shapley: a value per user, no partner records
        values = [[None if y is None else decode_value(y) for y in row] for row in outputs]
        result = RoundResult(privacy, [[[] for _ in row] for row in outputs], metrics, {}, values)
        result.utility = shapley_utility([X for _, X in groups], values, config.validation)
        return result
    identity = [
        [[(*owners[r.pseudonym], r.report.astype("<f8").tobytes()) for r in decode_output(y, config.suite, fmt)] if y is not None else []
         for y in row]
        for row in outputs
    ]  # fmt: skip
    result = RoundResult(privacy, identity, metrics, {})
    result.utility = utility(config.task, [X for _, X in groups], identity)
    return result


def shapley_utility(true: Sequence[np.ndarray], values: list[list[float | None]], validation: Any) -> dict[str, float]:
    """A shapley round's values beside those of the true gradients (§7.3, Tables 5-6's Shapley l2 error).

    The reference is `shapley_values` on the true gradients of the users who received a value (exact up to
    `EXACT_MAX_PLAYERS` users, else the estimator with a fixed seed): ``shapley_error`` is the paper's mean
    absolute difference, ``shapley_l2`` the l2 norm of the difference vector.
    """
    got = [(i, x) for i, x in enumerate(values[0]) if x is not None]
    if not got:
        return {}
    idx = np.array([i for i, _ in got], dtype=np.intp)
    private = np.array([x for _, x in got], dtype=np.float64)
    reference = shapley_values(np.asarray(true[0], dtype=np.float64)[idx], validation, rng=np.random.default_rng(0))
    return {
        "shapley_error": shapley_error(private, reference.values),
        "shapley_l2": float(np.linalg.norm(private - reference.values)),
        "shapley_sum": float(private.sum()),
        "shapley_sum_non_private": float(reference.values.sum()),
    }


def utility(
    task: PicTask, true: Sequence[np.ndarray], identity: list[list[list[tuple[int, int, bytes]]]]
) -> dict[str, float]:
    """Utility of the users' outputs on the true inputs, beside the non-private computation (§7.1-7.2)."""
    if task.n_groups == 1:
        n, k = len(true[0]), task.k
        got = [[j for _, j, _ in recs] for recs in identity[0]]
        counts = np.array([len(r) for r in got], dtype=np.int64)
        indptr = np.concatenate([[0], np.cumsum(counts)])
        idx = np.array([j for r in got for j in r], dtype=np.int64)
        private = Neighbors(indptr, idx, np.zeros(idx.size))
        s = neighbor_scores(private, k_nearest_neighbors(true[0], k)) if n > k else None
        return {"precision": s.precision, "recall": s.recall, "f1": s.f1} if s else {}
    A, B = true
    rows = [(i, recs[0][1]) for i, recs in enumerate(identity[0]) if recs]
    r = np.array([i for i, _ in rows], dtype=np.intp)
    c = np.array([j for _, j in rows], dtype=np.intp)
    private = Matching.from_pairs(r, c, A, B)
    if task.name == "min-weight":
        reference = min_weight_matching(A, B)
        cost, best = travel_cost(private, A, B), travel_cost(reference, A, B)
        return {
            "travel_cost": cost,
            "travel_cost_non_private": best,
            "travel_cost_ratio": cost / best if best else math.nan,
        }
    reference = radius_matching(A, B, task.radius)
    return {
        "success_ratio": success_ratio(private, A, B, task.radius),
        "success_ratio_non_private": success_ratio(reference, A, B, task.radius),
        "matched_pairs": private.size,
    }


__all__ = [
    "GroupPrivacy",
    "RoundConfig",
    "RoundResult",
    "plan_groups",
    "round_report",
    "run_round",
    "shapley_utility",
    "utility",
]
