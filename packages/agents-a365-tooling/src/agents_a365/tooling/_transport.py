"""The transport of the core's own requests: httpx's API over aiohttp's connection pool.

httpcore's pool scans every connection on every request state change: at 1,000 concurrent threat-protection
sends that cost ~4 ms of CPU a send, more than the send itself (docs/performance.md). ``httpx-aiohttp``
(by an httpx maintainer) keeps httpx's API, so deadlines, size caps and error handling stay as they are;
this subclass only maps aiohttp's connection failures to the httpx errors they are (the library maps a
dropped connection to ``ConnectTimeout``, which would read as "did not answer").
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import httpx
from httpx_aiohttp import AiohttpTransport

__all__ = ["CoreTransport"]


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
