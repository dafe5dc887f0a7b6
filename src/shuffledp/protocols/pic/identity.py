"""Long-term signing identities of the PIC server and shuffler: created once, stored, pinned, rotated explicitly.

The server signs round parameters and boards, the shuffler signs batches and view
announcements, each with one Ed25519 key that outlives rounds, so clients can pin the
verify keys (trust on first use, or shipped with the app) and a key that changes is
noticed.  KEM keys stay per round (§8: fresh keys per round).

The file holds one line, ``shuffledp-pic-identity-v1 <64 hex digits of the Ed25519 seed>``,
and is created with mode 0600.  `SigningIdentity.create` never overwrites a file;
`SigningIdentity.rotate` is the one explicit way to replace a key (the old file is kept
beside it as ``<name>.retired-<fingerprint>``).  Store the file on an encrypted volume;
the secret never appears in ``repr``.
"""

from __future__ import annotations

import os
from pathlib import Path

from shuffledp.crypto import SigningKeyPair, VerifyKey
from shuffledp.crypto.kem import fingerprint
from shuffledp.errors import CryptoError

__all__ = ["SigningIdentity"]

_MAGIC = "shuffledp-pic-identity-v1"


class SigningIdentity:
    """A long-term Ed25519 signing key of a PIC role.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from shuffledp.protocols.pic.identity import SigningIdentity
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "server.key"
    >>> SigningIdentity.create(path).verify_key == SigningIdentity.load(path).verify_key
    True
    """

    __slots__ = ("_pair", "path")

    def __init__(self, pair: SigningKeyPair, path: Path | None = None) -> None:
        """Internal; use `create`, `load`, `rotate` or `ephemeral`."""
        self._pair = pair
        self.path = path

    @classmethod
    def ephemeral(cls) -> SigningIdentity:
        """A key that lives only in memory (simulations and tests; nothing for clients to pin across runs)."""
        return cls(SigningKeyPair.generate())

    @classmethod
    def create(cls, path: str | os.PathLike[str]) -> SigningIdentity:
        """Generate a key and store it at ``path`` (mode 0600); refuses to overwrite an existing file."""
        path = Path(path)
        pair = SigningKeyPair.generate()
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            raise CryptoError(f"{path} already holds an identity; load it, or rotate it explicitly") from None
        with os.fdopen(fd, "w") as f:
            f.write(f"{_MAGIC} {pair.secret_bytes().hex()}\n")
        return cls(pair, path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> SigningIdentity:
        """Load the identity stored at ``path``."""
        path = Path(path)
        try:
            text = path.read_text().strip()
            mode = path.stat().st_mode & 0o777
        except OSError as exc:
            raise CryptoError(f"cannot read the identity file {path}: {exc.strerror}") from None
        if os.name == "posix" and mode & 0o077:  # as ssh does: a signing key others can read is not private
            raise CryptoError(f"the identity file {path} has mode {mode:04o}: others can read the signing key; "
                              f"allowed is owner-only access (chmod 600 {path})")  # fmt: skip
        magic, _, secret = text.partition(" ")
        if magic != _MAGIC or len(secret) != 64:
            raise CryptoError(f"{path} is not a {_MAGIC} identity file")
        try:
            raw = bytes.fromhex(secret)
        except ValueError:
            raise CryptoError(f"{path} is not a {_MAGIC} identity file") from None
        return cls(SigningKeyPair.from_secret_bytes(raw), path)

    @classmethod
    def rotate(cls, path: str | os.PathLike[str]) -> SigningIdentity:
        """Replace the identity at ``path`` by a new one; the old file is kept as ``<path>.retired-<fingerprint>``."""
        path = Path(path)
        old = cls.load(path)
        path.rename(path.with_name(f"{path.name}.retired-{fingerprint(old.verify_key.to_bytes())}"))
        return cls.create(path)

    @property
    def verify_key(self) -> VerifyKey:
        """The public key clients pin."""
        return self._pair.verify_key

    @property
    def signing_key(self) -> SigningKeyPair:
        """The key pair (for the role that owns the identity)."""
        return self._pair

    def __repr__(self) -> str:
        return f"SigningIdentity(verify_key={fingerprint(self.verify_key.to_bytes())!r})"

    def __reduce__(self):  # noqa: ANN204
        raise TypeError("SigningIdentity is not picklable")
