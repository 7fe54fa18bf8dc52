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

import httpx
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

__all__ = ["mcp_http_client_factory", "shared_ssl_context"]


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """The TLS context ``httpx`` builds by default (certifi CA bundle, ``SSL_CERT_FILE``/``SSL_CERT_DIR``
    honoured), built once per process."""
    return httpx.create_ssl_context()


def mcp_http_client_factory(
    headers: dict[str, str] | None = None,
    timeout: httpx.Timeout | None = None,
    auth: httpx.Auth | None = None,
) -> httpx.AsyncClient:
    """``mcp``'s ``create_mcp_http_client`` (same defaults: no redirects, MCP timeouts) over the
    shared TLS context; usable as ``httpx_client_factory`` by ``mcp``, langchain-mcp-adapters and
    the OpenAI Agents SDK."""
    if timeout is None:
        timeout = httpx.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT)
    return httpx.AsyncClient(headers=headers, timeout=timeout, auth=auth, verify=shared_ssl_context())
