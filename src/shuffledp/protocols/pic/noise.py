"""Client-side noise for deployment: a cryptographically secure bit generator seeded from the OS (issue 17, item 11).

A deployed client's randomizer must draw from a generator whose output an observer cannot
predict or reconstruct: numpy's default PCG64 (and Philox, SFC64) are fast statistical
generators, not cryptographic ones -- from enough outputs their state can be recovered, and
with it every past and future noise value of that process.  `secure_generator` returns a
``numpy.random.Generator`` over a stream cipher keyed with fresh OS entropy
(``secrets.token_bytes``):

- ``"chacha20"`` (default): ChaCha with the standard 20 rounds and a 256-bit key
  (``randomgen.ChaCha``; the key is set directly, not stretched by a statistical PRNG);
- ``"aes-ctr"``: AES-128 in counter mode (``randomgen.AESCounter``, AES-NI where available).

Both are keystreams of standard ciphers, so the bits are a CSPRNG's; numpy's ``Generator``
turns them into Laplace, Gaussian or uniform draws exactly as it does for any bit generator.
(Floating-point sampling of continuous noise has its own, separate leak -- Mironov 2012 --
which a bit generator cannot fix.)  `shuffledp.protocols.pic.client.Client.prepare` uses
this generator when no ``rng`` is given; simulations pass numpy generators explicitly for
speed and reproducibility.  ``randomgen`` is the optional dependency ``shuffledp[deploy]``.
"""

from __future__ import annotations

import secrets

import numpy as np

from shuffledp.errors import CryptoError

__all__ = ["secure_generator"]

#: Names accepted by `secure_generator`.
SECURE_GENERATORS = ("chacha20", "aes-ctr")


def secure_generator(kind: str = "chacha20") -> np.random.Generator:
    """A numpy Generator over a cipher keystream keyed from the OS CSPRNG (module docstring).

    Raises
    ------
    CryptoError
        For an unknown ``kind``, or when ``randomgen`` is not installed.

    Examples
    --------
    >>> from shuffledp.protocols.pic.noise import secure_generator
    >>> g = secure_generator()  # doctest: +SKIP
    >>> type(g.bit_generator).__name__, g.bit_generator.state["state"]["rounds"]  # doctest: +SKIP
    ('ChaCha', 20)
    """
    if kind not in SECURE_GENERATORS:
        raise CryptoError(f"secure generator must be one of {', '.join(SECURE_GENERATORS)}; got {kind!r}")
    try:
        import randomgen
    except ImportError:
        raise CryptoError(
            "client noise for deployment needs the randomgen package (ChaCha20 / AES-CTR bit generators): "
            "pip install 'shuffledp[deploy]'"
        ) from None
    if kind == "chacha20":
        bits = randomgen.ChaCha(key=int.from_bytes(secrets.token_bytes(32), "big"), counter=0, rounds=20)
    else:
        bits = randomgen.AESCounter(key=int.from_bytes(secrets.token_bytes(16), "big"), counter=0)
    return np.random.Generator(bits)
