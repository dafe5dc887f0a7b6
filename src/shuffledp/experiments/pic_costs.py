"""Table 8 of the PIC paper (full version, Appendix C): the protocol's running time and communication.

Every number comes from a real round (`shuffledp.protocols.pic.round.run_round`: the
client, shuffler, server and bulletin-board code with real HPKE, one envelope per user,
outputs checked against F_PIC, posts between partners) on gMission (713 users, 532
workers) and EverySender (4,036 users, 817 workers), for every task the round offers
(``min-weight`` and ``max-matching`` between users and workers, radius 0.4; ``neighbors``
with k = 1 among the users alone) and both HPKE suites (``x25519``; ``pq-hybrid``,
X25519 + ML-KEM-768).  Minkowski Response at epsilon_c = 1 (local epsilon from the
round's plan).  Clients read the board by bucket (Remark 2: ``bucket_bits`` up to 16, at
least 10 entries of each group per bucket, the round's default).

Times are CPU time of the calling thread (`shuffledp._util.timing`): the machine is
shared with other workers (load averages of 4-8 on its 2 cores were seen), so wall time
would measure the neighbours; CPU time is what one dedicated core spends.  The paper
timed an i5-8250U laptop (1.6 GHz, 8 GB).  Kilo- and megabytes are 1,024 and 1,024^2 bytes.

One row per procedure of one round (``dataset, instance, suite, task``): ``value`` in
``unit``, Table 8's value in the same unit where the paper gives one, and ours / paper.
``--quick``: instance 0 of each data set, one round per (suite, task), 12 rounds: 1.3-1.7 min
wall on the shared 2-core machine; full: instances 0-2, 36 rounds: 3.8 min (measured at load 7).
"""

from __future__ import annotations

import math
import os
import platform
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from shuffledp._util.numbers import MISSING, number
from shuffledp._util.timing import cpu_per_call
from shuffledp.datasets import load_crowdsourcing
from shuffledp.experiments.pic_common import fmt_num, plan
from shuffledp.experiments.plotting import PAGE_WIDTH, legend_and_caption, log_ticks, page_style, series_style
from shuffledp.experiments.registry import VERDICTS, Claim, ExperimentContext, ExperimentOutput, register, share_verdict
from shuffledp.protocols.pic._wire import HEADER_SIZE
from shuffledp.protocols.pic.computation import PicTask
from shuffledp.protocols.pic.reports import group_randomizer
from shuffledp.protocols.pic.round import RoundConfig, run_round

__all__ = [
    "Procedure",
    "claims",
    "figure",
    "machine",
    "measure_round",
    "own_entry_bytes",
    "paper_value",
    "round_groups",
    "run",
    "single_randomize_us",
    "summary",
]

NAME = "pic-costs"
DATASETS = (("gmission", "gMission"), ("everysender", "EverySender"))
SUITES = ("x25519", "pq-hybrid")
RADIUS = 0.4
TASKS = (PicTask("min-weight"), PicTask("max-matching", radius=RADIUS), PicTask("neighbors", k=1))
RANDOMIZER, EPSILON_C = "minkowski", 1.0
BUCKET_BITS = 16
INSTANCES_QUICK, INSTANCES_FULL = (0,), (0, 1, 2)
#: Single-report randomizer calls timed per round (what one deployed client pays: one numpy call).
SINGLE_CALLS = 200
KB, MB = 1024.0, 1024.0**2
USER, SHUFFLER, SERVER = "user", "shuffler", "server"
COLUMNS = ["dataset", "instance", "suite", "task", "side", "procedure", "value", "unit", "paper_value", "ratio"]


@dataclass(frozen=True)
class Procedure:
    """One measured procedure: its label, side, unit and how to read it from a round's metrics (per user/message)."""

    name: str
    side: str
    unit: str
    read: Callable[[dict[str, Any]], float]


