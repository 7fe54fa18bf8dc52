"""One HTTP exchange under a total deadline and a response size cap.

httpx timeouts apply per read: a peer that trickles one byte at a time resets them forever.
Here the whole exchange (connect, status line, headers, every body byte) runs under one
``asyncio.timeout``, and the body is read as a stream up to ``max_bytes``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass

import aiohttp
import httpx

from ._transport import CoreClient, mapped

__all__ = ["BoundedResponse", "ResponseTooLargeError", "request_bounded"]


class ResponseTooLargeError(Exception):
    """The response body exceeded the configured cap (the read stopped there)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"response body larger than {limit} bytes")


@dataclass(frozen=True)
class BoundedResponse:
    status_code: int
    headers: Mapping[str, str]  # case-insensitive
    content: bytes

    @property
    def is_success(self) -> bool:
        return 200 <= self.status_code < 300


async def request_bounded(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    headers: dict[str, str],
    timeout: float,
    max_bytes: int,
    content: bytes | None = None,
) -> BoundedResponse:
    """The response, its body read up to ``max_bytes``; the whole exchange within ``timeout`` s.

    Raises ``TimeoutError`` at the deadline, :class:`ResponseTooLargeError` past the cap, and
    ``httpx.HTTPError`` for transport failures.
    """
    async with asyncio.timeout(max(timeout, 0.0)):
        if isinstance(client, CoreClient) and client.direct is not None:
            # aiohttp's own API: httpx's objects would cost as much CPU as the floor's whole send.
            try:
                async with client.direct().request(
                    method,
                    url,
                    headers=headers,
                    data=content,
                    allow_redirects=False,
                    proxy=client.proxy_for(url),
                ) as answer:
                    return await _read(answer.status, answer.headers, answer.content.iter_any(), max_bytes)
            except aiohttp.ClientError as exc:
                raise mapped(exc) from exc
        async with client.stream(method, url, headers=headers, content=content, timeout=timeout) as response:
            return await _read(response.status_code, response.headers, response.aiter_bytes(), max_bytes)


async def _read(
    status: int, headers: Mapping[str, str], chunks: AsyncIterator[bytes], max_bytes: int
) -> BoundedResponse:
    declared = headers.get("Content-Length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > max_bytes:
        raise ResponseTooLargeError(max_bytes)
    body = bytearray()
    async for chunk in chunks:
        body += chunk
        if len(body) > max_bytes:
            raise ResponseTooLargeError(max_bytes)
    return BoundedResponse(status, headers, bytes(body))
