"""PIC wire messages: exact layouts, round trips, strict parsing, signatures and context binding."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffledp.crypto import SUITE_NAMES, KemKeyPair, SigningKeyPair, get_suite
from shuffledp.errors import CryptoError, EnvelopeSizeError, MessageFormatError, ProtocolError
from shuffledp.protocols.pic.messages import (
    CREDENTIAL_SIZE,
    SUBMISSION_ID_SIZE,
    GroupParams,
    OneTimeKeys,
    Post,
    Pseudonym,
    ReportFormat,
    RoundParams,
    SignedRoundParams,
    Submission,
    decode_reports,
    encode_report,
    new_round_id,
    open_report,
    seal_report,
)

LOC = ReportFormat("float64", 2)


def _groups():
    return (
        GroupParams(0, "riders", "minkowski", 3.0, LOC, 10, 1e-6, {"norm": "linf"}),
        GroupParams(1, "drivers", "planar_laplace", 2.5, LOC, 10, 1e-6),
        GroupParams(2, "voters", "krr", 1.0, ReportFormat("int64", 1), 5, 1e-5, {"k": 4}),
        GroupParams(3, "flags", "unary", 1.0, ReportFormat("bits", 11), 5, 1e-5),
    )


TASK = {"k": 1, "name": "min-weight", "radius": 0.4}


class Server:
    """Keys of a server and a shuffler, and round parameters naming both."""

    def __init__(self, suite, groups=None):
        self.kem = KemKeyPair.generate(suite)
        self.sig = SigningKeyPair.generate()
        self.shuffler_kem = KemKeyPair.generate(suite)
        self.shuffler_sig = SigningKeyPair.generate()
        self.params = RoundParams(
            new_round_id(),
            suite,
            self.kem.public_key,
            self.sig.verify_key,
            groups or _groups()[:2],
            output_payload_size=100,
            post_payload_size=40,
            shuffler_kem_key=self.shuffler_kem.public_key,
            shuffler_verify_key=self.shuffler_sig.verify_key,
            task=TASK,
        )

    def rp(self, groups, *args, suite="x25519", kem=None, round_id=None, **kwargs):
        """RoundParams with this server's keys (positional output/post/report sizes as before)."""
        p = self.params
        return RoundParams(round_id or p.round_id, suite, kem or p.server_kem_key, p.server_verify_key, groups,
                           *args[:2], p.shuffler_kem_key if kem is None else kem, p.shuffler_verify_key, TASK,
                           report_payload_size=args[2] if len(args) > 2 else None, **kwargs)  # fmt: skip


@pytest.fixture(scope="module", params=SUITE_NAMES)
def server(request):
    return Server(request.param)


@pytest.fixture(scope="module")
def x_server():
    return Server("x25519", _groups())


CREDENTIAL = bytes(range(CREDENTIAL_SIZE))


def _envelope(server, group_id=0, values=(0.5, -0.25), keys=None):
    """A client's submission (outer envelope) and its one-time keys."""
    keys = keys or OneTimeKeys.generate(server.params.suite)
    fmt = server.params.group(group_id).report
    inner = seal_report(server.params, group_id, encode_report(keys.pseudonym, values, fmt))
    return Submission.seal(server.params, group_id, CREDENTIAL, bytes(SUBMISSION_ID_SIZE), inner), keys


# ---------------------------------------------------------------- envelopes (two layers)


def test_x25519_envelopes_for_2d_locations_are_129_and_249_bytes():
    s = Server("x25519")
    env, _ = _envelope(s)
    # inner: enc 32 + (pseudonym 64 + report 16 + marker 1) + GCM tag 16
    assert s.params.inner_size == 32 + 81 + 16 == 129
    # outer: header 5 + round 16 + group 2 + enc 32 + (credential 32 + id 16 + inner 129 + marker 1) + tag 16
    assert len(env.to_bytes()) == s.params.envelope_size == 23 + 32 + 178 + 16 == 249 <= 256


