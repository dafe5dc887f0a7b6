"""A PIC user u_{i,j} (pic-usenix25 §5.1 steps 2 and 6; Remarks 2-3; §8: fresh keys per round).

A `Client` pins two long-term keys (the server's and the shuffler's) and holds the enrolment
credential the shuffler gave it.  It joins one round: it verifies the server's signed
parameters and the shuffler's view announcement of their hash (one view for everyone: a
parameter set the shuffler does not hold is refused as a split view), checks them against
its local `ClientPolicy`, draws fresh one-time keys (the pseudonym), randomizes its input
with its group's R_i and seals ``pk || x'`` twice: to the server (inner), then with its
credential and a random submission id to the shuffler (outer).  After the round it verifies
the signed board (or only its bucket), decrypts its output y, and exchanges posts with its
*mutual* partners only (`.computation`: what keeps |U| <= k |C|).

Channels the ledger relies on: submissions go to the shuffler (which sees who sends); board
downloads and posts must travel over an anonymous channel (through the shuffler or an
Oblivious HTTP relay), since posts are addressed to pseudonyms and a download of one bucket
names it: whoever runs the board must not see who reads or posts what.
"""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass
from typing import Any

import numpy as np

from shuffledp.crypto import VerifyKey
from shuffledp.errors import CryptoError, DomainError, MessageFormatError, PolicyError, ProtocolError
from shuffledp.protocols.pic._wire import as_bytes
from shuffledp.protocols.pic.batches import ViewAnnouncement
from shuffledp.protocols.pic.bulletin import BoardEntry, BoardHead, BoardSlice, bucket_of
from shuffledp.protocols.pic.computation import TASK_NAMES, OutputRecord, PicTask, decode_output, decode_value
from shuffledp.protocols.pic.messages import (
    CREDENTIAL_SIZE,
    MAX_BUCKET_BITS,
    SUBMISSION_ID_SIZE,
    GroupParams,
    OneTimeKeys,
    Post,
    Pseudonym,
    RoundParams,
    SignedRoundParams,
    Submission,
    encode_report,
    seal_report,
)
from shuffledp.protocols.pic.noise import secure_generator
from shuffledp.protocols.pic.reports import group_randomizer

__all__ = ["Client", "ClientPolicy", "VerifiedDownloads"]


