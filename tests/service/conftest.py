"""Fixtures of the PIC service tests: services as processes on loopback, a published round, PostgreSQL.

PostgreSQL tests need ``SHUFFLEDP_TEST_POSTGRES_URL`` (``.ci/run`` starts a server on loopback
and sets it).  Outside CI they are skipped, and say so; in CI (``CI=true``) a missing server
is a failure, never a skip.
"""

from __future__ import annotations

import os
import secrets

import numpy as np
import pytest
from service_helpers import SMALL_SPEC

from shuffledp.service.client import PicServiceClient
from shuffledp.service.local import LocalServices

PG_ENV = "SHUFFLEDP_TEST_POSTGRES_URL"


def postgres_admin_url() -> str:
    url = os.environ.get(PG_ENV)
    if not url:
        if os.environ.get("CI"):
            pytest.fail(f"CI must provide PostgreSQL: {PG_ENV} is not set (.ci/run starts a server and sets it)")
        pytest.skip(f"PostgreSQL tests run in CI (.ci/run starts a server); set {PG_ENV} to run them here")
    return url


def fresh_postgres_db() -> str:
    """A new, empty database on the test server; returns its SQLAlchemy URL."""
    import sqlalchemy as sa

    admin = postgres_admin_url()
    name = f"pic_{secrets.token_hex(6)}"
    engine = sa.create_engine(admin.replace("postgresql://", "postgresql+psycopg://", 1), isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(sa.text(f"CREATE DATABASE {name}"))
    engine.dispose()
    return admin.rsplit("/", 1)[0] + "/" + name


@pytest.fixture(scope="session", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def services(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> LocalServices:
    """The three services as processes, on SQLite files or on one PostgreSQL database (every test runs on both)."""
    db = fresh_postgres_db() if request.param == "postgres" else None
    with LocalServices(tmp_path_factory.mktemp(f"pic-services-{request.param}"), db_url=db) as s:
        yield s


@pytest.fixture(scope="session")
def sdk(services: LocalServices) -> PicServiceClient:
    with PicServiceClient(services.url("shuffler"), server_url=services.url("server"),
                          operator_token=services.token()) as c:  # fmt: skip
        yield c


@pytest.fixture(scope="session")
def published_round(services: LocalServices) -> dict:
    """One round of 2 x 12 users run to the end over HTTP (shared by the endpoint tests)."""
    import asyncio

    from shuffledp.service.client import AsyncPicServiceClient
    from shuffledp.service.simulate import run_http_round

    rng = np.random.default_rng(7)
    groups = [("riders", rng.uniform(-1, 1, (12, 2))), ("drivers", rng.uniform(-1, 1, (12, 2)))]

    async def go():  # noqa: ANN202
        async with AsyncPicServiceClient(services.url("shuffler"), server_url=services.url("server"),
                                         operator_token=services.token()) as a:  # fmt: skip
            return await run_http_round(a, groups, SMALL_SPEC, rng=rng)

    result = asyncio.run(go())
    assert result.state == "published", result
    return {"result": result, "round_id": bytes.fromhex(result.round_id)}
