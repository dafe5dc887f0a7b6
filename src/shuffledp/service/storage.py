"""Durable state of the PIC services: SQLAlchemy Core tables, Alembic migrations, group commits.

SQLite is the embedded default (a file created on first start, WAL journal,
``synchronous=FULL`` so a commit survives power loss, not only a killed process); PostgreSQL
is used when given a URL (``postgresql+psycopg://...``).  The schema is created and upgraded
by Alembic (``service/migrations``) at every start.

Write path (issue 18: no repeat of the write contention reported for Janus): one row per
submission, inserted; no counter row is updated per submission (counts are ``COUNT(*)`` on
demand or kept in memory), and submissions are committed in groups (`GroupCommitter`: every
request waits for the commit that holds its row, so an acknowledgement always follows a
durable write, and one commit serves every request that arrived meanwhile).

Rounds carry their state (``open``, ``closed``, ``shuffled``, ``computed``, ``published``;
``failed`` when a threshold is not met) with the data, per role, so any process can restart
and continue.  Nothing secret is stored: submissions are the outer ciphertexts, batches the
inner ones, keys live in `shuffledp.service.keys`.
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

__all__ = ["GroupCommitter", "Store", "make_engine", "metadata", "migrate"]

metadata = sa.MetaData()
_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

rounds = sa.Table(
    "rounds", metadata,
    sa.Column("role", sa.String(16), primary_key=True),
    sa.Column("round_id", sa.LargeBinary(16), primary_key=True),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
    sa.Column("deadline", sa.Float, nullable=True),
    sa.Column("signed_params", sa.LargeBinary, nullable=True),
    sa.Column("view", sa.LargeBinary, nullable=True),
    sa.Column("board", sa.LargeBinary, nullable=True),
    sa.Column("info", sa.Text, nullable=False, default="{}"),
)  # fmt: skip
enrolments = sa.Table(
    "enrolments", metadata,
    sa.Column("user_id", _ID, primary_key=True, autoincrement=True),
    sa.Column("credential_hash", sa.LargeBinary(32), nullable=False, unique=True),
    sa.Column("created_at", sa.Float, nullable=False),
)  # fmt: skip
submissions = sa.Table(
    "submissions", metadata,
    sa.Column("id", _ID, primary_key=True, autoincrement=True),
    sa.Column("round_id", sa.LargeBinary(16), nullable=False),
    sa.Column("group_id", sa.Integer, nullable=False),
    sa.Column("submission_id", sa.LargeBinary(16), nullable=False),
    sa.Column("data", sa.LargeBinary, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.UniqueConstraint("round_id", "submission_id", name="uq_submission_id"),
)  # fmt: skip
batches = sa.Table(
    "batches", metadata,
    sa.Column("role", sa.String(16), primary_key=True),
    sa.Column("round_id", sa.LargeBinary(16), primary_key=True),
    sa.Column("group_id", sa.Integer, primary_key=True),
    sa.Column("batch_id", sa.LargeBinary(16), nullable=False),
    sa.Column("data", sa.LargeBinary, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
)  # fmt: skip
posts = sa.Table(
    "posts", metadata,
    sa.Column("post_id", sa.LargeBinary(32), primary_key=True),
    sa.Column("round_id", sa.LargeBinary(16), nullable=False),
    sa.Column("recipient", sa.LargeBinary, nullable=False),
    sa.Column("data", sa.LargeBinary, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
)  # fmt: skip
pins = sa.Table(
    "pins", metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("value", sa.LargeBinary, nullable=False),
)  # fmt: skip
sa.Index("ix_submissions_round", submissions.c.round_id, submissions.c.id)
sa.Index("ix_posts_recipient", posts.c.round_id, posts.c.recipient)

STATES = ("open", "closed", "shuffled", "computed", "published", "failed")


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=FULL")
    cur.execute("PRAGMA busy_timeout=10000")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def make_engine(url: str) -> Engine:
    """An engine for ``url`` (SQLite: the file and its folder are created; WAL, synchronous=FULL)."""
    if url.startswith("sqlite"):
        path = sa.engine.make_url(url).database
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = sa.create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        sa.event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
    return sa.create_engine(url, pool_pre_ping=True, pool_size=8, max_overflow=8)


def migrate(engine: Engine) -> None:
    """Create or upgrade the schema to the newest Alembic revision (safe to run at every start)."""
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).with_name("migrations")))
    with _migration_lock(engine), engine.begin() as conn:
        if conn.dialect.name == "postgresql":  # services sharing one database start at once: one migrates
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(7270181)"))
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")


@contextlib.contextmanager
def _migration_lock(engine: Engine) -> Iterator[None]:
    """For a SQLite file, an exclusive lock on ``<file>.migrate.lock`` while migrating (processes sharing it)."""
    path = engine.url.database if engine.dialect.name == "sqlite" else None
    if not path or path == ":memory:":
        yield
        return
    import fcntl

    with open(f"{path}.migrate.lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


class Store:
    """Queries of the three services over one engine (each service uses its own rows, by ``role``)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        migrate(self.engine)

    def close(self) -> None:
        self.engine.dispose()

    def ping(self) -> bool:
        with self.engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
        return True

    # ---------------------------------------------------------------- rounds
    def put_round(self, role: str, round_id: bytes, state: str, **fields: Any) -> bool:
        """Store a round's row once; False if the role already has a row for it (the caller compares contents).

        A concurrent insert of the same round (two announcements racing) is the same case, on
        SQLite and PostgreSQL alike: the primary key refuses the second row and nothing changes.
        """
        now = time.time()
        info = fields.pop("info", {})
        try:
            with self.engine.begin() as conn:
                conn.execute(sa.insert(rounds).values(role=role, round_id=round_id, state=state, created_at=now,
                                                      updated_at=now, info=json.dumps(info), **fields))  # fmt: skip
        except sa.exc.IntegrityError:  # stored before, or by a concurrent first insert
            return False
        return True

    def update_round(
        self, role: str, round_id: bytes, *, expect: str | Sequence[str] | None = None, **fields: Any
    ) -> bool:
        """Update a round's row (``info`` is merged); with ``expect``, only from those states. True if updated."""
        with self.engine.begin() as conn:
            row = conn.execute(sa.select(rounds.c.state, rounds.c.info).where(
                rounds.c.role == role, rounds.c.round_id == round_id)).first()  # fmt: skip
            if row is None:
                return False
            if expect is not None and row.state not in ((expect,) if isinstance(expect, str) else tuple(expect)):
                return False
            if "info" in fields:
                fields["info"] = json.dumps({**json.loads(row.info), **fields["info"]})
            conn.execute(sa.update(rounds).where(rounds.c.role == role, rounds.c.round_id == round_id)
                         .values(updated_at=time.time(), **fields))  # fmt: skip
        return True

    def get_round(self, role: str, round_id: bytes) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(rounds).where(rounds.c.role == role, rounds.c.round_id == round_id)).first()
        return _round_dict(row) if row is not None else None

    def list_rounds(self, role: str, states: Iterable[str] | None = None) -> list[dict[str, Any]]:
        q = sa.select(rounds).where(rounds.c.role == role)
        if states is not None:
            q = q.where(rounds.c.state.in_(list(states)))
        with self.engine.connect() as conn:
            return [_round_dict(r) for r in conn.execute(q.order_by(rounds.c.created_at))]

    # ---------------------------------------------------------------- enrolment
    def enrol(self, hashes: Sequence[bytes]) -> list[int]:
        now = time.time()
        with self.engine.begin() as conn:
            ids = []
            for h in hashes:
                ids.append(
                    conn.execute(sa.insert(enrolments).values(credential_hash=h, created_at=now)).inserted_primary_key[
                        0
                    ]
                )
        return ids

    def enrolled(self) -> dict[bytes, int]:
        with self.engine.connect() as conn:
            return {r.credential_hash: int(r.user_id) for r in conn.execute(sa.select(enrolments))}

    # ---------------------------------------------------------------- submissions
    def insert_submissions(self, rows: Sequence[dict[str, Any]]) -> None:
        with self.engine.begin() as conn:
            conn.execute(sa.insert(submissions), list(rows))

    def submissions_of(self, round_id: bytes) -> list[bytes]:
        with self.engine.connect() as conn:
            q = sa.select(submissions.c.data).where(submissions.c.round_id == round_id).order_by(submissions.c.id)
            return [bytes(r.data) for r in conn.execute(q)]

    def submission_ids(self, round_id: bytes) -> set[bytes]:
        with self.engine.connect() as conn:
            q = sa.select(submissions.c.submission_id).where(submissions.c.round_id == round_id)
            return {bytes(r.submission_id) for r in conn.execute(q)}

    # ---------------------------------------------------------------- batches
    def put_batches(
        self, role: str, round_id: bytes, items: Sequence[tuple[int, bytes, bytes]], **round_fields: Any
    ) -> None:
        """Store batches ``(group_id, batch_id, data)`` and (optionally) move the round, in one transaction."""
        now = time.time()
        with self.engine.begin() as conn:
            for g, batch_id, data in items:
                conn.execute(sa.insert(batches).values(role=role, round_id=round_id, group_id=g, batch_id=batch_id,
                                                       data=data, created_at=now))  # fmt: skip
            if round_fields:
                conn.execute(sa.update(rounds).where(rounds.c.role == role, rounds.c.round_id == round_id)
                             .values(updated_at=now, **round_fields))  # fmt: skip

    def batches_of(self, role: str, round_id: bytes) -> dict[int, tuple[bytes, bytes]]:
        with self.engine.connect() as conn:
            q = sa.select(batches).where(batches.c.role == role, batches.c.round_id == round_id)
            return {int(r.group_id): (bytes(r.batch_id), bytes(r.data)) for r in conn.execute(q)}

    # ---------------------------------------------------------------- posts and pins
    def put_post(self, post_id: bytes, round_id: bytes, recipient: bytes, data: bytes) -> bool:
        """Store a post once; False if it was already stored."""
        try:
            with self.engine.begin() as conn:
                conn.execute(sa.insert(posts).values(post_id=post_id, round_id=round_id, recipient=recipient,
                                                     data=data, created_at=time.time()))  # fmt: skip
        except sa.exc.IntegrityError:
            return False
        return True

    def insert_posts(self, rows: Sequence[dict[str, Any]]) -> None:
        with self.engine.begin() as conn:
            conn.execute(sa.insert(posts), list(rows))

    def all_posts(self) -> list[bytes]:
        with self.engine.connect() as conn:
            return [bytes(r.data) for r in conn.execute(sa.select(posts.c.data).order_by(posts.c.created_at))]

    def get_pin(self, name: str) -> bytes | None:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(pins.c.value).where(pins.c.name == name)).first()
        return bytes(row.value) if row is not None else None

    def pin(self, name: str, value: bytes) -> bytes:
        """Pin ``value`` under ``name`` on first use; returns the pinned value (which may differ: the caller compares)."""
        try:
            with self.engine.begin() as conn:
                conn.execute(sa.insert(pins).values(name=name, value=value))
        except sa.exc.IntegrityError:  # pinned before (or by a concurrent first use)
            pass
        return self.get_pin(name) or value