@dataclass(frozen=True)
class ClientPolicy:
    """What a client accepts from signed round parameters; anything else is a `PolicyError`.

    Defaults are for a deployment (a local epsilon of at most 10, a group of at least 10,
    buckets of at least 10 entries); simulations pass the policy their plan needs.

    Examples
    --------
    >>> from shuffledp.protocols.pic.client import ClientPolicy
    >>> ClientPolicy(max_local_epsilon=4.0, min_threshold=100).tasks
    ('min-weight', 'max-matching', 'neighbors', 'shapley')
    """

    max_local_epsilon: float = 10.0
    min_threshold: int = 10
    tasks: tuple[str, ...] = TASK_NAMES
    max_bucket_bits: int = MAX_BUCKET_BITS
    min_bucket_size: int = 10

    def __post_init__(self) -> None:
        """Refuse a policy that could accept nothing or means nothing (NaN, negative, unknown task)."""
        eps = self.max_local_epsilon
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not eps > 0.0:  # NaN fails too; inf: no limit
            raise DomainError(f"max_local_epsilon must be a number > 0 (inf: no limit), got {eps!r}")
        unknown = [t for t in self.tasks if t not in TASK_NAMES]
        if isinstance(self.tasks, str) or not self.tasks or unknown:
            raise DomainError(f"tasks must be a non-empty tuple of {list(TASK_NAMES)}, got {self.tasks!r}")
        for name, low, high in (
            ("min_threshold", 1, None),
            ("max_bucket_bits", 0, MAX_BUCKET_BITS),
            ("min_bucket_size", 1, None),
        ):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int)
                or value < low
                or (high is not None and value > high)
            ):
                allowed = f"an integer >= {low}" if high is None else f"an integer in [{low}, {high}]"
                raise DomainError(f"{name} must be {allowed}, got {value!r}")

    @classmethod
    def permissive(cls) -> ClientPolicy:
        """Accept any parameters the protocol allows (tests and simulations only)."""
        return cls(math.inf, 1, TASK_NAMES, MAX_BUCKET_BITS, 1)

    def check(self, params: RoundParams, group_id: int) -> None:
        """Raise `PolicyError` (reason names the rule) if ``params`` ask for more than this policy allows."""
        group = params.group(group_id)
        if not group.local_epsilon <= self.max_local_epsilon:
            raise PolicyError("local-epsilon", f"group {group.name} has local epsilon {group.local_epsilon:g}; "
                              f"this client accepts at most {self.max_local_epsilon:g}")  # fmt: skip
        if group.threshold < self.min_threshold:
            raise PolicyError("threshold", f"group {group.name} has anonymity threshold {group.threshold}; "
                              f"this client needs at least {self.min_threshold}")  # fmt: skip
        if params.task["name"] not in self.tasks:
            raise PolicyError("task", f"task {params.task['name']!r} is not among this client's {list(self.tasks)}")
        if params.bucket_bits > self.max_bucket_bits:
            raise PolicyError(
                "bucket-bits", f"bucket_bits {params.bucket_bits} exceeds this client's {self.max_bucket_bits}"
            )
        if params.min_bucket_size < self.min_bucket_size:
            raise PolicyError("min-bucket-size", f"min_bucket_size {params.min_bucket_size} is below this client's "
                              f"{self.min_bucket_size}")  # fmt: skip


class VerifiedDownloads:
    """Verified copies of what the server publishes: signed round parameters and board downloads.

    Verification (the server's signature; for a board, also every entry against its
    bucket digest) is a pure function of the bytes and the trusted keys, so clients on one
    machine (one device, or one simulation) may share this cache: each distinct download is
    verified once, which keeps n users reading an n-entry board O(n).  Bytes that differ in
    any way are a different download, verified afresh.
    """

    def __init__(self, server_key: VerifyKey, shuffler_key: VerifyKey | None = None) -> None:
        self.server_key = server_key
        self.shuffler_key = shuffler_key
        self._params: dict[bytes, RoundParams] = {}
        self._boards: dict[bytes, tuple[BoardHead, dict[bytes, BoardEntry]]] = {}

    def round_params(self, signed: bytes) -> RoundParams:
        """Verified round parameters; ``CryptoError``/``MessageFormatError`` if they do not verify."""
        signed = as_bytes(signed, "signed round parameters")
        if signed not in self._params:
            self._params[signed] = SignedRoundParams.from_bytes(
                signed, server_key=self.server_key, shuffler_key=self.shuffler_key
            ).params
        return self._params[signed]

    def board(self, download: bytes) -> tuple[BoardHead, dict[bytes, BoardEntry]]:
        """The head and pseudonym -> entry of a verified board download (whole board or one bucket)."""
        download = as_bytes(download, "board download")
        if download not in self._boards:
            sl = BoardSlice.from_bytes(download)
            self._boards[download] = (sl.head, {e.pseudonym: e for e in sl.verify(self.server_key)})
        return self._boards[download]