def test_pq_hybrid_envelope_sizes_are_the_closed_form():
    s = Server("pq-hybrid")
    env, _ = _envelope(s)
    pseudonym = 1184 + 32 + 32
    inner = (1088 + 32) + (pseudonym + 16 + 1) + 16
    assert s.params.inner_size == inner
    assert len(env.to_bytes()) == 5 + 16 + 2 + (1088 + 32) + (32 + 16 + inner + 1) + 16


def test_envelope_round_trip_and_server_decrypts_the_report(server):
    env, keys = _envelope(server, 1, (0.125, -1.0))
    parsed = Submission.from_bytes(env.to_bytes(), server.params)
    assert parsed == env
    credential, submission_id, inner = parsed.open(server.params, server.shuffler_kem)
    assert credential == CREDENTIAL and submission_id == bytes(16) and len(inner) == server.params.inner_size
    with pytest.raises(CryptoError):  # the shuffler's layer does not open with the server's key
        parsed.open(server.params, server.kem)
    plaintext = open_report(server.params, server.kem, 1, inner)
    dec = decode_reports([plaintext], server.params.suite, LOC)
    assert dec.well_formed.tolist() == [True]
    assert dec.values.tolist() == [[0.125, -1.0]]
    assert dec.pseudonyms[0].tobytes() == keys.pseudonym.to_bytes()


_VALUES = {
    0: st.tuples(st.floats(-1, 1), st.floats(-1, 1)),
    1: st.tuples(st.floats(-1e300, 1e300), st.floats(-1e300, 1e300)),
    2: st.tuples(st.integers(0, 3)),
    3: st.lists(st.integers(0, 1), min_size=11, max_size=11),
}


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_envelope_of_a_round_has_the_same_length(x_server, data):
    """Groups with 16-, 8- and 2-byte reports: every envelope has the round's one length."""
    group = data.draw(st.sampled_from(sorted(_VALUES)))
    values = data.draw(_VALUES[group])
    env, _ = _envelope(x_server, group, values)
    assert len(env.to_bytes()) == x_server.params.envelope_size


def test_replayed_envelope_for_another_group_round_or_view_fails_to_decrypt(server):
    env, _ = _envelope(server, 0)
    moved = Submission(env.round_id, 1, env.sealed)  # same ciphertext, header says group 1
    with pytest.raises(CryptoError, match="decryption failed"):
        moved.open(server.params, server.shuffler_kem)
    other_round = Submission(new_round_id(), 0, env.sealed)
    with pytest.raises(CryptoError, match="decryption failed"):
        other_round.open(server.params, server.shuffler_kem)
    _, _, inner = env.open(server.params, server.shuffler_kem)
    with pytest.raises(CryptoError, match="decryption failed"):
        open_report(server.params, server.kem, 1, inner)
    import dataclasses

    other_view = dataclasses.replace(server.params, min_bucket_size=2)  # one field differs: another hash
    assert other_view.digest != server.params.digest
    with pytest.raises(CryptoError, match="decryption failed"):
        env.open(other_view, server.shuffler_kem)
    with pytest.raises(CryptoError, match="decryption failed"):
        open_report(other_view, server.kem, 0, inner)


def test_shuffler_side_checks_round_group_and_length(server):
    data = _envelope(server)[0].to_bytes()
    other = Server(server.params.suite)
    with pytest.raises(MessageFormatError, match="submission is for round") as e:
        Submission.from_bytes(data, other.params)
    assert e.value.reason == "round"
    unknown_group = data[:21] + (7).to_bytes(2, "big") + data[23:]
    with pytest.raises(MessageFormatError, match="no group 7") as e:
        Submission.from_bytes(unknown_group, server.params)
    assert e.value.reason == "group"
    for bad in (data[:-1], data + b"\x00"):
        with pytest.raises(MessageFormatError, match=f"submissions are {server.params.envelope_size}") as e:
            Submission.from_bytes(bad, server.params)
        assert e.value.reason == "length"


def test_oversize_report_plaintext_is_refused(server):
    with pytest.raises(EnvelopeSizeError):
        seal_report(server.params, 0, b"x" * (server.params.report_payload_size + 1))


# ---------------------------------------------------------------- header checks (every message type)


