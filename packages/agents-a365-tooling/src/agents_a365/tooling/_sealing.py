"""Values of the second level sealed at rest: AES-GCM under the host's keys, the key id beside each value.

``A365_CACHE_KEYS`` (``cache_keys``) is ``id:base64-key[,id:base64-key...]``: the first key seals, every listed
key opens (so a rotation lists the new key first and keeps the old one until its values have expired). The
store key is the associated data: a value copied under another key, or changed at all, does not open. A value
that does not open (tampered with, sealed under a key not listed, written by another version) is a miss.
Imported only when a store is configured (``cryptography`` comes with the ``cache``/``redis`` extras).
"""

from __future__ import annotations

import base64
import binascii
import os
import struct

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = ["Sealer"]

_VERSION = 1
_HEADER = struct.Struct(">BB")  # format version, key id length
_TIMES = struct.Struct(">dd")  # expires at (wall clock), ttl stored with
_NONCE = 12


class Sealer:
    """Seals and opens the second level's values with the host's keys."""

    def __init__(self, keys: str) -> None:
        self._keys: dict[bytes, AESGCM] = {}
        for item in keys.split(","):
            kid, _, secret = item.strip().partition(":")
            try:
                raw = base64.b64decode(secret.strip(), validate=True)
            except (binascii.Error, ValueError):
                raw = b""
            if not kid.isascii() or not 0 < len(kid) <= 64 or len(raw) not in (16, 24, 32):
                raise ValueError(
                    "cache_keys must be 'id:key' items separated by commas, each key 16, 24 or 32 random "
                    "bytes in base64 (e.g. 2025-01:" + "A" * 43 + "=)"
                )
            self._keys.setdefault(kid.encode(), AESGCM(raw))
        self._current = next(iter(self._keys))

    def seal(self, store_key: str, value: bytes, expires_at: float, ttl: float) -> bytes:
        nonce = os.urandom(_NONCE)
        plain = _TIMES.pack(expires_at, ttl) + value
        sealed = self._keys[self._current].encrypt(nonce, plain, store_key.encode())
        return _HEADER.pack(_VERSION, len(self._current)) + self._current + nonce + sealed

    def open(self, store_key: str, sealed: bytes) -> tuple[bytes, float, float] | None:
        """``(value, expires_at, ttl)``, or ``None`` when it does not open."""
        if len(sealed) < _HEADER.size:
            return None
        version, length = _HEADER.unpack_from(sealed)
        start = _HEADER.size + length
        key = self._keys.get(sealed[_HEADER.size : start])
        if version != _VERSION or key is None:
            return None
        try:
            plain = key.decrypt(sealed[start : start + _NONCE], sealed[start + _NONCE :], store_key.encode())
        except (InvalidTag, ValueError):
            return None
        if len(plain) < _TIMES.size:
            return None
        expires_at, ttl = _TIMES.unpack_from(plain)
        return plain[_TIMES.size :], expires_at, ttl

    def __repr__(self) -> str:
        return f"Sealer(key_ids={[k.decode() for k in self._keys]})"  # never the keys
