"""Keep secrets out of reprs and logs."""

from __future__ import annotations

import re
from collections.abc import Mapping

import mcp.shared.exceptions as _mcp_exceptions
from mcp.types import ErrorData

# mcp 2.x renamed the JSON-RPC error to MCPError(code, message, data); 1.x has McpError(ErrorData).
_MCP2 = hasattr(_mcp_exceptions, "MCPError")
McpErrorType: type[Exception] = getattr(_mcp_exceptions, "MCPError", None) or _mcp_exceptions.McpError

_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {k: ("<redacted>" if k.lower() in _SECRET_HEADERS else v) for k, v in headers.items()}


# Anything shaped like a JWT (header.payload.signature, base64url) inside foreign error text.
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
_BEARER = re.compile(r"(?i)(bearer\s+)[^\s,;\"']+")


def scrub(text: object) -> str:
    """``text`` with token-shaped substrings replaced, for error messages and logs."""
    return _BEARER.sub(r"\1<redacted>", _JWT.sub("<redacted-token>", str(text)))


def scrubbed(exc: Exception) -> Exception:
    """``exc`` itself when its text holds no token; otherwise an equivalent error without it
    (and without the original as cause: its text, and the server's answer, stay behind)."""
    if isinstance(exc, McpErrorType):
        data: ErrorData = exc.error  # type: ignore[attr-defined]
        message = scrub(data.message)
        if message == data.message and scrub(data.data) == str(data.data) and scrub(exc) == str(exc):
            return exc
        # The server's extra data is dropped: it may hold the token too.
        if _MCP2:
            return McpErrorType(data.code, message)
        return McpErrorType(ErrorData(code=data.code, message=message))
    text = str(exc)
    clean = scrub(text)
    if clean == text:
        return exc
    try:
        return type(exc)(clean)
    except Exception:  # a constructor that wants more than a message
        return RuntimeError(f"{type(exc).__name__}: {clean}")


def describe_error(exc: BaseException) -> str:
    """``Type: message`` of the real failure, token-shaped text redacted.

    anyio task groups wrap the real failure in exception groups: the first leaf is described.
    """
    exc = leaf(exc)
    return f"{type(exc).__name__}: {scrub(exc)}" if str(exc) else type(exc).__name__


def leaf(exc: BaseException) -> BaseException:
    """The first failure inside ``exc``'s exception groups (``exc`` itself when it is none)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