def _all_messages():
    s = Server("x25519")
    env, keys = _envelope(s)
    post = Post.create(s.params, OneTimeKeys.generate("x25519"), keys.pseudonym, b"hello")
    signed = SignedRoundParams.sign(s.params, s.sig)
    return {
        "envelope": (env.to_bytes(), lambda b: Submission.from_bytes(b)),
        "post": (post.to_bytes(), Post.from_bytes),
        "round_params": (signed.to_bytes(), lambda b: SignedRoundParams.from_bytes(b, server_key=s.sig.verify_key)),
    }


MESSAGES = _all_messages()


@pytest.mark.parametrize("name", MESSAGES)
def test_bad_magic_version_and_type_are_named(name):
    data, parse = MESSAGES[name]
    cases = {
        "magic": b"PIX" + data[3:],
        "version": data[:3] + b"\x01" + data[4:],
        "type": data[:4] + bytes([data[4] % 6 + 1]) + data[5:],
    }
    for reason, bad in cases.items():
        with pytest.raises(ProtocolError) as e:
            parse(bad)
        assert isinstance(e.value, MessageFormatError) and e.value.reason == reason
    with pytest.raises(MessageFormatError, match="unknown type 99"):
        parse(data[:4] + b"\x63" + data[5:])


@pytest.mark.parametrize("name", ["post", "round_params"])
def test_every_truncation_and_trailing_bytes_are_refused(name):
    data, parse = MESSAGES[name]
    for cut in range(len(data)):
        with pytest.raises(MessageFormatError) as e:
            parse(data[:cut])
        assert e.value.reason == "length"
    with pytest.raises(MessageFormatError, match="trailing") as e:
        parse(data + b"\x00")
    assert e.value.reason == "length"


def test_envelope_shorter_than_its_header_is_refused():
    data, _ = MESSAGES["envelope"]
    for cut in range(23):
        with pytest.raises(MessageFormatError) as e:
            Submission.from_bytes(data[:cut])
        assert e.value.reason == "length"


def test_non_bytes_are_refused():
    with pytest.raises(MessageFormatError, match="must be bytes, got str"):
        Post.from_bytes("PIC")


# ---------------------------------------------------------------- round parameters


def test_signed_round_params_round_trip(server):
    data = SignedRoundParams.sign(server.params, server.sig).to_bytes()
    parsed = SignedRoundParams.from_bytes(data, server_key=server.sig.verify_key)
    assert parsed.params == server.params
    assert parsed.to_bytes() == data
    assert parsed.params.envelope_size == server.params.envelope_size


def test_canonical_body_is_sorted_compact_json(server):
    body = server.params.canonical_bytes()
    obj = json.loads(body)
    assert body == json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()
    assert obj["suite"] == server.params.suite and obj["version"] == 2
    assert obj["task"] == TASK and obj["bucket_bits"] == 0 and obj["min_bucket_size"] == 1
    assert bytes.fromhex(obj["shuffler_kem_key"]) == server.shuffler_kem.public_key.to_bytes()
    assert obj["groups"][0]["local_epsilon"] == 3.0 and obj["groups"][0]["randomizer_params"] == {"norm": "linf"}
    assert bytes.fromhex(obj["server_kem_key"]) == server.kem.public_key.to_bytes()


def test_tampered_round_params_fail_signature(server):
    data = bytearray(SignedRoundParams.sign(server.params, server.sig).to_bytes())
    body_at = data.index(b'"local_epsilon":3.0')
    data[body_at + len('"local_epsilon":')] = ord("9")  # 3.0 -> 9.0
    with pytest.raises(CryptoError, match="invalid pic/round-params signature"):
        SignedRoundParams.from_bytes(bytes(data), server_key=server.sig.verify_key)
    sig_flipped = bytearray(SignedRoundParams.sign(server.params, server.sig).to_bytes())
    sig_flipped[-1] ^= 0x80
    with pytest.raises(CryptoError):
        SignedRoundParams.from_bytes(bytes(sig_flipped), server_key=server.sig.verify_key)


def test_round_params_from_an_untrusted_server_are_refused(server):
    data = SignedRoundParams.sign(server.params, server.sig).to_bytes()
    with pytest.raises(CryptoError):
        SignedRoundParams.from_bytes(data, server_key=SigningKeyPair.generate().verify_key)


