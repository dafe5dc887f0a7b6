"""Private Individual Computation (pic-usenix25 §4-5): wire messages, roles, the board and one round.

The roles talk only through bytes (``messages``, ``bulletin``); the names below are loaded on
first use, so importing the package stays cheap.

Examples
--------
>>> from shuffledp.protocols.pic import PicTask, RoundConfig
>>> RoundConfig(PicTask("min-weight"), "minkowski", 1.0).suite
'x25519'
"""

from shuffledp._util.lazy import lazy_exports

_EXPORTS = {
    "Client": "shuffledp.protocols.pic.client",
    "ClientPolicy": "shuffledp.protocols.pic.client",
    "Enrolment": "shuffledp.protocols.pic.shuffler",
    "SignedBatch": "shuffledp.protocols.pic.batches",
    "ViewAnnouncement": "shuffledp.protocols.pic.batches",
    "SigningIdentity": "shuffledp.protocols.pic.identity",
    "secure_generator": "shuffledp.protocols.pic.noise",
    "VerifiedDownloads": "shuffledp.protocols.pic.client",
    "Shuffler": "shuffledp.protocols.pic.shuffler",
    "csprng_permutation": "shuffledp.protocols.pic.shuffler",
    "Server": "shuffledp.protocols.pic.server",
    "BulletinBoard": "shuffledp.protocols.pic.bulletin",
    "ideal_pic": "shuffledp.protocols.pic.ideal",
    "PicTask": "shuffledp.protocols.pic.computation",
    "GroupPrivacy": "shuffledp.protocols.pic.round",
    "RoundConfig": "shuffledp.protocols.pic.round",
    "RoundResult": "shuffledp.protocols.pic.round",
    "run_round": "shuffledp.protocols.pic.round",
    "round_report": "shuffledp.protocols.pic.round",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = sorted(_EXPORTS)