def _round_dict(row: Any) -> dict[str, Any]:
    d = dict(row._mapping)
    d["info"] = json.loads(d["info"] or "{}")
    for k in ("round_id", "signed_params", "view", "board"):
        if d.get(k) is not None:
            d[k] = bytes(d[k])
    return d


class GroupCommitter:
    """Commits submissions in groups: `submit` returns a future resolved once the row's commit is durable.

    One thread takes the first waiting row, gathers up to ``max_rows`` more that arrive
    within ``wait_ms``, inserts them in one transaction and resolves every future (or sets
    the same exception on every future of a failed commit: those requests answer "not
    processed", and the client resends).
    """

    def __init__(self, store: Store, max_rows: int = 1024, wait_ms: float = 2.0, insert: Any = None) -> None:
        """``insert(rows)`` writes one group in one transaction (default: `Store.insert_submissions`)."""
        self.store, self.max_rows, self.wait = store, max_rows, wait_ms / 1000.0
        self.insert = insert or store.insert_submissions
        self._queue: queue.Queue[tuple[dict[str, Any], Future[None]] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="group-commit", daemon=True)
        self._thread.start()
        self.commits = 0

    def submit(self, row: dict[str, Any]) -> Future[None]:
        fut: Future[None] = Future()
        self._queue.put((row, fut))
        return fut

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            items = [item]
            deadline = time.monotonic() + self.wait
            stop = False
            while len(items) < self.max_rows:
                try:
                    nxt = (
                        self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
                        if self.wait
                        else self._queue.get_nowait()
                    )
                except queue.Empty:
                    break
                if nxt is None:
                    stop = True
                    break
                items.append(nxt)
            try:
                self.insert([row for row, _ in items])
                self.commits += 1
                for _, fut in items:
                    fut.set_result(None)
            except Exception as exc:  # noqa: BLE001 - every waiting request learns its row is not durable
                for _, fut in items:
                    fut.set_exception(exc)
            if stop:
                return