def test_only_the_announced_key_may_sign(server):
    with pytest.raises(CryptoError, match="not the server_verify_key"):
        SignedRoundParams.sign(server.params, SigningKeyPair.generate())


def _resign(server, body: bytes) -> bytes:
    """A correctly signed round-parameters message around an arbitrary body."""
    signed_part = b"PIC\x02\x02" + len(body).to_bytes(4, "big") + body
    return signed_part + server.sig.sign(signed_part, context="pic/round-params")


def test_non_canonical_body_is_refused_even_when_signed(server):
    obj = json.loads(server.params.canonical_bytes())
    spaced = json.dumps(obj, sort_keys=True).encode()  # default separators add spaces
    with pytest.raises(MessageFormatError, match="canonical") as e:
        SignedRoundParams.from_bytes(_resign(server, spaced), server_key=server.sig.verify_key)
    assert e.value.reason == "canonical"
    obj["groups"][0]["local_epsilon"] = 3  # an int where the encoder writes 3.0
    body = json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()
    with pytest.raises(MessageFormatError, match="canonical"):
        SignedRoundParams.from_bytes(_resign(server, body), server_key=server.sig.verify_key)


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda o: o.pop("suite"), "exactly the keys"),
        (lambda o: o.update(extra=1), "exactly the keys"),
        (lambda o: o.update(version=3), "version 3"),
        (lambda o: o.update(bucket_bits=17), "bucket_bits"),
        (lambda o: o.update(task={"name": "min-weight"}), "task must have exactly"),
        (lambda o: o.update(suite="rsa"), "suite"),
        (lambda o: o.update(round_id="zz"), "invalid round parameters"),
        (lambda o: o["groups"][0].update(local_epsilon=-1.0), "local_epsilon"),
        (lambda o: o.update(report_payload_size=10), "report_payload_size"),
    ],
)
def test_bad_round_param_fields_are_named(server, edit, match):
    obj = json.loads(server.params.canonical_bytes())
    edit(obj)
    body = json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()
    with pytest.raises(MessageFormatError, match=match):
        SignedRoundParams.from_bytes(_resign(server, body), server_key=server.sig.verify_key)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"local_epsilon": 0.0}, "group 0 local_epsilon must be a finite number > 0, got 0.0"),
        ({"local_epsilon": math.inf}, "local_epsilon"),
        ({"local_epsilon": True}, "local_epsilon"),
        ({"delta": 1.0}, r"delta must lie in \(0, 1\), got 1.0"),
        ({"threshold": 0}, "threshold must be an integer in"),
        ({"group_id": 70000}, "group_id must be an integer in"),
        ({"name": ""}, "name must be a non-empty string"),
        ({"randomizer_params": {"p": math.nan}}, "not JSON-serialisable"),
    ],
)
def test_bad_group_params_are_named(kwargs, match):
    base = {
        "group_id": 0,
        "name": "g",
        "randomizer": "krr",
        "local_epsilon": 1.0,
        "report": LOC,
        "threshold": 2,
        "delta": 1e-6,
    }
    with pytest.raises(MessageFormatError, match=match):
        GroupParams(**(base | kwargs))


def test_round_params_validation():
    s = Server("x25519")
    p = s.params
    with pytest.raises(MessageFormatError, match="distinct"):
        s.rp(_groups()[:1] * 2, 10, 10)
    with pytest.raises(MessageFormatError, match=r"report_payload_size must be an integer in \[80,"):
        s.rp(_groups()[:2], 10, 10, 79)
    with pytest.raises(MessageFormatError, match="KemPublicKey of suite 'pq-hybrid'"):
        s.rp(_groups()[:2], 10, 10, suite="pq-hybrid")
    with pytest.raises(MessageFormatError, match="round_id must be 16 bytes"):
        s.rp(_groups()[:2], 10, 10, round_id=b"short")
    with pytest.raises(MessageFormatError, match="different keys"):
        RoundParams(p.round_id, "x25519", p.server_kem_key, p.server_verify_key, _groups()[:2], 1, 1,
                    p.shuffler_kem_key, p.server_verify_key, TASK)  # fmt: skip
    # the default report size is the largest group's plaintext: pseudonym 64 + 11 bits -> 2 bytes; 2-D -> 16
    assert s.rp(_groups(), 1, 1).report_payload_size == 80
    assert [g.group_id for g in s.rp(_groups()[::-1], 1, 1).groups] == [0, 1, 2, 3]


