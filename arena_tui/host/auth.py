"""API keys: made once, shown once, kept only as their SHA-256, compared in constant time.

A key is ``<entry>.<43 random URL-safe characters>`` (256 bits). The entry name in front
lets the server find the one stored hash to compare against without a lookup keyed by
the secret; the comparison itself is ``hmac.compare_digest`` of SHA-256 hex digests. The
log's ``register`` input carries ``key_sha256``, never the key, so the table of keys is
rebuilt from the log like everything else.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

MAX_HEADER = 200  # longer Authorization headers are refused before hashing


def new_key(entry: str) -> str:
    return f"{entry}.{secrets.token_urlsafe(32)}"


def key_sha256(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class Keys:
    """Entry -> the SHA-256 of its key, as registered in the log."""

    def __init__(self) -> None:
        self._by_entry: dict[str, str] = {}

    def add(self, entry: str, sha256_hex: str | None) -> None:
        if sha256_hex:  # an entry registered with no key (a backtest's) cannot log in
            self._by_entry[entry] = sha256_hex.lower()

    def __contains__(self, entry: str) -> bool:
        return entry in self._by_entry

    def entry_for(self, authorization: str | None) -> str | None:
        """The entry an ``Authorization: Bearer <key>`` header proves, else None."""
        if not authorization or len(authorization) > MAX_HEADER:
            return None
        scheme, _, key = authorization.partition(" ")
        key = key.strip()
        if scheme.lower() != "bearer" or not key.isascii():
            return None
        entry, dot, secret = key.partition(".")
        stored = self._by_entry.get(entry)
        if not dot or not secret or stored is None:
            return None
        return entry if hmac.compare_digest(key_sha256(key), stored) else None