# Procedure names (Table 8's rows first; ours beside them).
RANDOMIZE = "location randomization (vectorised round, per user)"
RANDOMIZE_ONE = "location randomization (one call per user)"
PREPARE = "encrypt information (join + two HPKE seals)"
SENT = "send message to shuffler"
RETRIEVED = "retrieve matching result (bucket download)"
OWN_ENTRY = "retrieve matching result (own entry only)"
RETRIEVE_TIME = "retrieve: verify bucket, decrypt output"
KEY_AGREEMENT = "key agreement with the match (one post sent + one read)"
POST_BYTES = "post to the match (each way)"
UNWRAP = "shuffler: open and admit one envelope"
DECRYPT = "decrypt one message"
TASK = "task computation f(L)"
SERVER_CRYPTO = "server crypto total (decrypt all + seal board)"
SERVER_BYTES = "server communication (batches in + board out)"

PROCEDURES: tuple[Procedure, ...] = (
    Procedure(RANDOMIZE, USER, "us", lambda m: m["client_randomize_us"]),
    Procedure(RANDOMIZE_ONE, USER, "us", lambda m: m["single_randomize_us"]),
    Procedure(PREPARE, USER, "ms", lambda m: (m["client_join_us"] + m["client_seal_us"]) / 1e3),
    Procedure(SENT, USER, "B", lambda m: m["message_bytes"]),
    Procedure(RETRIEVED, USER, "B", lambda m: m["client_download_bytes"]),
    Procedure(OWN_ENTRY, USER, "B", lambda m: m["own_entry_bytes"]),
    Procedure(RETRIEVE_TIME, USER, "ms", lambda m: m["client_retrieve_us"] / 1e3),
    Procedure(KEY_AGREEMENT, USER, "ms", lambda m: (m["post_create_us"] + m["post_read_us"]) / 1e3),
    Procedure(POST_BYTES, USER, "B", lambda m: m["post_bytes"]),
    Procedure(UNWRAP, SHUFFLER, "us", lambda m: m["shuffler_unwrap_us_per_envelope"]),
    Procedure(DECRYPT, SERVER, "ms", lambda m: m["server_decrypt_us_per_message"] / 1e3),
    Procedure(TASK, SERVER, "ms", lambda m: m["task_cpu_ms"]),
    Procedure(SERVER_CRYPTO, SERVER, "s", lambda m: m["server_decrypt_cpu_s"] + m["board_seal_cpu_s"]),
    Procedure(SERVER_BYTES, SERVER, "B", lambda m: m["batch_bytes"] + m["board_bytes"]),
)
#: Procedures whose value depends on the task (the summary shows them per task; the others pool the tasks).
PER_TASK = (TASK, SERVER_CRYPTO, SERVER_BYTES)

#: Table 8 (PIC full version, Appendix C), in the procedures' units: (procedure, dataset, task) -> value;
#: None for dataset or task: the same for every one.
PAPER: dict[tuple[str, str | None, str | None], float] = {
    (RANDOMIZE, None, None): 0.7,  # us
    (RANDOMIZE_ONE, None, None): 0.7,  # us
    (PREPARE, None, None): 2.9,  # ms
    (SENT, None, None): 1.3 * KB,
    (RETRIEVED, None, None): 1.8 * KB,
    (OWN_ENTRY, None, None): 1.8 * KB,
    (KEY_AGREEMENT, None, None): 2.6,  # ms
    (DECRYPT, None, None): 2.1,  # ms
    (TASK, "gmission", "min-weight"): 31.0,  # ms
    (TASK, "gmission", "max-matching"): 15.0,
    (TASK, "everysender", "min-weight"): 79.0,
    (TASK, "everysender", "max-matching"): 63.0,
    (SERVER_BYTES, "gmission", "min-weight"): 1.2 * MB,
    (SERVER_BYTES, "gmission", "max-matching"): 1.2 * MB,
    (SERVER_BYTES, "everysender", "min-weight"): 4.3 * MB,
    (SERVER_BYTES, "everysender", "max-matching"): 4.3 * MB,
}


def paper_value(procedure: str, dataset: str, task: str) -> float | None:
    """Table 8's value for a procedure on a data set and task (None: the paper gives none)."""
    for key in ((procedure, dataset, task), (procedure, None, None)):
        if key in PAPER:
            return PAPER[key]
    return None


