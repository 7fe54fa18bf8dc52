"""One HTTP exchange under a total deadline and a response size cap.

httpx timeouts apply per read: a peer that trickles one byte at a time resets them forever.
Here the whole exchange (connect, status line, headers, every body byte) runs under one
``asyncio.timeout``, and the body is read as a stream up to ``max_bytes``.
"""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass

import httpx

from ._transport import CoreClient

__all__ = ["BoundedResponse", "ResponseTooLargeError", "request_bounded"]


class ResponseTooLargeError(Exception):
    """The response body exceeded the configured cap (the read stopped there)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"response body larger than {limit} bytes")
        self.limit = limit


@dataclass(frozen=True)
class BoundedResponse:
    status_code: int
    headers: httpx.Headers
    content: bytes

    @property
    def is_success(self) -> bool:
        return 200 <= self.status_code < 300


# Parsing a URL is a sixth of httpx's CPU per request; the core sends to a handful of URLs (immutable objects).
_url = functools.lru_cache(maxsize=256)(httpx.URL)


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
    if isinstance(client, CoreClient):  # nothing of its own to merge: build_request is a third of its CPU
        # No per-read timeouts: the deadline below bounds it all (aiohttp's re-armed read timer costs CPU).
        request = httpx.Request(
            method, _url(url), headers=headers, content=content, extensions={"timeout": {}}
        )
    else:  # a client the user passed: its defaults apply
        request = client.build_request(method, url, headers=headers, content=content, timeout=timeout)
    async with asyncio.timeout(max(timeout, 0.0)):
        response = await client.send(request, stream=True)
        try:
            declared = response.headers.get("Content-Length", "")
            if declared.isascii() and declared.isdigit() and int(declared) > max_bytes:
                raise ResponseTooLargeError(max_bytes)
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > max_bytes:
                    raise ResponseTooLargeError(max_bytes)
            return BoundedResponse(response.status_code, response.headers, bytes(body))
        finally:
            await response.aclose()
