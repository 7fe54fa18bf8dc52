"""``httpx`` clients for MCP connections that share one TLS context.

Every ``httpx.AsyncClient()`` builds a fresh ``ssl.SSLContext`` and loads the CA bundle into it
(~15-20 ms of CPU, measured in ``scripts/bench/registration.py``), and the MCP clients create one
``AsyncClient`` per session: per server per turn, and per tool call with per-call sessions. Sharing
one context (immutable once built, safe to share) removes that cost; each client still has its own
connection pool, headers and timeouts.
"""

from __future__ import annotations

import functools
import ssl
from typing import Any

import httpx
from mcp.shared import _httpx_utils
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

__all__ = ["mcp_http_client_factory", "shared_ssl_context"]

# mcp 2 moved its transports to ``httpx2`` (same API) and rejects ``httpx`` clients; mcp 1 uses ``httpx``.
# Build MCP clients with whichever module the installed mcp uses.
_MCP_HTTPX: Any = getattr(_httpx_utils, "httpx2", httpx)


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """The TLS context ``httpx`` builds by default (certifi CA bundle, ``SSL_CERT_FILE``/``SSL_CERT_DIR``
    honoured), built once per process."""
    return _MCP_HTTPX.create_ssl_context()  # type: ignore[no-any-return]


def mcp_http_client_factory(
    headers: dict[str, str] | None = None,
    timeout: Any = None,
    auth: Any = None,
) -> Any:
    """``mcp``'s ``create_mcp_http_client`` (same defaults: no redirects, MCP timeouts) over the
    shared TLS context; usable as ``httpx_client_factory`` by ``mcp``, langchain-mcp-adapters and
    the OpenAI Agents SDK. An ``httpx.AsyncClient`` with mcp 1, an ``httpx2.AsyncClient`` with mcp 2."""
    if timeout is None:
        timeout = _MCP_HTTPX.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT)
    return _MCP_HTTPX.AsyncClient(headers=headers, timeout=timeout, auth=auth, verify=shared_ssl_context())
