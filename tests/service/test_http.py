"""Every endpoint of the three services answers as documented, and every refusal is the documented problem.

Each bad input gets its status and problem ``type`` (RFC 9457, ``application/problem+json``)
naming the field and what is allowed where a field is at fault, is counted in ``/metrics``
under its reason, and the service keeps serving (``/healthz`` after each).
"""

from __future__ import annotations

import base64
import time

import httpx
import numpy as np
import pytest
from service_helpers import SMALL_SPEC

from shuffledp.crypto import VerifyKey
from shuffledp.protocols.pic import Client, SignedBatch, SigningIdentity
from shuffledp.protocols.pic.bulletin import BoardHead, BoardSlice
from shuffledp.protocols.pic.messages import SignedRoundParams
from shuffledp.service.client import ServiceError

pytestmark = pytest.mark.service
P = "urn:shuffledp:pic:problem:"


def problem(r: httpx.Response, status: int, code: str) -> dict:
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["content-type"].startswith("application/problem+json"), r.headers
    body = r.json()
    assert body["type"] == P + code and body["status"] == status and body["detail"], body
    return body


def alive(*urls: str) -> None:
    for url in urls:
        assert httpx.get(url + "/healthz").json() == {"status": "ok"}


def open_round(sdk, n: int = 12, **extra) -> tuple[bytes, list[Client]]:
    """A fresh open round of two groups of n, and one joined client per user (nothing submitted)."""
    server_key = VerifyKey.from_bytes(bytes.fromhex(sdk.key_config("server")["verify_key"]))
    shuffler_key = VerifyKey.from_bytes(bytes.fromhex(sdk.key_config("shuffler")["verify_key"]))
    info = sdk.create_round({**SMALL_SPEC, **extra, "groups": [{"name": "a", "size": n}, {"name": "b", "size": n}]})
    rid = bytes.fromhex(info["round_id"])
    signed, view = sdk.round_params(rid), sdk.view(rid)
    creds = sdk.enrol(2 * n)
    clients = []
    for i, cred in enumerate(creds):
        c = Client(server_key, i // n, shuffler_key=shuffler_key, credential=cred)
        c.join(signed, view)
        clients.append(c)
    return rid, clients


def sub_json(data: bytes) -> dict:
    return {"submission": base64.b64encode(data).decode()}


@pytest.fixture(scope="module")
def urls(services) -> dict[str, str]:
    return {"shuffler": services.url("shuffler"), "server": services.url("server"), "board": services.url("bulletin")}


# ---------------------------------------------------------------- operations and contract
@pytest.mark.parametrize("role", ["shuffler", "server", "board"])
def test_every_service_serves_health_readiness_metrics_and_openapi(urls, role):
    base = urls[role]
    assert httpx.get(base + "/healthz").json() == {"status": "ok"}
    assert httpx.get(base + "/readyz").json() == {"status": "ready"}
    metrics = httpx.get(base + "/metrics")
    assert metrics.status_code == 200 and "shuffledp_refusals_total" in metrics.text
    assert "shuffledp_round_duration_seconds" in metrics.text and "shuffledp_batch_size" in metrics.text
    spec = httpx.get(base + "/openapi.json").json()
    assert spec["openapi"].startswith("3.") and spec["paths"]


def test_key_configuration_is_cached_long_and_names_open_rounds(urls, sdk):
    rid, _ = open_round(sdk)
    r = httpx.get(urls["shuffler"] + "/v1/key-config")
    assert "max-age=86400" in r.headers["cache-control"]
    assert rid.hex() in [x["round_id"] for x in r.json()["rounds"]]
    one = httpx.get(urls["shuffler"] + f"/v1/rounds/{rid.hex()}/key-config")
    assert "immutable" in one.headers["cache-control"] and len(bytes.fromhex(one.json()["kem_public_key"])) == 32
    s = httpx.get(urls["server"] + "/v1/key-config")
    assert "max-age" in s.headers["cache-control"] and len(bytes.fromhex(s.json()["verify_key"])) == 32


def test_published_round_is_visible_on_every_read_endpoint(urls, sdk, published_round):
    rid = published_round["round_id"]
    res = published_round["result"]
    assert res.outputs_verified and res.posts_verified and res.outputs == 24
    info = sdk.round_info(rid)
    assert info["state"] == "published" and len(info["batches"]) == 2 and info["privacy"][0]["valid_reports"] == 12
    board = urls["board"]
    summary = httpx.get(f"{board}/v1/rounds/{rid.hex()}").json()
    assert summary["state"] == "published" and summary["signatures"] == {
        "params": "verified",
        "view": "verified",
        "board": "verified",
    }
    assert [row["valid"] for row in summary["ledger"]] == [12, 12]
    assert rid.hex() in [r["round_id"] for r in httpx.get(board + "/v1/rounds").json()]
    for path in ("params", "view", "head", "board", "buckets/0"):
        r = httpx.get(f"{board}/v1/rounds/{rid.hex()}/{path}")
        assert r.status_code == 200 and r.headers["content-type"] == "application/octet-stream" and r.content
    server_key = VerifyKey.from_bytes(bytes.fromhex(sdk.key_config("server")["verify_key"]))
    assert (
        len(BoardSlice.from_bytes(httpx.get(f"{board}/v1/rounds/{rid.hex()}/board").content).verify(server_key)) == 24
    )
    assert httpx.get(f"{urls['server']}/v1/rounds/{rid.hex()}/params").content == sdk.round_params(rid)
    assert rid.hex() in [r["round_id"] for r in httpx.get(urls["server"] + "/v1/rounds").json()]
    # the relay serves the same bytes and forwards no identifying header
    assert httpx.get(f"{urls['shuffler']}/v1/relay/board/v1/rounds/{rid.hex()}/head").content == sdk.head(rid)
    problem(httpx.get(f"{urls['shuffler']}/v1/relay/board/metrics"), 404, "not-found")
    problem(httpx.get(f"{urls['shuffler']}/v1/relay/board/v1/rounds/%2e%2e/%2e%2e/metrics"), 404, "not-found")
    # only board reads and posts: a board upload or failure notice through the relay is refused
    for upload in (f"v1/rounds/{rid.hex()}/board", f"v1/rounds/{rid.hex()}/failure", "v1/rounds"):
        problem(httpx.post(f"{urls['shuffler']}/v1/relay/board/{upload}", content=b"x"), 404, "not-found")
    html = httpx.get(board + "/").text
    assert rid.hex()[:16] in html
    page = httpx.get(f"{board}/rounds/{rid.hex()}").text
    assert "Privacy ledger" in page and "verified" in page and "riders" in page


def test_relay_answers_not_processed_with_retry_after_while_the_board_is_down(tmp_path):
    """The one answer the SDK retries (503 not-processed), never a 500, and the relay keeps serving."""
    import asyncio

    from shuffledp.service import shuffler_app
    from shuffledp.service.local import free_port
    from shuffledp.service.settings import ServiceSettings

    app = shuffler_app.create_app(ServiceSettings(data_dir=tmp_path, board_url=f"http://127.0.0.1:{free_port()}"))

    async def go() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://shuffler") as c:
            return [await c.get(f"/v1/relay/board/v1/rounds/{'ab' * 16}/params"),
                    await c.post("/v1/relay/board/v1/posts", content=b"x" * 40,
                                 headers={"content-type": "application/octet-stream"}),
                    await c.get("/healthz")]  # fmt: skip

    try:
        get, post, health = asyncio.run(go())
    finally:
        app.state.service.committer.close()
        app.state.service.store.close()
    for r in (get, post):
        problem(r, 503, "not-processed")
        assert int(r.headers["retry-after"]) >= 1
    assert health.json() == {"status": "ok"}


# ---------------------------------------------------------------- the shuffler's boundary
def test_submission_answers_admitted_then_duplicate_and_refuses_replays_and_second_submissions(urls, sdk):
    rid, clients = open_round(sdk)
    c = clients[0]
    first = c.prepare(np.zeros(2), np.random.default_rng(1))
    url = f"{urls['shuffler']}/v1/rounds/{rid.hex()}/submissions"
    r = httpx.post(url, json=sub_json(first))
    assert r.status_code == 201 and r.json() == {"status": "admitted"}
    r = httpx.post(url, json=sub_json(first))
    assert r.status_code == 200 and r.json() == {"status": "duplicate"}
    # the same submission id with another report: a replay
    problem(httpx.post(url, json=sub_json(c.prepare(np.ones(2) * 0.5, np.random.default_rng(2)))), 409, "replay")
    # the same user (credential) with a new submission id in the same group
    twin = Client(c.server_key, 0, shuffler_key=c.shuffler_key, credential=c._credential)
    twin.join(sdk.round_params(rid), sdk.view(rid))
    problem(httpx.post(url, json=sub_json(twin.prepare(np.zeros(2), np.random.default_rng(3)))), 409, "one-per-user")
    alive(urls["shuffler"])


def test_malformed_bodies_are_refused_by_field(urls, sdk):
    rid, clients = open_round(sdk)
    url = f"{urls['shuffler']}/v1/rounds/{rid.hex()}/submissions"
    problem(httpx.post(url, content=b"{not json", headers={"content-type": "application/json"}), 400, "malformed-json")
    for undecodable in (b'{"submission": "\xff\xfe"}', b"[" * 5_000 + b"]" * 5_000, b'{"n": ' + b"9" * 5_000 + b"}"):
        sent = httpx.post(url, content=undecodable, headers={"content-type": "application/json"})
        problem(sent, 400, "malformed-json")
    body = problem(httpx.post(url, json={"submission": "***not base64***"}), 422, "invalid-field")
    assert body["field"] == "submission" and "base64" in body["allowed"]
    body = problem(httpx.post(url, json={"submission": "AAAA", "extra": 1}), 422, "invalid-field")
    assert body["field"] == "extra"
    body = problem(httpx.post(url, json={"submission": 5}), 422, "invalid-field")
    assert body["field"] == "submission"
    problem(httpx.post(url, json={"submission": base64.b64encode(b"PIC junk").decode()}), 400, "malformed-submission")
    problem(httpx.post(url, json={"submission": "A" * 40_000}), 413, "body-too-large")
    problem(
        httpx.post(url, content=b"x" * 100_000, headers={"content-type": "application/json"}), 413, "body-too-large"
    )
    streamed = (b'{"submission": "' + b"A" * 4_096 + b'"' for _ in range(8))  # no Content-Length: chunked
    problem(httpx.post(url, content=streamed, headers={"content-type": "application/json"}), 413, "body-too-large")
    problem(
        httpx.post(f"{urls['shuffler']}/v1/rounds/not-hex/submissions", json={"submission": "AAAA"}), 422, "wrong-round"
    )
    alive(urls["shuffler"])


def test_wrong_round_wrong_group_tampered_and_unenrolled_submissions(urls, sdk):
    rid, clients = open_round(sdk)
    other, _ = open_round(sdk)
    sub = clients[0].prepare(np.zeros(2), np.random.default_rng(1))
    base = urls["shuffler"]
    problem(httpx.post(f"{base}/v1/rounds/{other.hex()}/submissions", json=sub_json(sub)), 422, "wrong-round")
    wrong_group = sub[:21] + (7).to_bytes(2, "big") + sub[23:]
    problem(httpx.post(f"{base}/v1/rounds/{rid.hex()}/submissions", json=sub_json(wrong_group)), 422, "wrong-group")
    tampered = sub[:-1] + bytes([sub[-1] ^ 1])
    body = problem(
        httpx.post(f"{base}/v1/rounds/{rid.hex()}/submissions", json=sub_json(tampered)), 400, "outdated-config"
    )
    assert body["field"] == "submission"
    stranger = Client(clients[0].server_key, 0, shuffler_key=clients[0].shuffler_key, credential=bytes(32))
    stranger.join(sdk.round_params(rid), sdk.view(rid))
    sub = stranger.prepare(np.zeros(2), np.random.default_rng(1))
    problem(httpx.post(f"{base}/v1/rounds/{rid.hex()}/submissions", json=sub_json(sub)), 403, "enrolment")
    metrics = httpx.get(base + "/metrics").text
    for reason in ("wrong-round", "wrong-group", "outdated-config", "enrolment"):
        assert f'shuffledp_refusals_total{{reason="{reason}"}}' in metrics
    assert 'route="/v1/rounds/{round_id}/submissions",status="422"' in metrics  # labelled by template, not by id
    alive(base)


def test_shuffler_answers_a_round_it_never_knew_with_404_unknown_round_like_server_and_board(urls, sdk):
    rid, clients = open_round(sdk)
    sub = sub_json(clients[0].prepare(np.zeros(2), np.random.default_rng(1)))
    unknown = "ab" * 16
    problem(httpx.post(f"{urls['shuffler']}/v1/rounds/{unknown}/submissions", json=sub), 404, "unknown-round")
    problem(httpx.get(f"{urls['shuffler']}/v1/rounds/{unknown}/key-config"), 404, "unknown-round")
    problem(httpx.get(f"{urls['shuffler']}/v1/rounds/{unknown}"), 404, "unknown-round")
    problem(httpx.get(f"{urls['server']}/v1/rounds/{unknown}"), 404, "unknown-round")
    problem(httpx.get(f"{urls['board']}/v1/rounds/{unknown}"), 404, "unknown-round")
    # wrong-round stays the answer for a malformed round id or a submission for another round than the path's
    problem(httpx.post(f"{urls['shuffler']}/v1/rounds/not-hex/submissions", json=sub), 422, "wrong-round")
    alive(urls["shuffler"])


def test_rate_limit_per_enrolled_user(urls, sdk):
    rid, clients = open_round(sdk)
    sub = clients[0].prepare(np.zeros(2), np.random.default_rng(1))
    url = f"{urls['shuffler']}/v1/rounds/{rid.hex()}/submissions"
    codes = [httpx.post(url, json=sub_json(sub)).status_code for _ in range(12)]
    assert codes[0] == 201 and 429 in codes
    r = httpx.post(url, json=sub_json(sub))
    problem(r, 429, "rate-limited")
    assert int(r.headers["retry-after"]) >= 1
    # another user is not limited
    assert httpx.post(url, json=sub_json(clients[1].prepare(np.zeros(2), np.random.default_rng(2)))).status_code == 201


def test_expired_and_closed_rounds_refuse_submissions(urls, sdk):
    rid, clients = open_round(sdk, ttl_seconds=1.0)
    time.sleep(1.3)
    url = f"{urls['shuffler']}/v1/rounds/{rid.hex()}/submissions"
    code = problem(httpx.post(url, json=sub_json(clients[0].prepare(np.zeros(2), np.random.default_rng(1)))), 410,
                   httpx.post(url, json=sub_json(clients[0].submission)).json()["type"].rsplit(":", 1)[1])  # fmt: skip
    assert code["type"].endswith(("expired", "round-closed"))
    rid, clients = open_round(sdk)
    sdk.close_round(rid)
    info = sdk.wait_round(rid, timeout=30)
    assert info["state"] == "failed" and "threshold" in info["error"]
    problem(httpx.post(f"{urls['shuffler']}/v1/rounds/{rid.hex()}/submissions",
                       json=sub_json(clients[0].prepare(np.zeros(2), np.random.default_rng(1)))), 410, "round-closed")  # fmt: skip
    problem(httpx.get(f"{urls['shuffler']}/v1/rounds/{rid.hex()}/key-config"), 410, "round-closed")


def test_a_failed_round_is_failed_on_the_board_with_its_reason_and_reads_answer_410(urls, sdk):
    """Polling clients stop: the server pushes a signed failure, the board's reads answer 410 round-failed."""
    rid, _ = open_round(sdk)
    sdk.close_round(rid)  # nobody submitted: below the anonymity threshold
    assert sdk.wait_round(rid, timeout=30)["state"] == "failed"
    board = urls["board"]
    end = time.monotonic() + 30
    while httpx.get(f"{board}/v1/rounds/{rid.hex()}/head").status_code == 425 and time.monotonic() < end:
        time.sleep(0.2)
    for path in ("head", "board", "buckets/0", f"posts/{'00' * 32}"):
        body = problem(httpx.get(f"{board}/v1/rounds/{rid.hex()}/{path}"), 410, "round-failed")
        assert "threshold" in body["detail"]
    with pytest.raises(ServiceError) as err:  # the SDK's polling read stops at once
        sdk.head(rid, timeout=30)
    assert err.value.status == 410
    summary = httpx.get(f"{board}/v1/rounds/{rid.hex()}").json()
    assert summary["state"] == "failed" and "threshold" in summary["error"]
    assert summary["signatures"]["failure"] == "verified"
    page = httpx.get(f"{board}/rounds/{rid.hex()}").text
    assert ">failed<" in page and "threshold" in page
    # only the server can fail a round
    from shuffledp.service._peers import FAILURE_CONTEXT, failure_message

    other, _ = open_round(sdk)
    forged = SigningIdentity.ephemeral().signing_key.sign(failure_message(other, "x"), context=FAILURE_CONTEXT)
    body = {"reason": "x", "signature": base64.b64encode(forged).decode()}
    problem(httpx.post(f"{board}/v1/rounds/{other.hex()}/failure", json=body), 403, "signature")
    problem(httpx.get(f"{board}/v1/rounds/{other.hex()}/head"), 425, "not-published")
    alive(board)


# ---------------------------------------------------------------- operator and server-to-server links
def test_operator_and_service_endpoints_need_their_tokens(urls, services):
    problem(httpx.post(urls["shuffler"] + "/v1/enrolments", json={"count": 1}), 401, "unauthorized")
    problem(
        httpx.post(urls["shuffler"] + "/v1/enrolments", json={"count": 1}, headers={"authorization": "Bearer x"}),
        401,
        "unauthorized",
    )
    problem(httpx.post(urls["shuffler"] + "/v1/round-keys", json={}), 401, "unauthorized")
    problem(httpx.post(urls["shuffler"] + "/v1/rounds", json={"signed_params": "AAAA"}), 401, "unauthorized")
    problem(httpx.post(urls["shuffler"] + f"/v1/rounds/{'ab' * 16}/close"), 401, "unauthorized")
    problem(
        httpx.post(urls["server"] + "/v1/rounds", json={**SMALL_SPEC, "groups": [{"name": "a", "size": 10}]}),
        401,
        "unauthorized",
    )
    problem(httpx.post(urls["server"] + f"/v1/rounds/{'ab' * 16}/close"), 401, "unauthorized")
    # a caller is authenticated before its body is read: a bad body without the token is still a 401
    for url, bad in (
        (urls["shuffler"] + "/v1/enrolments", {"count": 0}),
        (urls["shuffler"] + "/v1/rounds", {}),
        (urls["shuffler"] + "/v1/round-keys", {"suite": 5}),
        (urls["server"] + "/v1/rounds", {}),
    ):
        problem(httpx.post(url, json=bad), 401, "unauthorized")
    token = {"authorization": f"Bearer {services.token()}"}
    body = problem(httpx.post(urls["server"] + "/v1/rounds", headers=token,
                              json={**SMALL_SPEC, "epsilon_c": -1, "groups": [{"name": "a", "size": 10}]}), 422, "invalid-field")  # fmt: skip
    assert body["field"] == "epsilon_c"
    body = problem(
        httpx.post(urls["shuffler"] + "/v1/enrolments", headers=token, json={"count": 5000}), 422, "invalid-field"
    )
    assert body["field"] == "count" and "1000" in body["allowed"]
    problem(httpx.get(urls["server"] + f"/v1/rounds/{'ab' * 16}"), 404, "unknown-round")
    alive(urls["shuffler"], urls["server"])


def test_round_creation_refuses_duplicate_group_names_naming_the_field(urls, services):
    token = {"authorization": f"Bearer {services.token()}"}
    groups = [{"name": "a", "size": 5}, {"name": "a", "size": 5}]
    body = problem(httpx.post(urls["server"] + "/v1/rounds", headers=token, json={**SMALL_SPEC, "groups": groups}),
                   422, "invalid-field")  # fmt: skip
    assert body["field"] == "groups" and "distinct" in body["allowed"] and "'a'" in body["detail"]
    alive(urls["server"])


def test_only_the_shuffler_delivers_batches(urls, sdk):
    rid, _ = open_round(sdk)
    params = SignedRoundParams.from_bytes(sdk.round_params(rid), server_key=VerifyKey.from_bytes(
        bytes.fromhex(sdk.key_config("server")["verify_key"]))).params  # fmt: skip
    forged = SignedBatch.sign(rid, 0, params.digest, [bytes(params.inner_size)] * 12, params.inner_size,
                              SigningIdentity.ephemeral().signing_key).to_bytes()  # fmt: skip
    url = f"{urls['server']}/v1/rounds/{rid.hex()}/batches"
    octets = {"content-type": "application/octet-stream"}
    problem(httpx.post(url, content=forged, headers=octets), 403, "signature")
    problem(httpx.post(url, content=b"short", headers=octets), 400, "malformed-batch")
    problem(
        httpx.post(f"{urls['server']}/v1/rounds/{'ab' * 16}/batches", content=forged, headers=octets),
        404,
        "unknown-round",
    )
    other, _ = open_round(sdk)
    problem(
        httpx.post(f"{urls['server']}/v1/rounds/{other.hex()}/batches", content=forged, headers=octets),
        422,
        "wrong-round",
    )
    alive(urls["server"])


def test_replayed_batch_is_a_duplicate_and_another_batch_for_a_group_is_refused(urls, services, sdk, published_round):
    rid = published_round["round_id"]
    from shuffledp.service.storage import Store

    store = Store(services.db_for("shuffler"))
    batches = store.batches_of("shuffler", rid)
    store.close()
    url = f"{urls['server']}/v1/rounds/{rid.hex()}/batches"
    r = httpx.post(url, content=batches[0][1], headers={"content-type": "application/octet-stream"})
    assert r.status_code == 200 and r.json()["status"] == "duplicate"
    problem(httpx.post(url, content=batches[1][1][:-1] + b"\0", headers={"content-type": "application/octet-stream"}),
            409, "duplicate-batch")  # fmt: skip


def test_only_the_server_publishes_to_the_board(urls, sdk, published_round):
    rid, _ = open_round(sdk)
    board = urls["board"]
    octets = {"content-type": "application/octet-stream"}
    problem(httpx.get(f"{board}/v1/rounds/{rid.hex()}/head"), 425, "not-published")
    forged_head = BoardHead.sign(rid, [], 0, SigningIdentity.ephemeral().signing_key)
    forged = BoardSlice(forged_head, None, ()).to_bytes()
    problem(httpx.post(f"{board}/v1/rounds/{rid.hex()}/board", content=forged, headers=octets), 403, "signature")
    problem(
        httpx.post(f"{board}/v1/rounds/{rid.hex()}/board", content=b"garbage", headers=octets), 400, "malformed-board"
    )
    problem(httpx.post(f"{board}/v1/rounds/{'ab' * 16}/board", content=forged, headers=octets), 404, "unknown-round")
    # parameters signed by anyone but the pinned server are refused
    params = SignedRoundParams.from_bytes(sdk.round_params(rid), server_key=VerifyKey.from_bytes(
        bytes.fromhex(sdk.key_config("server")["verify_key"]))).params  # fmt: skip
    import dataclasses

    impostor = SigningIdentity.ephemeral()
    fake = dataclasses.replace(params, round_id=bytes(16), server_verify_key=impostor.verify_key)
    signed = SignedRoundParams.sign(fake, impostor.signing_key).to_bytes()
    problem(httpx.post(board + "/v1/rounds", json={"signed_params": base64.b64encode(signed).decode(),
                                                   "view": base64.b64encode(sdk.view(rid)).decode()}), 403, "signature")  # fmt: skip
    # a published board is append-only
    pub = published_round["round_id"]
    r = httpx.post(f"{board}/v1/rounds/{pub.hex()}/board", content=httpx.get(f"{board}/v1/rounds/{pub.hex()}/board").content,
                   headers=octets)  # fmt: skip
    assert r.status_code == 200
    problem(httpx.post(f"{board}/v1/rounds/{pub.hex()}/board", content=forged, headers=octets), 409, "board-exists")
    problem(httpx.get(f"{board}/v1/rounds/{pub.hex()}/buckets/5"), 404, "unknown-bucket")
    problem(httpx.get(f"{board}/v1/rounds/{'cd' * 16}"), 404, "unknown-round")
    problem(httpx.post(board + "/v1/posts", content=b"junk", headers=octets), 400, "malformed-post")
    problem(httpx.get(f"{board}/v1/rounds/{pub.hex()}/posts/zz"), 422, "invalid-field")
    alive(board)


def test_concurrent_announcements_of_a_new_round_store_it_once_and_answer_duplicate(urls, sdk, tmp_path):
    """The server announces at once and again from its background step: a board that had not seen the round
    (restarted, or slow) gets the same announcement several times at once; one stores it, the others answer 200."""
    import asyncio

    from shuffledp.service import bulletin_app
    from shuffledp.service.settings import ServiceSettings

    rid, _ = open_round(sdk)
    body = {"signed_params": base64.b64encode(sdk.round_params(rid)).decode(),
            "view": base64.b64encode(sdk.view(rid)).decode()}  # fmt: skip
    settings = ServiceSettings(data_dir=tmp_path, server_url=urls["server"],
                               server_verify_key=sdk.key_config("server")["verify_key"])  # fmt: skip
    app = bulletin_app.create_app(settings)  # a fresh board that has not seen the round
    svc = app.state.service

    async def go() -> list[httpx.Response]:
        await svc.start()
        try:
            while not svc.ready:
                await asyncio.sleep(0.01)
            transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
            async with httpx.AsyncClient(transport=transport, base_url="http://board") as c:
                answers = await asyncio.gather(*(c.post("/v1/rounds", json=body) for _ in range(8)))
                answers.append(await c.get(f"/v1/rounds/{rid.hex()}/params"))
                return answers
        finally:
            await svc.stop()
            svc.store.close()

    answers = asyncio.run(go())
    assert sorted(r.status_code for r in answers[:8]) == [200] * 7 + [201], [r.text[:200] for r in answers]
    assert answers[8].content == sdk.round_params(rid)


def test_sdk_raises_the_problem_and_does_not_retry_processed_answers(urls, sdk):
    with pytest.raises(ServiceError) as err:
        sdk.round_info(bytes(16))
    assert err.value.status == 404 and err.value.code == "unknown-round"


def test_kem_and_identity_files_are_private(services):
    keys = services.data_dir / "keys"
    assert oct(keys.stat().st_mode & 0o777) == "0o700"
    files = [p for p in keys.iterdir() if p.is_file()]
    assert files and all(oct(p.stat().st_mode & 0o777) == "0o600" for p in files), [
        (p.name, oct(p.stat().st_mode)) for p in files
    ]
    assert any(p.name.endswith(".identity") for p in files)
