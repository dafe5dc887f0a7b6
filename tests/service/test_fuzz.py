"""Property-based fuzzing of every operation of each service's /openapi.json (schemathesis).

Requests are generated from each running service's own schema (valid and invalid bodies,
path parameters, raw protocol bytes); no answer may be a server error (5xx), and the service
must keep serving afterwards.  Operator and service endpoints are fuzzed without their tokens
(they must refuse cleanly); the routes they guard are exercised by the HTTP tests.
"""

from __future__ import annotations

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error

pytestmark = [pytest.mark.service, pytest.mark.timeout(900)]


_SETTINGS = settings(
    max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None
)


@pytest.mark.parametrize("role", ["shuffler", "server", "bulletin"])
def test_fuzz_every_operation(services, role):
    base = services.url(role)
    schema = schemathesis.openapi.from_url(base + "/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 6
    failures, calls = [], []
    for operation in operations:

        @given(case=operation.as_strategy())
        @_SETTINGS
        def run(case) -> None:
            response = case.call(base_url=base, timeout=30)
            calls.append(response.status_code)
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.path}: {response.status_code} {response.text[:200]}")
            case.validate_response(response, checks=(not_a_server_error,))

        try:
            run()
        except Exception as exc:  # noqa: BLE001 - collect every operation's failure, report them together
            if not failures or operation.path not in failures[-1]:
                failures.append(f"{operation.method.upper()} {operation.path}: {type(exc).__name__}: {str(exc)[:300]}")
        assert httpx.get(base + "/healthz").status_code == 200, f"{role} stopped serving after {operation.path}"
    assert not failures, "\n".join(failures)
    assert len(calls) >= 5 * len(operations), (len(calls), sorted(set(calls)))  # every operation really exercised
    print(role, len(operations), "operations", len(calls), "requests", sorted(set(calls)))
