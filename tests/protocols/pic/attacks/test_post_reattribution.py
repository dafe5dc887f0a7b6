"""Attack 8: posts (Remark 3).  A partner must not re-sign another partner's ciphertext as its own,
a replayed post must be refused, and the board operator must not learn who posted.
"""

import numpy as np
import pytest
from pic_attack_harness import Rig

from shuffledp.crypto import SIGNATURE_SIZE
from shuffledp.errors import ShuffleDPError
from shuffledp.protocols.pic.computation import PicTask


def _mutual_triangle(rng):
    """Three honest users close together (each the others' 2 nearest neighbours), the rest far away."""
    rig = Rig(PicTask("neighbors", k=2), n=9, threshold=9)
    close = [rig.client(0) for _ in range(3)]
    for c, x in zip(close, [[0.0, 0.0], [0.01, 0.0], [0.0, 0.01]]):
        rig.submit(rig.envelope(c, x), c)
    for _ in range(6):
        c = rig.client(0)
        rig.submit(rig.envelope(c, rng.uniform(0.5, 1.0, 2) * rng.choice([-1, 1], 2)), c)
    rig.run_server()
    rig.retrieve_all()
    return rig, close


def test_a_partner_cannot_re_sign_another_partner_s_post():
    rig, (a, b, c) = _mutual_triangle(np.random.default_rng(11))
    post = a.post_to(b.pseudonym.to_bytes(), b"from a")
    body = post[:-SIGNATURE_SIZE]
    resigned = body + c._keys.signing.sign(body, context="pic/post")  # c claims a's ciphertext
    try:
        sender, message = b.read_post(resigned)
    except ShuffleDPError:
        return
    assert sender != c.pseudonym.to_bytes() or message != b"from a", "c re-attributed a's post to itself"


def test_a_post_is_accepted_once():
    rig, (a, b, _) = _mutual_triangle(np.random.default_rng(12))
    post = a.post_to(b.pseudonym.to_bytes(), b"once")
    assert b.read_post(post)[1] == b"once"
    with pytest.raises(ShuffleDPError) as e:
        b.read_post(post)
    assert getattr(e.value, "reason", None) == "replay"


def test_the_board_operator_cannot_tell_who_posted():
    rig, (a, b, _) = _mutual_triangle(np.random.default_rng(13))
    post = a.post_to(b.pseudonym.to_bytes(), b"hidden sender")
    body, sig = post[:-SIGNATURE_SIZE], post[-SIGNATURE_SIZE:]
    for row in rig.clients.values():
        for c in row:
            try:
                c.pseudonym.verify_key.verify(sig, body, context="pic/post")
            except ShuffleDPError:
                continue
            pytest.fail("trial verification against the board's pseudonyms names the sender")
