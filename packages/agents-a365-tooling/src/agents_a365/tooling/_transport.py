"""The core's own HTTP client: aiohttp's connection pool, under httpx's API, through public APIs only.

httpcore's pool scans every connection on every request state change: at 1,000 concurrent threat-protection
sends that cost more CPU than the send itself (docs/performance.md). ``httpx-aiohttp``'s public
``AiohttpTransport(client=...)`` keeps httpx's API over an aiohttp session of ours: no cookie jar (the pool
serves every user), proxies from the environment read as the MCP clients' httpx reads them. With no proxy
in the environment, the core's own requests use that session's public API directly (``request_bounded``):
httpx's request and response objects cost as much CPU as the whole send of the floor. Both ways map
aiohttp's connection failures to the httpx errors they are (``httpx-aiohttp`` maps a dropped connection to
``ConnectTimeout``, which would read as "did not answer" and not be retried).
"""

from __future__ import annotations

import functools
import ipaddress
import ssl
import urllib.request
from collections.abc import Callable
from http.cookiejar import CookieJar
from typing import Any

import aiohttp
import httpx
from httpx_aiohttp import AiohttpTransport

__all__ = ["CoreClient", "core_client", "mapped"]


def mapped(exc: BaseException, request: httpx.Request | None = None) -> BaseException | None:
    """The httpx error an aiohttp failure is (``None``: leave it as it is)."""
    cause = exc.__cause__ if isinstance(exc, httpx.HTTPError) else exc
    if isinstance(cause, aiohttp.ServerDisconnectedError):
        return httpx.RemoteProtocolError(str(cause) or "Server disconnected", request=request)
    if isinstance(cause, aiohttp.ClientConnectorError | aiohttp.ClientOSError):
        return httpx.ConnectError(str(cause), request=request)
    if isinstance(cause, aiohttp.ClientPayloadError | aiohttp.ClientResponseError):
        return httpx.ReadError(str(cause), request=request)
    if isinstance(exc, aiohttp.ClientError):  # not through httpx-aiohttp's own mapping
        return httpx.TransportError(str(cause) or type(cause).__name__, request=request)
    return None


class _MappedTransport(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            response = await self._inner.handle_async_request(request)
        except (httpx.HTTPError, aiohttp.ClientError) as exc:
            error = mapped(exc, request)
            if error is None:
                raise
            raise error from exc
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


class _NoCookies(CookieJar):
    """A jar that keeps nothing: httpx's would keep a cookie one server set for one user and send it with
    another's request. Refusing at extraction also skips parsing every response's headers for cookies."""

    def extract_cookies(self, response: Any, request: Any) -> None:
        return None


# Under the 5 s idle timeout of Node's and uvicorn's servers: we drop an idle connection before the server
# does, instead of racing its close with our next request.
_KEEPALIVE_SECONDS = 4.0


class CoreClient(httpx.AsyncClient):
    """The service's own client. ``direct`` (``None`` when the environment names a proxy) hands
    ``request_bounded`` the aiohttp session under the client's default transport."""

    direct: Callable[[], aiohttp.ClientSession] | None = None

    async def aclose(self) -> None:
        await super().aclose()
        if self.direct is not None and self.direct.cache_info().currsize:  # type: ignore[attr-defined]
            await self.direct().close()  # used directly only: the transport does not know it


def core_client(*, verify: ssl.SSLContext, max_connections: int, timeout: float) -> CoreClient:
    """The service's pooled client (redirects never followed: a token must not travel elsewhere)."""

    def sessions() -> Callable[[], aiohttp.ClientSession]:
        @functools.cache  # made on first use, inside the running loop, then kept
        def session() -> aiohttp.ClientSession:
            connector = aiohttp.TCPConnector(
                limit=max_connections, keepalive_timeout=_KEEPALIVE_SECONDS, ssl=verify
            )
            # No timeout of aiohttp's own (its default is 5 minutes): each request has a total deadline.
            return aiohttp.ClientSession(
                connector=connector, cookie_jar=aiohttp.DummyCookieJar(), timeout=aiohttp.ClientTimeout()
            )

        return session

    def transport(proxy: httpx.Proxy | None = None, client: Any = None) -> httpx.AsyncBaseTransport:
        return _MappedTransport(AiohttpTransport(verify=verify, client=client or sessions(), proxy=proxy))

    direct, mounts = sessions(), _environment_proxies(transport)
    client = CoreClient(
        transport=transport(client=direct),
        mounts=mounts,
        timeout=timeout,
        follow_redirects=False,
        cookies=_NoCookies(),
    )
    client.direct = None if any(mounts.values()) else direct
    return client


def _environment_proxies(
    transport: Callable[[httpx.Proxy], httpx.AsyncBaseTransport],
) -> dict[str, httpx.AsyncBaseTransport | None]:
    """``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY``/``NO_PROXY`` read as httpx reads them for the MCP clients.

    httpx does this only for its own transports, and aiohttp's ``trust_env`` looks them (and ``.netrc``,
    whose credentials clash with our ``Authorization`` header) up in a worker thread on every request,
    which doubled the CPU of a send: read once here, as httpx does, and mounted per URL pattern.
    """
    found = urllib.request.getproxies()
    mounts: dict[str, httpx.AsyncBaseTransport | None] = {}
    for scheme in ("http", "https", "all"):
        if found.get(scheme):
            url = found[scheme] if "://" in found[scheme] else f"http://{found[scheme]}"
            mounts[f"{scheme}://"] = transport(httpx.Proxy(url))
    for host in (h.strip() for h in found.get("no", "").split(",")):
        if host == "*":
            return {}
        if "://" in host:
            mounts[host] = None
        elif host:
            try:
                address = ipaddress.ip_address(host.split("/")[0])
            except ValueError:
                mounts[f"all://{host}" if host.lower() == "localhost" else f"all://*{host}"] = None
            else:
                mounts[f"all://[{host}]" if address.version == 6 else f"all://{host}"] = None
    return mounts