# ---------------------------------------------------------------- report plaintexts


def test_report_encodings_are_exact():
    assert ReportFormat("float64", 2).encode([1.0, -2.0]) == np.array([1.0, -2.0], "<f8").tobytes()
    assert ReportFormat("int64", 1).encode([3]) == (3).to_bytes(8, "little")
    assert ReportFormat("bits", 11).encode([1, 0, 1, 0, 0, 0, 0, 1, 1, 1, 0]) == bytes([0b10100001, 0b11000000])
    assert [ReportFormat(k, 11).size for k in ("float64", "int64", "bits")] == [88, 88, 2]


@pytest.mark.parametrize(
    "fmt, values, match",
    [
        (LOC, [1.0], r"2 numbers, got shape \(1,\)"),
        (LOC, ["a", "b"], "dtype <U1"),
        (ReportFormat("int64", 2), [math.nan, 2.0**63], "integers"),
        (LOC, [1.0, math.nan], "finite"),
        (ReportFormat("int64", 1), [1.5], "integers"),
        (ReportFormat("bits", 3), [0, 2, 1], "only 0 and 1"),
    ],
)
def test_bad_reports_are_refused_by_the_encoder(fmt, values, match):
    with pytest.raises(MessageFormatError, match=match):
        fmt.encode(values)


def test_unknown_report_kind_is_named():
    with pytest.raises(MessageFormatError, match="report kind must be one of float64, int64, bits; got 'utf8'"):
        ReportFormat("utf8", 2)


@settings(max_examples=30, deadline=None)
@given(values=st.lists(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=2, max_size=2), max_size=20))
def test_bulk_decoding_recovers_float_reports_bit_for_bit(values):
    pseudonyms = [OneTimeKeys.generate("x25519").pseudonym for _ in values]
    payloads = [encode_report(p, v, LOC) for p, v in zip(pseudonyms, values, strict=True)]
    dec = decode_reports(payloads, "x25519", LOC)
    assert dec.well_formed.all() and dec.values.shape == (len(values), 2)
    assert np.array_equal(dec.values.view(np.uint64), np.array(values, dtype=np.float64).reshape(-1, 2).view(np.uint64))
    assert [row.tobytes() for row in dec.pseudonyms] == [p.to_bytes() for p in pseudonyms]


@pytest.mark.parametrize(
    "fmt, rows",
    [
        (ReportFormat("int64", 3), [[0, -1, 2**62], [5, 6, -(2**63)]]),
        (ReportFormat("bits", 9), [[1, 0, 0, 0, 0, 0, 0, 0, 1], [0, 1, 1, 0, 1, 0, 0, 1, 0]]),
    ],
)
def test_bulk_decoding_recovers_integer_and_bit_reports(fmt, rows):
    p = OneTimeKeys.generate("x25519").pseudonym
    dec = decode_reports([encode_report(p, r, fmt) for r in rows], "x25519", fmt)
    assert dec.well_formed.all() and dec.values.dtype == np.int64 and dec.values.tolist() == rows


def test_bulk_decoding_flags_malformed_reports():
    p = OneTimeKeys.generate("x25519").pseudonym.to_bytes()
    bits = ReportFormat("bits", 11)
    payloads = [
        p + bits.encode([1] * 11),  # fine
        p + bits.encode([1] * 11)[:1],  # short
        p + bits.encode([1] * 11) + b"\x00",  # long
        p + bytes([0xFF, 0xE1]),  # nonzero padding bits
        b"",
    ]
    dec = decode_reports(payloads, "x25519", bits)
    assert dec.well_formed.tolist() == [True, False, False, False, False]
    assert dec.values[0].tolist() == [1] * 11 and not dec.values[1:].any() and not dec.pseudonyms[1:].any()
    nan = p + np.array([math.nan, 0.0], "<f8").tobytes()
    assert decode_reports([nan], "x25519", LOC).well_formed.tolist() == [False]
    assert decode_reports([], "x25519", LOC).values.shape == (0, 2)