class Client:
    """One user in one round; build a new Client for every round (one-time keys, §8)."""

    def __init__(
        self,
        server_key: VerifyKey,
        group_id: int,
        *,
        shuffler_key: VerifyKey,
        credential: bytes,
        policy: ClientPolicy | None = None,
        downloads: VerifiedDownloads | None = None,
    ) -> None:
        """``server_key``/``shuffler_key``: the pinned long-term keys; ``credential``: from enrolment;
        ``policy``: what this client accepts (`ClientPolicy`'s deployment defaults if None);
        ``downloads``: a verification cache shared with co-located clients trusting the same keys."""
        self.server_key = server_key
        self.shuffler_key = shuffler_key
        self.group_id = group_id
        self.policy = policy or ClientPolicy()
        self._credential = as_bytes(credential, "credential")
        if len(self._credential) != CREDENTIAL_SIZE:
            raise MessageFormatError("field", f"credential must be {CREDENTIAL_SIZE} bytes")
        shared = downloads is not None and downloads.server_key == server_key and downloads.shuffler_key == shuffler_key
        self._downloads = downloads if shared else VerifiedDownloads(server_key, shuffler_key)
        self.params: RoundParams | None = None
        self._keys: OneTimeKeys | None = None
        self._submission_id = secrets.token_bytes(SUBMISSION_ID_SIZE)
        self.submission: bytes | None = None  # the last submission sealed (resend it as is: idempotent)
        self.report: np.ndarray | None = None  # the x' this client submitted (for the independent check)
        self.output: bytes | None = None
        self.partners: list[OutputRecord] = []  # a task with partners (matchings, neighbours)
        self.value: float | None = None  # a shapley round: this user's Shapley value (§7.3)
        self._posts_seen: set[bytes] = set()

    def join(self, signed_params: bytes, view: bytes) -> GroupParams:
        """Verify the round parameters (step 1) and the shuffler's view of them, check the local
        policy, draw this round's one-time keys; returns the group."""
        if self.params is not None:
            raise ProtocolError("this client already joined a round; one-time keys are never reused (§8)")
        params = self._downloads.round_params(signed_params)
        announced = ViewAnnouncement.from_bytes(as_bytes(view, "view announcement"), shuffler_key=self.shuffler_key)
        if announced.round_id != params.round_id or announced.params_hash != params.digest:
            raise PolicyError(
                "view", "the shuffler announces another parameter set for this round: a split view; not joining"
            )
        group = params.group(self.group_id)
        self.policy.check(params, self.group_id)
        self.params, self._keys = params, OneTimeKeys.generate(params.suite)
        return group

    @property
    def pseudonym(self) -> Pseudonym:
        return self._joined()[1].pseudonym

    def _joined(self) -> tuple[RoundParams, OneTimeKeys]:
        if self.params is None or self._keys is None:
            raise ProtocolError("join a round (verify its signed parameters) first")
        return self.params, self._keys

    def seal(self, report: Any) -> bytes:
        """Step 2 for an already randomized report x': ``Submission(HPKE_shuffler(cred || id || HPKE_server(pk || x')))``."""
        params, keys = self._joined()
        fmt = params.group(self.group_id).report
        plaintext = encode_report(keys.pseudonym, report, fmt)
        inner = seal_report(params, self.group_id, plaintext)
        sub = Submission.seal(params, self.group_id, self._credential, self._submission_id, inner)
        self.report = fmt.decode_one(plaintext[-fmt.size :])
        self.submission = sub.to_bytes()
        return self.submission

    def prepare(self, x: Any, rng: np.random.Generator | None = None) -> bytes:
        """Step 2: randomize the private input ``x`` with the group's R_i, then `seal`.

        ``rng=None`` (deployment) draws the noise from a CSPRNG keyed from the OS
        (`shuffledp.protocols.pic.noise.secure_generator`, ChaCha20); simulations pass a
        numpy generator for speed and reproducibility.
        """
        params, _ = self._joined()
        R = group_randomizer(params.group(self.group_id))
        rng = rng if rng is not None else secure_generator()
        return self.seal(R.randomize(np.asarray(x, dtype=np.float64)[None, :], rng)[0])

    def bucket(self, head: bytes) -> int:
        """This client's bucket on a board with the given signed head (verified here)."""
        params, keys = self._joined()
        h = BoardHead.from_bytes(as_bytes(head, "board head"))
        h.verify(self.server_key)
        self._check_head(params, h)
        return bucket_of(keys.pseudonym.to_bytes(), h.bucket_bits)

    def fetch_output(self, board: Any) -> bytes:
        """Remark 2: download the head, then only this client's bucket, verify it and decrypt y.

        ``board`` offers ``head(round_id)`` and ``download_bucket(round_id, bucket)`` (a
        `BulletinBoard`, or an HTTP client with the same two calls).
        """
        params, _ = self._joined()
        b = self.bucket(board.head(params.round_id))
        return self.retrieve(board.download_bucket(params.round_id, b))

    @staticmethod
    def _check_head(params: RoundParams, head: BoardHead) -> None:
        if head.round_id != params.round_id:
            raise MessageFormatError("round", "the board head is for another round")
        if head.bucket_bits > params.bucket_bits:
            raise MessageFormatError(
                "bucket",
                f"the board uses {head.bucket_bits} bucket bits; the round signed at most {params.bucket_bits}",
            )
        if (
            head.bucket_bits
            and min((c for c in head.counts if c), default=params.min_bucket_size) < params.min_bucket_size
        ):
            raise MessageFormatError(
                "bucket", f"a board bucket holds fewer than the signed minimum {params.min_bucket_size} entries"
            )

    def retrieve(self, download: bytes) -> bytes:
        """Step 6: verify the board download (whole board or this pseudonym's bucket), find the entry, decrypt y."""
        params, keys = self._joined()
        head, entries = self._downloads.board(download)
        self._check_head(params, head)
        entry = entries.get(keys.pseudonym.to_bytes())
        if entry is None:
            raise MessageFormatError("pseudonym", "the board holds no entry for this client's pseudonym")
        if entry.group_id != self.group_id:
            raise MessageFormatError("group", f"the board files this pseudonym under group {entry.group_id}")
        self.output = entry.open(params, keys)
        if self._task().has_partners:
            self.partners = decode_output(self.output, params.suite, params.group(self.group_id).report)
        else:
            self.value = decode_value(self.output)
        return self.output

    def _task(self) -> PicTask:
        params, _ = self._joined()
        return PicTask.from_json(params.task)

    def _mutual_partners(self) -> list[Pseudonym]:
        params, _ = self._joined()
        return [Pseudonym.from_bytes(params.suite, r.pseudonym) for r in self.partners if r.mutual]

    def post_targets(self) -> list[bytes]:
        """The partners this client may exchange posts with: its mutual partners."""
        return [p.to_bytes() for p in self._mutual_partners()]

    def post_to(self, recipient: bytes, message: bytes) -> bytes:
        """Remark 3: a post to a *mutual* partner named in this client's output (sign, then encrypt)."""
        params, keys = self._joined()
        if not self._task().has_partners:
            raise ProtocolError(f"a {params.task['name']} round has no partners: there is no one to post to")
        partner = next((p for p in self._mutual_partners() if p.to_bytes() == bytes(recipient)), None)
        if partner is None:
            raise ProtocolError("posts go only to mutual partners named in this client's output")
        return Post.create(params, keys, partner, as_bytes(message, "post message")).to_bytes()

    def read_post(self, data: bytes) -> tuple[bytes, bytes]:
        """Decrypt a post from a mutual partner and verify its signature: ``(sender, p)``.

        Raises ``CryptoError`` if no mutual partner sent it, ``MessageFormatError`` if it is
        malformed, for another round or pseudonym, or a replay (reason "replay").
        """
        params, keys = self._joined()
        if not self._task().has_partners:
            raise ProtocolError(f"a {params.task['name']} round has no partners: no post is expected")
        partners = self._mutual_partners()
        if not partners:
            raise CryptoError("post does not open under any expected sender's pseudonym (no mutual partners)")
        sender, post_id, message = Post.from_bytes(as_bytes(data, "post")).open(params, keys, partners)
        if post_id in self._posts_seen:
            raise MessageFormatError("replay", "this post was already read")
        self._posts_seen.add(post_id)
        return sender.to_bytes(), message
