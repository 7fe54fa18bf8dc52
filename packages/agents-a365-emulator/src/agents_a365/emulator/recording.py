"""Recording of every request the emulator receives."""

from __future__ import annotations

import base64
import json
import threading
from collections import Counter, deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

__all__ = ["Headers", "RecordedRequest", "RequestRecorder"]


class Headers(Mapping[str, str]):
    """Request headers in arrival order with case-insensitive lookup.

    Names are kept as the HTTP server delivered them (uvicorn's h11 parser lowercases them). ``headers["X"]``
    returns the first value; :meth:`get_all` returns every value of a repeated header.
    """

    def __init__(self, items: list[tuple[str, str]]) -> None:
        self._items = list(items)
        self._index: dict[str, list[str]] = {}
        for name, value in self._items:
            self._index.setdefault(name.lower(), []).append(value)

    def __getitem__(self, name: str) -> str:
        return self._index[name.lower()][0]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._index

    def __iter__(self) -> Iterator[str]:
        seen: set[str] = set()
        for name, _ in self._items:
            if name.lower() not in seen:
                seen.add(name.lower())
                yield name

    def __len__(self) -> int:
        return len(self._index)

    def get_all(self, name: str) -> list[str]:
        """Every value of header ``name`` (case-insensitive), in arrival order."""
        return list(self._index.get(name.lower(), []))

    def raw(self) -> list[tuple[str, str]]:
        """The headers as ``(name, value)`` pairs, in arrival order."""
        return list(self._items)

    def __repr__(self) -> str:
        return f"Headers({self._items!r})"


@dataclass(eq=False)
class RecordedRequest:
    """One request as the emulator saw it.

    ``status`` is filled in when the response starts (``None`` while in flight or when the connection was
    dropped by a fault). ``json`` is the parsed body, or ``None`` when the body is empty or not JSON (see
    :attr:`is_json`). ``held_together`` is set when a fault with ``hold_until_concurrent`` held the request:
    how many matching requests were released together with it (itself included); less than the fault's
    ``hold_until_concurrent`` means it waited out ``hold_timeout_ms``.
    """

    index: int
    timestamp: float
    method: str
    path: str
    query: str
    headers: Headers
    body: bytes
    route: str
    server: str | None = None
    jsonrpc_method: str | None = None
    json: Any = None
    is_json: bool = False
    status: int | None = None
    dropped: bool = False
    fault: str | None = None
    held_together: int | None = None

    @property
    def query_params(self) -> dict[str, list[str]]:
        """The query string parsed into lists of values."""
        return parse_qs(self.query, keep_blank_values=True)

    @property
    def text(self) -> str:
        """The body decoded as UTF-8 (undecodable bytes replaced)."""
        return self.body.decode("utf-8", "replace")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready representation (the body as text, headers as ``[name, value]`` pairs)."""
        return {
            "index": self.index,
            "timestamp": self.timestamp,
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "headers": [[name, value] for name, value in self.headers.raw()],
            "body": self.text,
            "json": self.json,
            "isJson": self.is_json,
            "route": self.route,
            "server": self.server,
            "jsonrpcMethod": self.jsonrpc_method,
            "status": self.status,
            "dropped": self.dropped,
            "fault": self.fault,
            "heldTogether": self.held_together,
        }


class RequestRecorder:
    """Append-only, bounded, thread-safe store of :class:`RecordedRequest` and received chat messages."""

    def __init__(self, max_requests: int | None = 100_000) -> None:
        self._lock = threading.Lock()
        self._requests: deque[RecordedRequest] = deque(maxlen=max_requests)
        self._chat_messages: deque[dict[str, Any]] = deque(maxlen=max_requests)
        self._counter = 0
        self._counts: Counter[tuple[str, str | None, str | None, str | None]] = Counter()

    def next_index(self) -> int:
        """Allocate the index of the next recorded request."""
        with self._lock:
            self._counter += 1
            return self._counter

    def add(self, request: RecordedRequest) -> None:
        key = (request.route, request.server, request.jsonrpc_method, _subject(request.headers))
        with self._lock:
            self._requests.append(request)
            self._counts[key] += 1

    def tally(self, route: str, server: str | None, method: str | None, user: str | None) -> None:
        """Count a request that is not recorded (a development token exchange: ``route`` ``token``)."""
        with self._lock:
            self._counts[route, server, method, user] += 1

    def counts(self) -> list[dict[str, Any]]:
        """Requests counted since the start (or :meth:`clear`), whatever ``max_requests`` kept: one row per
        route, MCP server, JSON-RPC method (a token exchange: the audience) and user (the bearer's ``oid``)."""
        with self._lock:
            items = list(self._counts.items())
        keys = ("route", "server", "method", "user")
        return [{**dict(zip(keys, key, strict=True)), "count": n} for key, n in items]

    def add_chat_message(self, message: dict[str, Any]) -> None:
        with self._lock:
            self._chat_messages.append(message)

    def requests(self, route: str | None = None, *, server: str | None = None) -> list[RecordedRequest]:
        """Snapshot of the recorded requests, optionally filtered by route kind and MCP server name.

        ``route`` may also be given as ``mcp:<name>``.
        """
        if route is not None and route.startswith("mcp:"):
            route, server = "mcp", route[len("mcp:") :]
        with self._lock:
            snapshot = list(self._requests)
        return [
            r
            for r in snapshot
            if (route is None or r.route == route) and (server is None or r.server == server)
        ]

    def chat_messages(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._chat_messages)

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()
            self._chat_messages.clear()
            self._counts.clear()


def _subject(headers: Headers) -> str | None:
    """The ``oid`` of a request's bearer token, unverified (for counting only), else ``None``."""
    parts = headers.get("authorization", "").rpartition(" ")[2].split(".")
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (IndexError, ValueError):
        return None
    oid = claims.get("oid") if isinstance(claims, dict) else None
    return oid if isinstance(oid, str) else None
