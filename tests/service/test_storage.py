"""Storage of the PIC services: the SQLite default (file created on first start, WAL, synchronous=FULL),
PostgreSQL by URL, Alembic migrations, round states, group commits; settings from env and a file; key files."""

from __future__ import annotations

import os
import threading

import pytest
import sqlalchemy as sa

from conftest import fresh_postgres_db
from shuffledp.crypto import KemKeyPair
from shuffledp.service.keys import KeyStore
from shuffledp.service.settings import ServiceSettings
from shuffledp.service.storage import GroupCommitter, Store


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request, tmp_path):
    url = fresh_postgres_db() if request.param == "postgres" else f"sqlite:///{tmp_path / 'sub' / 'pic.sqlite3'}"
    s = Store(url)
    yield s
    s.close()


def test_sqlite_file_is_created_on_first_start_in_wal_mode_with_full_sync(tmp_path):
    path = tmp_path / "new" / "pic.sqlite3"
    assert not path.exists()
    s = Store(ServiceSettings(data_dir=tmp_path / "new").database_url())
    assert path.exists()
    with s.engine.connect() as conn:
        assert conn.execute(sa.text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(sa.text("PRAGMA synchronous")).scalar() == 2  # FULL
    s.close()


def test_migrations_are_applied_once_and_rerun_safely(store):
    Store(store.url).close()  # a second start upgrades nothing
    with store.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar() == "0001"
        names = set(sa.inspect(conn).get_table_names())
    assert {"rounds", "enrolments", "submissions", "batches", "posts", "pins"} <= names


def test_round_states_are_stored_with_the_data_and_move_only_from_expected_states(store):
    rid = bytes(range(16))
    store.put_round("server", rid, "open", deadline=1.0, signed_params=b"p", info={"announced": False})
    assert not store.update_round("server", rid, state="computed", expect="shuffled")
    assert store.update_round("server", rid, state="closed", expect="open", info={"announced": True})
    row = store.get_round("server", rid)
    assert row["state"] == "closed" and row["info"] == {"announced": True} and row["signed_params"] == b"p"
    store.put_batches("server", rid, [(0, b"i" * 16, b"batch")], state="shuffled")
    assert store.get_round("server", rid)["state"] == "shuffled" and store.batches_of("server", rid)[0][1] == b"batch"
    assert [r["round_id"] for r in store.list_rounds("server", ["shuffled"])] == [rid]
    assert store.list_rounds("shuffler") == []


def test_a_round_is_stored_once_and_a_concurrent_second_insert_changes_nothing(store):
    rid = bytes(range(16, 32))
    results = []
    threads = [threading.Thread(target=lambda k=k: results.append(store.put_round("board", rid, "open",
               signed_params=b"p%d" % k, view=b"v"))) for k in range(8)]  # fmt: skip
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * 7 + [True]
    row = store.get_round("board", rid)
    assert not store.put_round("board", rid, "failed", signed_params=b"other")
    assert store.get_round("board", rid) == row and row["state"] == "open"


def test_group_commits_acknowledge_only_committed_rows_in_few_transactions(store):
    committer = GroupCommitter(store, max_rows=256, wait_ms=5)
    rid = b"r" * 16
    futures = []

    def submit(k: int) -> None:
        for i in range(100):
            futures.append(committer.submit({"round_id": rid, "group_id": 0, "submission_id": bytes([k, i]) * 8,
                                             "data": b"x", "created_at": 0.0}))  # fmt: skip

    threads = [threading.Thread(target=submit, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for f in futures:
        f.result(timeout=30)
    committer.close()
    assert len(store.submissions_of(rid)) == 800
    assert committer.commits < 800 / 4  # batched: one commit serves many requests
    # a failed commit fails every waiting request (they answer "not processed")
    committer = GroupCommitter(store)
    bad = committer.submit(
        {"round_id": rid, "group_id": 0, "submission_id": bytes([0, 0]) * 8, "data": b"x", "created_at": 0.0}
    )
    with pytest.raises(sa.exc.IntegrityError):
        bad.result(timeout=30)
    committer.close()


def test_pins_keep_the_first_key(store):
    assert store.get_pin("verify-key:server") is None
    assert store.pin("verify-key:server", b"a" * 32) == b"a" * 32
    assert store.pin("verify-key:server", b"b" * 32) == b"a" * 32


def test_settings_come_from_arguments_then_environment_then_a_toml_file(tmp_path, monkeypatch):
    config = tmp_path / "pic.toml"
    config.write_text('db_url = "sqlite:///from-file.db"\nrate_per_minute = 5.0\nshuffler_url = "http://file"\n')
    monkeypatch.setenv("SHUFFLEDP_CONFIG", str(config))
    monkeypatch.setenv("SHUFFLEDP_RATE_PER_MINUTE", "7")
    s = ServiceSettings(shuffler_url="http://arg")
    assert (s.db_url, s.rate_per_minute, s.shuffler_url) == ("sqlite:///from-file.db", 7.0, "http://arg")
    with pytest.raises(ValueError):
        ServiceSettings(unknown_setting=1)


def test_key_files_are_0600_in_a_0700_folder_and_tokens_are_created_once(tmp_path):
    keys = KeyStore(tmp_path)
    kem = KemKeyPair.generate()
    keys.save_kem("server-round-x", kem)
    assert keys.load_kem("server-round-x").public_key == kem.public_key
    tokens = set()
    threads = [threading.Thread(target=lambda: tokens.add(KeyStore(tmp_path).token("service"))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(tokens) == 1
    keys.identity("server")
    assert oct(os.stat(keys.root).st_mode & 0o777) == "0o700"
    for p in keys.root.iterdir():
        assert oct(p.stat().st_mode & 0o777) == "0o600", p.name
    keys.drop_kem("server-round-x")
    assert not keys.has_kem("server-round-x")
