"""Key files of the PIC services: a folder of mode 0700 whose files are 0600, never in the database.

* ``<role>.identity`` -- the role's long-term Ed25519 identity (`SigningIdentity`: created once, loaded after);
* ``<role>-round-<id>.kem`` -- one KEM secret per round (§8: fresh keys per round), deleted when the round ends;
* ``operator.token`` / ``service.token`` -- bearer tokens of the operator and of the server -> shuffler link.

Nothing here is logged: loggers get fingerprints only.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from shuffledp.crypto import KemKeyPair
from shuffledp.errors import CryptoError
from shuffledp.protocols.pic import SigningIdentity

__all__ = ["KeyStore"]

_KEM_MAGIC = "shuffledp-pic-kem-v1"


class KeyStore:
    """The key folder of one deployment (module docstring)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root) / "keys"
        self.root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o700)

    def _write(self, name: str, text: str) -> None:
        path = self.root / name
        tmp = path.with_name(name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        dfd = os.open(self.root, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)

    def identity(self, role: str) -> SigningIdentity:
        """The role's long-term identity, created on first use."""
        path = self.root / f"{role}.identity"
        if path.exists():
            return SigningIdentity.load(path)
        try:
            return SigningIdentity.create(path)
        except CryptoError:  # created by a concurrent start
            return SigningIdentity.load(path)

    def token(self, name: str) -> str:
        """A bearer token (created on first use; 32 random bytes, URL-safe base64)."""
        path = self.root / f"{name}.token"
        if not path.exists():  # first use: write a private temporary file, then link it in (atomic, never replaces)
            tmp = self.root / f".{name}.token.{os.getpid()}.{secrets.token_hex(4)}"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_urlsafe(32) + "\n")
                f.flush()
                os.fsync(f.fileno())
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass  # another process linked its token first: use that one
            finally:
                tmp.unlink()
        return path.read_text().strip()

    def save_kem(self, name: str, key: KemKeyPair) -> None:
        self._write(f"{name}.kem", f"{_KEM_MAGIC} {key.suite.name} {key.secret_bytes().hex()}\n")

    def load_kem(self, name: str) -> KemKeyPair:
        path = self.root / f"{name}.kem"
        try:
            magic, suite, secret = path.read_text().split()
        except (OSError, ValueError):
            raise CryptoError(f"no usable KEM key file {path.name}") from None
        if magic != _KEM_MAGIC:
            raise CryptoError(f"{path.name} is not a {_KEM_MAGIC} file")
        return KemKeyPair.from_secret_bytes(suite, bytes.fromhex(secret))

    def has_kem(self, name: str) -> bool:
        return (self.root / f"{name}.kem").exists()

    def drop_kem(self, name: str) -> None:
        """Delete a round key once its round is over (forward secrecy of the round)."""
        (self.root / f"{name}.kem").unlink(missing_ok=True)
