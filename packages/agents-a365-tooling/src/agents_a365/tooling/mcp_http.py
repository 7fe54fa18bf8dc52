"""The one HTTP client factory of every MCP client we create: a shared TLS context and a response size cap.

Every ``httpx.AsyncClient()`` builds a fresh ``ssl.SSLContext`` and loads the CA bundle into it
(~15-20 ms of CPU, measured in ``scripts/bench/registration.py``); one context, immutable once built,
is shared instead. Each response body (``initialize``, a ``tools/list`` page, a ``tools/call`` answer)
is capped: past ``max_bytes`` the read stops with :class:`McpResponseTooLarge`.
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import ssl
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import httpx
from httpx_aiohttp import AiohttpTransport

from ._redact import describe_error
from ._transport import NoCookies, environment_proxies, proxy_for

__all__ = [
    "DEFAULT_MAX_MCP_RESPONSE_BYTES",
    "McpResponseTooLarge",
    "mcp_http_client_factory",
    "shared_ssl_context",
]

DEFAULT_MAX_MCP_RESPONSE_BYTES = 16 * 1024 * 1024

# mcp 2 moved its transports to ``httpx2`` (same API) and rejects ``httpx`` clients; mcp 1 uses ``httpx``.
_MCP_HTTPX: Any = (
    importlib.import_module("httpx2") if int(importlib.metadata.version("mcp").split(".")[0]) >= 2 else httpx
)
REQUEST_FAILED = -32050
"""The JSON-RPC error code of a request whose POST failed (``data.transient``: no answer, or HTTP 5xx/429)."""
# mcp's own defaults (``create_mcp_http_client``): 30 s per request, 5 min between events of a stream.
_TIMEOUT, _SSE_READ_TIMEOUT = 30.0, 300.0


class McpResponseTooLarge(BaseException):
    """A response body went past the cap.

    A ``BaseException`` on purpose: mcp's transport catches ``Exception`` while reading an answer and
    then waits for an answer that never comes; this ends the transport (and its session) at once
    instead. :class:`~agents_a365.tooling.extensibility.McpSessionPool` turns it into
    :class:`~agents_a365.tooling.McpServerConnectionError` for its callers.
    """

    def __init__(self, max_bytes: int) -> None:
        super().__init__(f"MCP answer larger than {max_bytes} bytes")
        self.max_bytes = max_bytes


class _CappedStream(_MCP_HTTPX.AsyncByteStream):  # type: ignore[misc]
    def __init__(self, stream: Any, max_bytes: int) -> None:
        self._stream = stream
        self._max_bytes = max_bytes

    async def __aiter__(self) -> AsyncIterator[bytes]:
        size = 0
        async for chunk in self._stream:
            size += len(chunk)
            if size > self._max_bytes:
                raise McpResponseTooLarge(self._max_bytes)
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


class _CappedClient(_MCP_HTTPX.AsyncClient):  # type: ignore[misc]
    """Caps every response, the ones through a proxy from the environment included (a transport
    wrapper would miss those: httpx mounts its own transports for proxies)."""

    max_bytes = DEFAULT_MAX_MCP_RESPONSE_BYTES
    mcp_session_id: str | None = None
    """The session id the server gave (mcp 2's transport does not tell it)."""

    posts = 0
    """POSTs waiting for their answer (the session's end lets them arrive, the initialized notification too)."""

    opened = False
    """The session is open: from then on one request's failure is that request's answer (below)."""

    async def send(self, request: Any, *, stream: bool = False, **kwargs: Any) -> Any:
        posting = request.method == "POST"
        self.posts += posting
        try:
            response = await super().send(request, stream=True, **kwargs)
        except _MCP_HTTPX.TransportError as exc:
            if (answer := self._failed(request, describe_error(exc.__cause__ or exc), True)) is None:
                raise
            return answer
        finally:
            self.posts -= posting
        status = response.status_code
        if status >= 300 and status != 404:  # (mcp answers a 404 itself: the session is gone)
            answer = self._failed(request, f"HTTP {status}", status >= 500 or status in (408, 429))
            if answer is not None:
                await response.aclose()
                return answer
        self.mcp_session_id = response.headers.get("mcp-session-id") or self.mcp_session_id
        declared = response.headers.get("content-length", "")
        if declared.isascii() and declared.isdigit() and int(declared) > self.max_bytes:
            await response.aclose()
            raise McpResponseTooLarge(self.max_bytes)
        response.stream = _CappedStream(response.stream, self.max_bytes)
        if not stream:
            try:
                await response.aread()
            finally:
                await response.aclose()
        return response

    def _failed(self, request: Any, text: str, transient: bool) -> Any:
        """mcp's transport raises a failed POST in the task group of the whole session, which ends it under
        every request in flight on it: once the session is open, a request of mcp's (not a notification, not
        our listing's) is answered with a JSON-RPC error of its own instead, and only it fails."""
        try:
            message = json.loads(request.content) if self.opened and request.method == "POST" else None
        except ValueError:
            return None
        if not isinstance(message, dict) or "id" not in message or str(message["id"]).startswith("a365-"):
            return None
        error = {"code": REQUEST_FAILED, "message": text, "data": {"transient": transient}}
        body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}).encode()
        headers = {"content-type": "application/json"}
        return _MCP_HTTPX.Response(200, headers=headers, content=body, request=request)


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """The TLS context ``httpx`` builds by default (certifi CA bundle, ``SSL_CERT_FILE``/``SSL_CERT_DIR``
    honoured), built once per process."""
    return _MCP_HTTPX.create_ssl_context()  # type: ignore[no-any-return]


