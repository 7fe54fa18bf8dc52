"""Unsigned test JWTs (the SDK never verifies signatures; the emulator does, with its own issuer)."""

from __future__ import annotations

import base64
import json
import time
from typing import Any


def _b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def make_jwt(claims: dict[str, Any] | None = None, *, expires_in: float | None = 3600, **extra: Any) -> str:
    payload: dict[str, Any] = dict(claims or {})
    payload.update(extra)
    if expires_in is not None and "exp" not in payload:
        payload["exp"] = int(time.time() + expires_in)
    return f"{_b64({'alg': 'none', 'typ': 'JWT'})}.{_b64(payload)}.c2lnbmF0dXJl"