def test_pseudonym_round_trip_and_validation(server):
    keys = OneTimeKeys.generate(server.params.suite)
    raw = keys.pseudonym.to_bytes()
    assert len(raw) == Pseudonym.size(server.params.suite) == get_suite(server.params.suite).public_key_size + 32
    assert Pseudonym.from_bytes(server.params.suite, raw) == keys.pseudonym
    with pytest.raises(MessageFormatError, match="pseudonym is") as e:
        Pseudonym.from_bytes(server.params.suite, raw[:-1])
    assert e.value.reason == "pseudonym"


def test_one_time_keys_repr_holds_no_secret():
    keys = OneTimeKeys.generate("x25519")
    text = repr(keys) + str(keys)
    for secret in (keys.kem.secret_bytes(), keys.signing.secret_bytes()):
        assert secret.hex() not in text and secret[:8].hex() not in text


# ---------------------------------------------------------------- posts (Remark 3)


def test_post_round_trip(server):
    a, b = OneTimeKeys.generate(server.params.suite), OneTimeKeys.generate(server.params.suite)
    post = Post.from_bytes(Post.create(server.params, a, b.pseudonym, b"pick-up at 48.85,2.35").to_bytes())
    decoy = OneTimeKeys.generate(server.params.suite).pseudonym
    sender, post_id, message = post.open(server.params, b, [decoy, a.pseudonym])
    assert sender == a.pseudonym and message == b"pick-up at 48.85,2.35" and len(post_id) == 16


def test_posts_have_one_length_whatever_the_message():
    s = Server("x25519")
    a, b = OneTimeKeys.generate("x25519"), OneTimeKeys.generate("x25519")
    sizes = {len(Post.create(s.params, a, b.pseudonym, b"m" * k).to_bytes()) for k in (0, 1, 39, 40)}
    # header, round, recipient (2 + 64), sealed (4 + enc 32 + (id 16 + len 2 + 40 + signature 64 + marker 1) + tag 16)
    assert sizes == {5 + 16 + 2 + 64 + 4 + 32 + (16 + 2 + 40 + 64 + 1) + 16}
    with pytest.raises(MessageFormatError, match="allows 40"):
        Post.create(s.params, a, b.pseudonym, b"m" * 41)


def test_post_with_a_tampered_ciphertext_or_from_a_stranger_is_refused():
    s = Server("x25519")
    a, b = OneTimeKeys.generate("x25519"), OneTimeKeys.generate("x25519")
    data = Post.create(s.params, a, b.pseudonym, b"hello").to_bytes()
    for pos in (len(data) - 1, len(data) - 64 - 20):  # anywhere in the ciphertext
        bad = bytearray(data)
        bad[pos] ^= 0x04
        with pytest.raises(CryptoError, match="does not open"):
            Post.from_bytes(bytes(bad)).open(s.params, b, [a.pseudonym])
    with pytest.raises(CryptoError, match="does not open"):
        Post.from_bytes(data).open(s.params, b, [OneTimeKeys.generate("x25519").pseudonym])


def test_post_redirected_or_moved_to_another_round_is_refused():
    s, other = Server("x25519"), Server("x25519")
    a, b, c = (OneTimeKeys.generate("x25519") for _ in range(3))
    post = Post.create(s.params, a, b.pseudonym, b"hello")
    with pytest.raises(MessageFormatError, match="another pseudonym"):
        post.open(s.params, c, [a.pseudonym])
    redirected = Post(post.round_id, c.pseudonym.to_bytes(), post.sealed)
    with pytest.raises(CryptoError):  # the encryption binds the recipient (and is to b's key)
        redirected.open(s.params, c, [a.pseudonym])
    with pytest.raises(MessageFormatError, match="post is for round") as e:
        post.open(other.params, b, [a.pseudonym])
    assert e.value.reason == "round"


def test_round_ids_are_fresh():
    ids = {new_round_id() for _ in range(100)}
    assert len(ids) == 100 and all(isinstance(i, bytes) and len(i) == 16 for i in ids)
