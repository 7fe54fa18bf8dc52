"""The core's own HTTP client: its requests on aiohttp's public API, httpx's API around it, public APIs only.

httpcore's pool scans every connection on every request state change: at 1,000 concurrent threat-protection
sends that cost more CPU than the send itself, and httpx's request and response objects cost as much CPU as
the floor's whole send (docs/performance.md). So the core's own requests (``request_bounded``) use an
aiohttp session of ours directly: no cookie jar (the pool serves every user), the proxy of the environment
for each URL (``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY``/``NO_PROXY``, read once per client), aiohttp's
failures mapped to the httpx errors they are. The ``httpx.AsyncClient`` itself (``service.http_client``, for
a caller's own requests) is httpx's own: it reads the same environment, as the MCP clients' httpx does.
"""

from __future__ import annotations

import functools
import ssl
import urllib.request
from collections.abc import Callable
from http.cookiejar import CookieJar
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import httpx

__all__ = ["CoreClient", "NoCookies", "core_client", "environment_proxies", "mapped", "proxy_for"]


def mapped(exc: aiohttp.ClientError) -> httpx.TransportError:
    """The httpx error an aiohttp failure is: a dropped connection is ``RemoteProtocolError`` (retried), not
    a timeout."""
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return httpx.RemoteProtocolError(str(exc) or "Server disconnected")
    if isinstance(exc, aiohttp.ClientConnectorError | aiohttp.ClientOSError):
        return httpx.ConnectError(str(exc))
    if isinstance(exc, aiohttp.ClientPayloadError | aiohttp.ClientResponseError):
        return httpx.ReadError(str(exc))
    return httpx.TransportError(str(exc) or type(exc).__name__)


class NoCookies(CookieJar):
    """A jar that keeps nothing: httpx's would keep a cookie one server set for one user and send it with
    another's request. Refusing at extraction also skips parsing every response's headers for cookies."""

    def extract_cookies(self, response: Any, request: Any) -> None:
        return None


# Under the 5 s idle timeout of Node's and uvicorn's servers: we drop an idle connection before the server
# does, instead of racing its close with our next request.
_KEEPALIVE_SECONDS = 4.0


class CoreClient(httpx.AsyncClient):
    """The service's own client. ``direct`` hands ``request_bounded`` the aiohttp session of the core's own
    requests (``None``: they go through httpx, as a caller's client does), :meth:`proxy_for` their proxy."""

    direct: Callable[[], aiohttp.ClientSession] | None = None
    proxies: dict[str, str] | None = None  # urllib.request.getproxies(), when it names a proxy

    def proxy_for(self, url: str) -> str | None:
        """The proxy of the environment for ``url`` (``None``: straight to it)."""
        return None if self.proxies is None else proxy_for(url, self.proxies)

    async def aclose(self) -> None:
        await super().aclose()
        if self.direct is not None and self.direct.cache_info().currsize:  # type: ignore[attr-defined]
            await self.direct().close()  # used directly only: httpx does not know it


def core_client(*, verify: ssl.SSLContext, max_connections: int, timeout: float) -> CoreClient:
    """The service's pooled client (redirects never followed: a token must not travel elsewhere)."""

    @functools.cache  # made on first use, inside the running loop, then kept
    def session() -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(
            limit=max_connections, keepalive_timeout=_KEEPALIVE_SECONDS, ssl=verify
        )
        # No timeout of aiohttp's own (its default is 5 minutes): each request has a total deadline.
        # No trust_env: it looks the proxies (and .netrc, whose credentials clash with our Authorization
        # header) up in a worker thread on every request, which doubled the CPU of a send.
        return aiohttp.ClientSession(
            connector=connector, cookie_jar=aiohttp.DummyCookieJar(), timeout=aiohttp.ClientTimeout()
        )

    limits = httpx.Limits(max_connections=max_connections, keepalive_expiry=_KEEPALIVE_SECONDS)
    client = CoreClient(
        verify=verify, limits=limits, timeout=timeout, follow_redirects=False, cookies=NoCookies()
    )
    client.direct = session
    client.proxies = environment_proxies()
    return client


def environment_proxies() -> dict[str, str] | None:
    """``urllib.request.getproxies()`` (``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY``/``NO_PROXY``), or ``None``
    when it names no proxy. Read once per client, as httpx reads it."""
    found = urllib.request.getproxies()
    return found if any(found.get(scheme) for scheme in ("http", "https", "all")) else None


def proxy_for(url: str, proxies: dict[str, str]) -> str | None:
    """The proxy of ``proxies`` for ``url`` (``None``: straight to it), as httpx chooses it: ``NO_PROXY``
    names hosts (``example.com`` and its subdomains, ``.example.com`` only those), addresses or ``*``."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    for entry in proxies.get("no", "").lower().split(","):
        name = entry.strip()
        suffix = name if name.startswith(".") else f".{name}"
        if name == "*" or (name and (host == name or host.endswith(suffix))):
            return None
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    return proxy if proxy is None or "://" in proxy else f"http://{proxy}"
