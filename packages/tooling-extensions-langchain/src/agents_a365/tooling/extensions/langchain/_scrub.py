"""Token-shaped text out of errors that leave this extension (servers may echo the bearer token).

A copy of the tooling package's private redaction (this package may not import it; the same module exists in the OpenAI extension); the lead's
consolidation into one public helper replaces both.
"""

from __future__ import annotations

import re

from mcp.shared.exceptions import McpError
from mcp.types import ErrorData

__all__ = ["scrub", "scrubbed"]

# Anything shaped like a JWT (header.payload.signature, base64url) inside foreign error text.
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
_BEARER = re.compile(r"(?i)(bearer\s+)[^\s,;\"']+")


def scrub(text: object) -> str:
    """``text`` with token-shaped substrings replaced."""
    return _BEARER.sub(r"\1<redacted>", _JWT.sub("<redacted-token>", str(text)))


def scrubbed(exc: Exception) -> Exception:
    """``exc`` itself when its text holds no token; otherwise an equivalent error without it
    (and without the original as cause: its text, and the server's answer, stay behind)."""
    if isinstance(exc, McpError):
        data = exc.error
        message = scrub(data.message)
        if message == data.message and scrub(data.data) == str(data.data) and scrub(exc) == str(exc):
            return exc
        return McpError(ErrorData(code=data.code, message=message))  # the server's extra data dropped
    text = str(exc)
    clean = scrub(text)
    if clean == text:
        return exc
    try:
        return type(exc)(clean)
    except Exception:  # a constructor that wants more than a message
        return RuntimeError(f"{type(exc).__name__}: {clean}")
