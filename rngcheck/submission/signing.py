"""Ed25519 signatures of a package's manifest, through PyCA's ``cryptography`` (a maintained library
with wheels for every platform rngcheck runs on; the ``submission`` extra installs it).

Why Ed25519 and not the platform's tool: a package is made on Linux and Windows and checked
anywhere; signtool/Authenticode (what HLK's .hlkx uses) exists only on Windows and needs a code-signing
certificate, GnuPG needs a keyring and an agent. Ed25519 (RFC 8032) has small keys, deterministic
signatures and one call to verify. The manifest lists every other file's sha256, so signing it signs
the package.

1. ``keygen(private, public)``: a new key pair, PEM files (PKCS#8 private, SubjectPublicKeyInfo public);
   the private key file is created readable by its owner only.
2. ``sign(manifest_bytes, private)``: the signature record, JSON: ``{"algorithm": "Ed25519",
   "public_key": base64 of the raw 32 bytes, "fingerprint": sha256 of those bytes, hex, "signature":
   base64 of the 64 bytes}``.
3. ``check(manifest_bytes, record, trusted)``: the problems, one line each: a malformed record, a
   signature that does not verify under the record's key, and (``trusted``: a public key file) a record
   whose key is not the trusted one. Without ``trusted`` a good signature proves only that the package
   is unchanged since its signer signed it; who the signer is, the fingerprint says.
"""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path
from typing import Any

from ..errors import RngcheckError

ALGORITHM = "Ed25519"


def _crypto() -> Any:
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:
        raise RngcheckError("signing needs the cryptography package: pip install 'rngcheck[submission]'") from None
    return serialization, ed25519


def fingerprint(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def keygen(private: Path, public: Path) -> str:
    """Rule 1; returns the public key's fingerprint."""
    serialization, ed25519 = _crypto()
    for path in (private, public):
        if path.exists():
            raise RngcheckError(f"{path} exists: a key is never overwritten")
    key = ed25519.Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    descriptor = os.open(private, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(pem)
    public.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                     serialization.PublicFormat.SubjectPublicKeyInfo))
    return fingerprint(_raw_public(key.public_key()))


def _raw_public(key: Any) -> bytes:
    serialization, _ = _crypto()
    raw: bytes = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return raw


def _load(path: Path, private: bool) -> Any:
    serialization, ed25519 = _crypto()
    try:
        data = path.read_bytes()
    except OSError as error:
        raise RngcheckError(f"{path}: cannot read the key ({error.strerror or error})") from None
    try:
        key = (serialization.load_pem_private_key(data, password=None) if private
               else serialization.load_pem_public_key(data))
    except (ValueError, TypeError) as error:
        raise RngcheckError(f"{path}: not a PEM {'private' if private else 'public'} key ({error})") from None
    wanted = ed25519.Ed25519PrivateKey if private else ed25519.Ed25519PublicKey
    if not isinstance(key, wanted):
        raise RngcheckError(f"{path}: not an Ed25519 key")
    return key


def sign(manifest: bytes, private: Path) -> dict[str, str]:
    """Rule 2."""
    key = _load(private, private=True)
    raw = _raw_public(key.public_key())
    return {"algorithm": ALGORITHM, "public_key": base64.b64encode(raw).decode(),
            "fingerprint": fingerprint(raw), "signature": base64.b64encode(key.sign(manifest)).decode()}


def check(manifest: bytes, record: Any, trusted: Path | None, where: str) -> list[str]:
    """Rule 3."""
    _, ed25519 = _crypto()
    from cryptography.exceptions import InvalidSignature

    if not isinstance(record, dict) or record.get("algorithm") != ALGORITHM:
        return [f"{where}: not an {ALGORITHM} signature record"]
    try:
        raw = base64.b64decode(str(record.get("public_key")), validate=True)
        signature = base64.b64decode(str(record.get("signature")), validate=True)
        key = ed25519.Ed25519PublicKey.from_public_bytes(raw)
    except (ValueError, TypeError):
        return [f"{where}: its public key or signature is not valid base64 of an {ALGORITHM} key and signature"]
    problems = []
    if record.get("fingerprint") != fingerprint(raw):
        problems.append(f"{where}: its fingerprint is not the sha256 of its public key")
    try:
        key.verify(signature, manifest)
    except InvalidSignature:
        problems.append(f"{where}: the signature does not verify: the manifest changed after signing, or another "
                        f"key signed it")
    if trusted is not None and _raw_public(_load(trusted, private=False)) != raw:
        problems.append(f"{where}: signed by key {fingerprint(raw)[:16]}..., not the trusted key {trusted}")
    return problems