def round_groups(task: PicTask, users: np.ndarray, workers: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """The round's groups: users and workers for a matching, the users alone for neighbours."""
    return [("users", users)] if task.n_groups == 1 else [("users", users), ("workers", workers)]


def single_randomize_us(task: PicTask, groups: Sequence[tuple[str, np.ndarray]], rng: np.random.Generator) -> float:
    """CPU microseconds of one single-report randomization with group 0's R_i (as `Client.prepare` calls it)."""
    params, _ = plan(task, RANDOMIZER, EPSILON_C, [(name, len(X)) for name, X in groups])
    R = group_randomizer(params[0])
    x = np.asarray(groups[0][1][:1], dtype=np.float64)
    cpu, _ = cpu_per_call(lambda: R.randomize(x, rng), SINGLE_CALLS)
    return 1e6 * cpu


def own_entry_bytes(board_bytes: int, head_bytes: int, entries: int) -> float:
    """Bytes of one board entry, from the whole-board slice: magic/type header, the head (4-byte length),
    the bucket and the entry count (4 bytes each), then every entry with a 4-byte length (all entries are
    one size: fixed pseudonym and padded output)."""
    if entries <= 0:
        return math.nan
    return (board_bytes - HEADER_SIZE - 4 - head_bytes - 4 - 4) / entries - 4


def measure_round(
    dataset: str, instance: int, suite: str, task: PicTask, users: np.ndarray, workers: np.ndarray,
    rng: np.random.Generator, *, bucket_bits: int = BUCKET_BITS,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:  # fmt: skip
    """One real round; returns its rows (one per procedure) and the round's metrics."""
    groups = round_groups(task, users, workers)
    config = RoundConfig(task, RANDOMIZER, EPSILON_C, suite=suite, bucket_bits=bucket_bits)
    result = run_round(groups, config, rng)
    m = dict(result.metrics)
    m["single_randomize_us"] = single_randomize_us(task, groups, rng)
    entries = sum(p.valid_reports for p in result.privacy)
    m["own_entry_bytes"] = own_entry_bytes(m["board_bytes"], m["board_head_bytes"], entries)
    rows = []
    for p in PROCEDURES:
        value = float(p.read(m))
        ref = paper_value(p.name, dataset, task.name)
        rows.append({"dataset": dataset, "instance": instance, "suite": suite, "task": task.name, "side": p.side,
                     "procedure": p.name, "value": value, "unit": p.unit, "paper_value": ref,
                     "ratio": value / ref if ref else None})  # fmt: skip
    return rows, m


@register(NAME, "PIC Table 8: running time and communication of a real PIC round (client and server)",
          "PIC full version, Appendix C, Table 8")  # fmt: skip
def run(ctx: ExperimentContext) -> ExperimentOutput:
    instances = INSTANCES_QUICK if ctx.quick else INSTANCES_FULL
    cases = [(d, ds, i, s, t) for d, (ds, _) in enumerate(DATASETS) for i in instances
             for s, suite in enumerate(SUITES) for t, _ in enumerate(TASKS)]  # fmt: skip
    rows: list[dict[str, Any]] = []
    verified: list[bool] = []
    loaded: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = {}
    for d, dataset, i, s, t in ctx.progress.track(cases, NAME):
        if (dataset, i) not in loaded:
            loaded[(dataset, i)] = load_crowdsourcing(dataset, i).groups()
        users, workers = loaded[(dataset, i)]
        new, m = measure_round(dataset, i, SUITES[s], TASKS[t], users, workers, ctx.rng(d, i, s, t))
        rows += new
        verified.append(bool(m["outputs_verified"]) and bool(m["posts_verified"]))
    found = claims(rows)
    return ExperimentOutput(
        columns=COLUMNS,
        rows=rows,
        summary_markdown=summary(rows, instances, all(verified), len(verified)),
        figure=figure(rows),
        parameters={
            "datasets": [label for _, label in DATASETS],
            "instances": list(instances),
            "suites": list(SUITES),
            "tasks": [t.to_json() for t in TASKS],
            "randomizer": RANDOMIZER,
            "epsilon_c": EPSILON_C,
            "bucket_bits": BUCKET_BITS,
            "single_randomize_calls": SINGLE_CALLS,
            "timing": "CPU time of the calling thread (time.thread_time), one core",
            "machine": machine(),
            "rounds_verified": f"{sum(verified)} of {len(verified)}",
        },
        claims=found,
        findings=_findings(found, rows),
    )


def machine() -> str:
    """This machine's CPU model and core count (Linux /proc/cpuinfo, else `platform.processor`)."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores visible (shared with other workers)"


# --- claims --------------------------------------------------------------------------------------

#: The rules that turn rows into verdicts (stated in the summary).
USER_TIME_MAX_MS = 10.0  # "a few milliseconds"
RANDOMIZE_SHARE_MAX = 0.05  # "negligible": at most 5% of the user's time
USER_BYTES_MAX = 4 * KB  # "under 4 KB"
TASK_MAX_RATIO = 2.0  # "dozens of milliseconds": within 2x of Table 8's 15-79 ms (the machines differ)
CRYPTO_MAX_S = 10.0  # "capped at several seconds"
RULES = {
    "user-time": f"per round: the user's CPU time (randomization, one call + encrypt + retrieve + key agreement) <= "
    f"{USER_TIME_MAX_MS:g} ms and randomization <= {RANDOMIZE_SHARE_MAX:.0%} of it",
    "user-bytes": f"per round: bytes sent + bytes retrieved (bucket download) + one post each way <= {USER_BYTES_MAX:.0f} B",
    "server": f"per matching round: f(L) CPU time <= {TASK_MAX_RATIO:g} x Table 8's for the same data set and task "
    f"(where Table 8 has none: <= 100 ms) and decrypt-all + seal-board <= {CRYPTO_MAX_S:g} s CPU",
}


def _rounds(rows: list[dict[str, Any]]) -> dict[tuple[str, int, str, str], dict[str, float]]:
    """(dataset, instance, suite, task) -> procedure -> value."""
    out: dict[tuple[str, int, str, str], dict[str, float]] = {}
    for r in rows:
        out.setdefault((r["dataset"], r["instance"], r["suite"], r["task"]), {})[r["procedure"]] = float(r["value"])
    return out


def _failing(keys: list[tuple[str, int, str, str]], total: int | None = None) -> str:
    if total is not None and len(keys) == total:
        return "every round"
    return "; ".join(f"{d} #{i} {s} {t}" for d, i, s, t in keys[:4]) + (" ..." if len(keys) > 4 else "")


def claims(rows: list[dict[str, Any]]) -> list[Claim]:
    """Table 8's text (Appendix C) as three claims, each with a verdict computed from the rows by `RULES`."""
    rounds = _rounds(rows)
    out = []
    # 1. a few ms per user, randomization negligible
    user_ms = {k: v[RANDOMIZE_ONE] / 1e3 + v[PREPARE] + v[RETRIEVE_TIME] + v[KEY_AGREEMENT] for k, v in rounds.items()}
    share = {k: rounds[k][RANDOMIZE_ONE] / 1e3 / user_ms[k] for k in rounds}
    bad = [k for k in rounds if not (user_ms[k] <= USER_TIME_MAX_MS and share[k] <= RANDOMIZE_SHARE_MAX)]
    out.append(Claim(
        "Each user's total running time is only a few milliseconds, randomization negligible (Table 8: 0.7 us + 2.9 ms "
        "+ 2.6 ms)",
        f"user CPU time {_span(user_ms.values(), 'ms')}, randomization {_span(share.values(), '%', 100)} of it "
        f"(rule: {RULES['user-time']}; {len(rounds) - len(bad)} of {len(rounds)} rounds)"
        + (f"; failing: {_failing(bad)}" if bad else ""),
        share_verdict(len(rounds) - len(bad), len(rounds)),
    ))  # fmt: skip
    # 2. under 4 KB per user
    user_b = {k: v[SENT] + v[RETRIEVED] + 2 * v[POST_BYTES] for k, v in rounds.items()}
    own = {k: v[SENT] + v[OWN_ENTRY] + 2 * v[POST_BYTES] for k, v in rounds.items()}
    bad = [k for k in rounds if not user_b[k] <= USER_BYTES_MAX]
    out.append(Claim(
        "Each user's total communication is under 4 KB (Table 8: 1.3 KB sent, 1.8 KB retrieved)",
        f"{_by_suite(user_b, 'KB', 1 / KB)} per user (rule: {RULES['user-bytes']}; {len(rounds) - len(bad)} of "
        f"{len(rounds)} rounds); the bucket download (Remark 2: >= 10 entries of each group per bucket) dominates: "
        f"with the user's own board entry instead {_by_suite(own, 'KB', 1 / KB)}"
        + (f"; failing: {_failing(bad, len(rounds))}" if bad else ""),
        share_verdict(len(rounds) - len(bad), len(rounds)),
    ))  # fmt: skip
    # 3. the server: matching in tens of ms, crypto overhead at most several seconds
    matching = {k: v for k, v in rounds.items() if k[3] in ("min-weight", "max-matching")}
    bad = [
        k for k, v in matching.items() if not (v[TASK] <= _task_limit(k[0], k[3]) and v[SERVER_CRYPTO] <= CRYPTO_MAX_S)
    ]
    out.append(Claim(
        "Server: matching on noisy plaintext takes dozens of milliseconds; the decryption/encryption overhead is "
        "capped at several seconds",
        f"f(L) {_span([v[TASK] for v in matching.values()], 'ms')}, decrypt + seal "
        f"{_span([v[SERVER_CRYPTO] for v in matching.values()], 's')} (rule: {RULES['server']}; "
        f"{len(matching) - len(bad)} of {len(matching)} rounds)" + (f"; failing: {_failing(bad)}" if bad else ""),
        share_verdict(len(matching) - len(bad), len(matching)),
    ))  # fmt: skip
    return out


def _task_limit(dataset: str, task: str) -> float:
    """The most f(L) may take (ms) for the server claim: 2x Table 8's time, or 100 ms where it gives none."""
    ref = paper_value(TASK, dataset, task)
    return TASK_MAX_RATIO * ref if ref is not None else 100.0


def _by_suite(values: dict[tuple[str, int, str, str], float], unit: str, scale: float = 1.0) -> str:
    """A span of values per suite: "x25519 a-b unit, pq-hybrid c-d unit"."""
    suites = [s for s in SUITES if any(k[2] == s for k in values)]
    return ", ".join(f"{s} {_span([v for k, v in values.items() if k[2] == s], unit, scale)}" for s in suites)


def _span(values: Any, unit: str, scale: float = 1.0) -> str:
    v = [scale * float(x) for x in values]
    if not v:
        return MISSING
    lo, hi = min(v), max(v)
    return f"{lo:.3g} {unit}" if math.isclose(lo, hi, rel_tol=5e-3) else f"{lo:.3g}-{hi:.3g} {unit}"


def _findings(found: list[Claim], rows: list[dict[str, Any]]) -> str:
    """REPORT.md's line: the verdicts, and for the byte claim what the user's download would be without buckets."""
    counts = {v: sum(c.verdict == v for c in found) for v in VERDICTS}
    short = {0: "user time", 1: "user bytes", 2: "server"}
    missed = [short[i] for i, c in enumerate(found) if c.verdict != "held"]
    if len(found) > 1 and found[1].verdict != "held":
        own = {k: v[SENT] + v[OWN_ENTRY] + 2 * v[POST_BYTES] for k, v in _rounds(rows).items()}
        missed[missed.index("user bytes")] = (
            f"user bytes: Remark 2's bucket download is over 4 KB; with the own entry alone {_by_suite(own, 'KB', 1 / KB)}"
        )
    return (f"Table 8's claims: {counts['held']} held, {counts['partly']} partly, {counts['not']} not"
            + (f" ({'; '.join(missed)})" if missed else ""))  # fmt: skip


# --- summary -------------------------------------------------------------------------------------


def _median(rows: list[dict[str, Any]], dataset: str | None, suite: str, procedure: str, task: str | None) -> float:
    vals = [float(r["value"]) for r in rows if (dataset is None or r["dataset"] == dataset) and r["suite"] == suite
            and r["procedure"] == procedure and (task is None or r["task"] == task)]  # fmt: skip
    return statistics.median(vals) if vals else math.nan


def _show(value: float, unit: str) -> str:
    """A value in readable units (B -> KB/MB); ``inf``, or ``-`` for NaN (nothing measured), by the one rule."""
    if not math.isfinite(value):
        return number(value)
    if unit == "B":
        if value >= MB:
            return f"{value / MB:.3g} MB"
        if value >= KB:
            return f"{value / KB:.3g} KB"
        return f"{value:.0f} B"
    return f"{fmt_num(value)} {unit}"


def _table_rows(
    rows: list[dict[str, Any]], dataset: str | None
) -> list[tuple[str, str, str, float | None, list[float]]]:
    """(side, label, unit, paper, [ours per suite]) for one data set (None: both pooled)."""
    out = []
    tasks = sorted({r["task"] for r in rows}, key=[t.name for t in TASKS].index)
    for p in PROCEDURES:
        for task in tasks if p.name in PER_TASK else [None]:
            if dataset is None and p.name in PER_TASK:
                continue
            label = p.name if task is None else f"{p.name}: {task}"
            ref = paper_value(p.name, dataset or "", task or "")
            out.append((p.side, label, p.unit, ref, [_median(rows, dataset, s, p.name, task) for s in SUITES]))
    return out


def _ratio(r: float) -> str:
    return f"{r:.0f}x" if r >= 100 else f"{r:.2g}x"


def summary(rows: list[dict[str, Any]], instances: Sequence[int], verified: bool, n_rounds: int) -> str:
    """Ours beside Table 8 per data set, with ratios, the rules of the claims and the machines."""
    lines = [
        f"{n_rounds} real PIC rounds (`run_round`: real HPKE, signed batches and board, posts), instances "
        f"{', '.join(map(str, instances))} of gMission (713 users, 532 workers) and EverySender (4,036 users, 817 "
        f"workers), tasks min-weight and max-matching (radius 0.4, users x workers) and neighbors (k = 1, users "
        f"only), suites x25519 and pq-hybrid; Minkowski Response at epsilon_c = 1. Every round's outputs and posts "
        f"verified against F_PIC: {'yes' if verified else 'NO'}.",
        "",
        f"**Machines.** Ours: {machine()}; times are CPU time of the calling thread on one core (the machine is "
        "shared, so wall time would measure the other workers' load). Paper: Intel i5-8250U laptop @ 1.6 GHz, "
        "8 GB (timing method not stated). Ratios are ours / paper; the machines differ, so a ratio within a few x "
        "says 'the same order'.",
        "",
    ]
    for dataset, dlabel in DATASETS:
        if not any(r["dataset"] == dataset for r in rows):
            continue
        lines += [f"## {dlabel} (median over tasks and instances; per task where the task matters)", "",
                  "| side | procedure | paper (Table 8) | " + " | ".join(f"{s} | ratio" for s in SUITES) + " |",
                  "|---|---|---|" + "---|---|" * len(SUITES)]  # fmt: skip
        for side, label, unit, ref, ours in _table_rows(rows, dataset):
            cells = []
            for v in ours:
                cells += [_show(v, unit), _ratio(v / ref) if ref and math.isfinite(v) else MISSING]
            lines.append(f"| {side} | {label} | {_show(ref, unit) if ref else MISSING} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += [
        "**Reading the rows.** Randomization: the round randomizes each group in one vectorised call (per user: "
        "the call's time / n); a deployed client makes one call for its one location, which numpy's per-call "
        f"overhead dominates (timed over {SINGLE_CALLS} calls). Encrypt: verify the signed parameters and the "
        "shuffler's view, draw one-time keys, seal x' to the server and that to the shuffler. Retrieved: what the "
        "client downloads under Remark 2 (the signed head and its bucket of >= 10 entries of each group), beside "
        "its own entry alone; the retrieve time is amortised over simulated clients that share one verification "
        "per distinct download. Key agreement: our clients meet their match through one signed, HPKE-sealed post "
        "each way (the paper: ECDHE with the worker). Decrypt one message: verify the shuffler's batch, open and "
        "validate each inner envelope. Server communication: the shuffler's signed batches plus the board "
        "(the paper does not say what its 1.2 / 4.3 MB count).",
        "",
        "**Rules of the verdicts.** " + "; ".join(f"{k}: {v}" for k, v in RULES.items()) + ". A claim holds when "
        "every round meets its rule, holds partly when some do, and does not when none do.",
    ]  # fmt: skip
    return "\n".join(lines)


# --- figure --------------------------------------------------------------------------------------


#: Short names of the procedures for the figure's axis.
SHORT = {RANDOMIZE: "randomize (vectorised)", RANDOMIZE_ONE: "randomize (one call)", PREPARE: "encrypt (join + seals)",
         SENT: "sent to shuffler", RETRIEVED: "retrieved (bucket)", OWN_ENTRY: "retrieved (own entry)",
         KEY_AGREEMENT: "key agreement (posts)", DECRYPT: "server: decrypt one", TASK: "f(L)",
         SERVER_BYTES: "server bytes"}  # fmt: skip


def _short(label: str) -> str:
    for name, short in SHORT.items():
        if label.startswith(name):
            return short + label[len(name) :]
    return label


def _figure_dots(rows: list[dict[str, Any]], unit_kind: str) -> list[tuple[str, float, list[float]]]:
    """(label, paper, [ours per suite]) of the procedures Table 8 prices, times in ms or bytes in KB."""
    out = []
    for _, label, unit, ref, ours in _table_rows(rows, None) + [
        (side, f"{_short(label)}, {dl}", unit, ref, ours)
        for d, dl in DATASETS
        for side, label, unit, ref, ours in _table_rows(rows, d)
        if any(label.startswith(p) for p in PER_TASK)
    ]:
        if ref is None or (unit == "B") != (unit_kind == "B"):
            continue
        scale = {"us": 1e-3, "ms": 1.0, "s": 1e3, "B": 1 / KB}[unit]
        out.append((_short(label), ref * scale, [v * scale for v in ours]))
    return out


#: Vertical offset between the paper's marker and ours on one procedure's row of the dot plot.
_DOT_OFFSET = 0.2


def figure(rows: list[dict[str, Any]]) -> Any:
    """A dot plot on a log scale: per procedure, Table 8's value (black diamond) beside ours (one marker per suite),
    times (ms) and bytes (KB); a thin line spans each row's values so the gap reads as a distance, not a bar."""
    panels = [
        ("time (ms, CPU; log scale)", _figure_dots(rows, "time")),
        ("bytes (KB; log scale)", _figure_dots(rows, "B")),
    ]
    with page_style() as plt:
        heights = [max(1, len(b)) for _, b in panels]
        fig, axes = plt.subplots(len(panels), 1, figsize=(PAGE_WIDTH, 0.32 * sum(heights) + 1.5),
                                 gridspec_kw={"height_ratios": heights})  # fmt: skip
        labels = ["paper (Table 8)"] + [f"ours, {s}" for s in SUITES]
        handles: list[Any] = []
        for ax, (xlabel, dots) in zip(axes, panels, strict=True):
            y = np.arange(len(dots))
            for row, (_, paper, ours) in zip(y, dots, strict=True):
                ax.plot([min(paper, *ours), max(paper, *ours)], [row, row], color="0.75", linewidth=0.8, zorder=1)
            offsets = _DOT_OFFSET * (np.arange(1 + len(SUITES)) - len(SUITES) / 2)
            series = [[d[1] for d in dots]] + [[d[2][k] for d in dots] for k in range(len(SUITES))]
            handles = []
            for k, values in enumerate(series):
                style = (
                    {"marker": "D", "color": "black", "markerfacecolor": "none", "markersize": 6}
                    if k == 0
                    else series_style(k - 1)
                )
                handles += ax.plot(values, y + offsets[k], **{**style, "linestyle": "none"}, zorder=2)
            ax.set_yticks(y, [d[0] for d in dots], fontsize=7)
            ax.set_ylim(len(dots) - 0.5, -0.5)
            ax.grid(axis="y", color="0.92", linewidth=0.6)
            ax.set_xscale("log")
            log_ticks(ax, "x")
            ax.set_xlabel(xlabel)
        legend_and_caption(
            fig, handles, labels, ncol=3,
            caption="PIC Table 8 (black diamonds) beside real rounds of our protocol (coloured markers, one per HPKE "
            "suite; median over tasks and instances; task rows per data set), on a log scale: read the horizontal "
            "distance between markers as the ratio. Ours: CPU time on one core of a shared 2-core machine; paper: "
            "i5-8250U laptop.",
        )  # fmt: skip
    return fig
