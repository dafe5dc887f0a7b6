"""Cost of PIC's cryptography per report, per suite (issue 8, "Speed").

Client prepare = fresh one-time keys (KEM + Ed25519) + encode ``pseudonym || x'``
(2-D float64 location) + HPKE seal to the server + serialise the envelope; the
randomizer itself is not included (see bench_randomizers).  Server decrypt = parse
the envelope against the round + HPKE open + unpad, then bulk decode of the
plaintexts.  Board = seal each output (``output_payload_size`` 81 bytes: one matched
pseudonym and location) to its pseudonym, and sign the bucketed head.  Each figure is
the best of three timed passes over ``--n`` reports after a warm-up pass.  ``raw_*``
figures call ``cryptography`` directly (same key generation and HPKE calls, no
framing, padding or checks): the difference is this library's overhead.
Run: ``python benchmarks/bench_crypto.py [--n N]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import best_seconds, write_json

from shuffledp.crypto import SUITE_NAMES, KemKeyPair, SigningKeyPair
from shuffledp.protocols.pic.bulletin import BoardEntry, BoardHead, BoardSlice
from shuffledp.protocols.pic.messages import (
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
TARGETS = {"client_prepare_us": 500.0, "server_decrypt_reports_per_s": 10_000.0, "envelope_bytes": 256}
_TASK = {"k": 1, "name": "neighbors", "radius": 0.4}


def bench_suite(suite: str, n: int) -> dict:
    server_kem, server_sig = KemKeyPair.generate(suite), SigningKeyPair.generate()
    shuffler_kem, shuffler_sig = KemKeyPair.generate(suite), SigningKeyPair.generate()
    group = GroupParams(0, "users", "minkowski", 3.0, LOC, 2, 1e-6)
    params = RoundParams(
        new_round_id(),
        suite,
        server_kem.public_key,
        server_sig.verify_key,
        (group,),
        output_payload_size=Pseudonym.size(suite) + LOC.size + 1,
        post_payload_size=64,
        shuffler_kem_key=shuffler_kem.public_key,
        shuffler_verify_key=shuffler_sig.verify_key,
        task=_TASK,
    )
    credential, submission_id = bytes(32), bytes(16)
    locations = np.random.default_rng(0).uniform(-1, 1, size=(n, 2))

    def client_prepare() -> list[tuple[OneTimeKeys, bytes]]:
        out = []
        for x in locations:
            keys = OneTimeKeys.generate(suite)
            inner = seal_report(params, 0, encode_report(keys.pseudonym, x, LOC))
            out.append((keys, Submission.seal(params, 0, credential, submission_id, inner).to_bytes()))
        return out

    prepared = client_prepare()
    envelopes = [e for _, e in prepared]
    inner = [Submission.from_bytes(e, params).open(params, shuffler_kem)[2] for e in envelopes]

    def server_decrypt() -> None:
        plaintexts = [open_report(params, server_kem, 0, e) for e in inner]
        decoded = decode_reports(plaintexts, suite, LOC)
        assert decoded.well_formed.all()

    pseudonyms = [k.pseudonym for k, _ in prepared]
    output = b"\x00" * params.output_payload_size

    def board_seal() -> list[BoardEntry]:
        return [BoardEntry.seal(params, 0, p, output) for p in pseudonyms]

    entries = board_seal()
    hpke_suite, server_public = server_kem.suite.hpke_suite, server_kem.public_key.hpke_key
    plaintext = b"\x00" * (params.report_payload_size + 1)

    def raw_client() -> list[bytes]:
        out = []
        for _ in range(n):
            OneTimeKeys.generate(suite)
            out.append(hpke_suite.encrypt(plaintext, server_public, info=b"i"))
        return out

    raw_sealed = raw_client()

    def raw_server() -> None:
        for c in raw_sealed:
            hpke_suite.decrypt(c, server_kem._hpke_key, info=b"i")

    t_client = best_seconds(client_prepare)
    t_server = best_seconds(server_decrypt)
    t_board = best_seconds(board_seal)
    t_raw_client, t_raw_server = best_seconds(raw_client), best_seconds(raw_server)
    start = time.perf_counter()
    head = BoardHead.sign(params.round_id, entries, 4, server_sig)
    t_head = time.perf_counter() - start
    board_bytes = len(BoardSlice(head, None, tuple(entries)).to_bytes())
    post = Post.create(params, prepared[0][0], pseudonyms[1], b"meet here")
    return {
        "suite": suite,
        "n": n,
        "client_prepare_us": 1e6 * t_client / n,
        "server_decrypt_us_per_message": 1e6 * t_server / n,
        "server_decrypt_reports_per_s": n / t_server,
        "raw_client_prepare_us": 1e6 * t_raw_client / n,
        "raw_server_decrypt_us_per_message": 1e6 * t_raw_server / n,
        "board_seal_us_per_entry": 1e6 * t_board / n,
        "board_head_sign_ms": 1e3 * t_head,
        "envelope_bytes": len(envelopes[0]),
        "inner_envelope_bytes": len(inner[0]),
        "board_entry_bytes": len(entries[0].to_bytes()),
        "board_bytes": board_bytes,
        "post_bytes": len(post.to_bytes()),
        "round_params_bytes": len(SignedRoundParams.sign(params, server_sig).to_bytes()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    results = []
    for suite in SUITE_NAMES:
        r = bench_suite(suite, args.n)
        results.append(r)
        print(
            f"{suite:10s} client {r['client_prepare_us']:6.1f} us/report (raw {r['raw_client_prepare_us']:6.1f})"
            f"   server {r['server_decrypt_reports_per_s']:6.0f} reports/s"
            f" ({r['server_decrypt_us_per_message']:5.1f} us, raw {r['raw_server_decrypt_us_per_message']:5.1f})"
            f"\n{'':10s} board {r['board_seal_us_per_entry']:6.1f} us/entry   envelope {r['envelope_bytes']} B"
            f"   entry {r['board_entry_bytes']} B   post {r['post_bytes']} B"
        )
    write_json("bench_crypto", {"targets_x25519": TARGETS, "results": results})


if __name__ == "__main__":
    main()
