"""Keep secrets out of reprs and logs."""

from __future__ import annotations

import re
from collections.abc import Mapping

_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {k: ("<redacted>" if k.lower() in _SECRET_HEADERS else v) for k, v in headers.items()}


# Anything shaped like a JWT (header.payload.signature, base64url) inside foreign error text.
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
_BEARER = re.compile(r"(?i)(bearer\s+)[^\s,;\"']+")


def scrub(text: object) -> str:
    """``text`` with token-shaped substrings replaced, for error messages and logs."""
    return _BEARER.sub(r"\1<redacted>", _JWT.sub("<redacted-token>", str(text)))