def _aiohttp_session(fresh: bool = False) -> aiohttp.ClientSession:
    # No cookie jar (a server's cookies never come back), the shared TLS context; proxies: httpx routes them.
    # ``fresh``: a new connection for each request (the resend of a request a stale connection lost).
    kept = {"force_close": True} if fresh else {"keepalive_timeout": 4.0}
    connector = aiohttp.TCPConnector(ssl=shared_ssl_context(), limit=0, **kept)
    return aiohttp.ClientSession(connector=connector, cookie_jar=aiohttp.DummyCookieJar())


class SharedTransport(_MCP_HTTPX.AsyncBaseTransport):  # type: ignore[misc]
    """One connection pool under many clients: a client's ``aclose`` leaves it open; :meth:`close` ends it.

    A client given a transport no longer reads the proxies of the environment (httpx mounts them only for
    its own transports), so this one routes each request as httpx would: through the proxy the
    environment names for its URL (one pool per proxy), else straight."""

    def __init__(self) -> None:
        self._proxies = environment_proxies()
        # By proxy URL (None: straight): the pooled transport, and one of fresh connections.
        self._via: dict[tuple[str | None, bool], Any] = {}

    @staticmethod
    def _transport(proxy: str | None, fresh: bool) -> Any:
        via = None if proxy is None else _MCP_HTTPX.Proxy(proxy)
        # aiohttp's pool under httpx's API (mcp 1), as the core's requests: ~2.5 ms less CPU a session.
        if _MCP_HTTPX is httpx:
            client = functools.partial(_aiohttp_session, fresh)
            return AiohttpTransport(verify=shared_ssl_context(), client=client, proxy=via)
        # No bound on connections: each open session holds one for its event stream. Idle ones are
        # dropped before the 5 s idle timeout of common servers, instead of racing their close.
        kept = 0 if fresh else 64
        limits = _MCP_HTTPX.Limits(max_connections=None, max_keepalive_connections=kept, keepalive_expiry=4.0)
        return _MCP_HTTPX.AsyncHTTPTransport(verify=shared_ssl_context(), limits=limits, proxy=via)

    async def handle_async_request(self, request: Any, fresh: bool = False) -> Any:
        proxy = None if self._proxies is None else proxy_for(str(request.url), self._proxies)
        key = (proxy, fresh)
        transport = self._via.get(key) or self._via.setdefault(key, self._transport(proxy, fresh))
        try:
            return await transport.handle_async_request(request)
        except _MCP_HTTPX.TransportError as exc:
            # A pooled keep-alive connection the server had closed (its idle timeout, racing our request):
            # the request failed before any answer. Sent again on a fresh connection when none of it reached
            # the server (its body could not be written) or when it changes nothing there (any MCP request
            # but tools/call: RFC 9112, 9.3.1); a tools/call may have run.
            cause = exc.__cause__
            lost = isinstance(cause, aiohttp.ServerDisconnectedError | aiohttp.ClientOSError)
            unsent = "Can not write request" in str(cause) or b'"tools/call"' not in (request.content or b"")
            if fresh or not (lost and unsent) or isinstance(cause, aiohttp.ClientConnectorError):
                raise
        return await self.handle_async_request(request, fresh=True)

    async def aclose(self) -> None:
        pass

    async def close(self) -> None:
        for transport in self._via.values():
            await transport.aclose()


def mcp_http_client_factory(
    headers: dict[str, str] | None = None,
    timeout: Any = None,
    auth: Any = None,
    *,
    max_bytes: int = DEFAULT_MAX_MCP_RESPONSE_BYTES,
    transport: SharedTransport | None = None,
) -> Any:
    """An HTTP client for an MCP connection: mcp's defaults (no redirects, MCP timeouts), the shared TLS
    context, every response body capped at ``max_bytes``, no cookies kept. Usable as
    ``httpx_client_factory`` by ``mcp``, langchain-mcp-adapters and the OpenAI Agents SDK. An
    ``httpx.AsyncClient`` with mcp 1, an ``httpx2.AsyncClient`` with mcp 2."""
    if timeout is None:
        timeout = _MCP_HTTPX.Timeout(_TIMEOUT, read=_SSE_READ_TIMEOUT)
    client = _CappedClient(
        headers=headers,
        timeout=timeout,
        auth=auth,
        verify=shared_ssl_context(),
        transport=transport,
        # A server's cookies never come back (a session is per user, but a cookie is not our business).
        cookies=NoCookies(),
    )
    client.max_bytes = max_bytes
    return client


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` says the server did not answer (no answer in time, the connection lost or refused)."""
    return isinstance(exc, TimeoutError | OSError | aiohttp.ClientError | _MCP_HTTPX.TransportError)


def is_dropped_connection(exc: BaseException) -> bool:
    """Whether ``exc`` is a connection lost on the wire (not a timeout): worth one new attempt."""
    if isinstance(exc.__cause__, aiohttp.ServerDisconnectedError | aiohttp.ClientOSError):
        return True  # httpx-aiohttp reports these as ConnectTimeout
    return isinstance(exc, _MCP_HTTPX.TransportError) and not isinstance(exc, _MCP_HTTPX.TimeoutException)
