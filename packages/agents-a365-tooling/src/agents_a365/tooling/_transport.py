"""The transport of the core's own requests: httpx's API over aiohttp's connection pool.

httpcore's pool scans every connection on every request state change: at 1,000 concurrent threat-protection
sends that cost ~4 ms of CPU a send, more than the send itself (docs/performance.md). ``httpx-aiohttp``
(by an httpx maintainer) keeps httpx's API, so deadlines, size caps and error handling stay as they are;
this subclass only maps aiohttp's connection failures to the httpx errors they are (the library maps a
dropped connection to ``ConnectTimeout``, which would read as "did not answer").
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

import aiohttp
import httpx
from httpx_aiohttp import AiohttpTransport

__all__ = ["CoreClient", "CoreTransport", "open_response"]


def _mapped(exc: BaseException, request: httpx.Request) -> BaseException | None:
    cause = exc.__cause__ if isinstance(exc, httpx.HTTPError) else exc
    if isinstance(cause, aiohttp.ServerDisconnectedError):
        return httpx.RemoteProtocolError(str(cause) or "Server disconnected", request=request)
    if isinstance(cause, aiohttp.ClientConnectorError | aiohttp.ClientOSError):
        return httpx.ConnectError(str(cause), request=request)
    if isinstance(cause, aiohttp.ClientPayloadError | aiohttp.ClientResponseError):
        return httpx.ReadError(str(cause), request=request)
    return None


class _MappedStream(httpx.AsyncByteStream):
    def __init__(self, stream: httpx.AsyncByteStream, request: httpx.Request) -> None:
        self._stream = stream
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._stream:
                yield chunk
        except (httpx.HTTPError, aiohttp.ClientError) as exc:
            mapped = _mapped(exc, self._request)
            if mapped is None:
                raise
            raise mapped from exc

    async def aclose(self) -> None:
        await self._stream.aclose()


class CoreTransport(AiohttpTransport):
    def get_client(self) -> aiohttp.ClientSession:
        session = super().get_client()
        # Never keep cookies: the pool serves every user, and a cookie one server set for one user's
        # request must not ride on another user's. (A private attribute, set before the first request:
        # the library builds the session itself and offers no cookie-jar option.)
        session._cookie_jar = aiohttp.DummyCookieJar()
        return session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            response = await super().handle_async_request(request)
        except (httpx.HTTPError, aiohttp.ClientError) as exc:
            mapped = _mapped(exc, request)
            if mapped is None:
                raise
            raise mapped from exc
        response.stream = _MappedStream(response.stream, request)  # type: ignore[arg-type]
        return response


class CoreClient(httpx.AsyncClient):
    """The service's own client: its requests go straight to :class:`CoreTransport` (see :func:`open_response`)."""

    def __init__(self, *, transport: CoreTransport, **kwargs: Any) -> None:
        super().__init__(transport=transport, **kwargs)
        self.core_transport = transport


_ACCEPT_ENCODING = "gzip, deflate"  # what httpx decodes without optional packages


async def open_response(
    client: httpx.AsyncClient,
    method: str,
    url: str | httpx.URL,
    *,
    headers: Mapping[str, str],
    timeout: float,
    content: bytes | None = None,
) -> httpx.Response:
    """Send one request and return the response with its body unread (close it).

    On the service's own :class:`CoreClient` the request goes to its transport directly: no cookie jar
    (nothing stored, nothing sent), no redirects, no default headers merged; about half of httpx's CPU
    per request, which the core pays on every send and every listing (docs/performance.md). Any other
    client (one a user passed in) is used as httpx's API says, with its own policies.
    """
    if not isinstance(client, CoreClient):
        request = client.build_request(method, url, headers=dict(headers), content=content, timeout=timeout)
        return await client.send(request, stream=True)
    if not any(name.lower() == "accept-encoding" for name in headers):
        headers = {**headers, "accept-encoding": _ACCEPT_ENCODING}
    request = httpx.Request(
        method,
        url,
        headers=headers,
        content=content,
        extensions={"timeout": {"connect": timeout, "read": timeout, "write": timeout, "pool": timeout}},
    )
    return await client.core_transport.handle_async_request(request)
