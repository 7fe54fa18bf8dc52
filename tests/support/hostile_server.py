"""A small, scriptable, misbehaving HTTP/1.1 server on 127.0.0.1 (raw asyncio, no framework).

Each route is an ``async`` behaviour ``(request, writer) -> None`` that writes whatever it likes:
trickled status lines, endless bodies, huge or deeply nested JSON, echoed headers, held answers.
Real sockets, real httpx on the other side: the client cannot tell it from a slow or hostile peer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["HostileServer", "Request", "ServerThread", "behaviours"]


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


Behaviour = Callable[[Request, asyncio.StreamWriter], Awaitable[None]]


def _head(status: int, headers: dict[str, str] | None = None, length: int | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status} X"]
    for name, value in (headers or {}).items():
        lines.append(f"{name}: {value}")
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class behaviours:
    """Factories of route behaviours."""

    @staticmethod
    def respond(
        status: int = 200, body: bytes | Any = b"", headers: dict[str, str] | None = None, *, delay: float = 0
    ) -> Behaviour:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()

        async def run(request: Request, writer: asyncio.StreamWriter) -> None:
            if delay:
                await asyncio.sleep(delay)
            writer.write(
                _head(status, {"Content-Type": "application/json", **(headers or {})}, len(data)) + data
            )
            await writer.drain()

        return run

    @staticmethod
    def trickle(status: int = 200, body: bytes = b"[]", *, interval: float = 0.05) -> Behaviour:
        """Status line, headers and body one byte at a time: each byte resets a per-read timeout."""
        data = _head(status, {"Content-Type": "application/json"}, len(body)) + body

        async def run(request: Request, writer: asyncio.StreamWriter) -> None:
            for i in range(len(data)):
                writer.write(data[i : i + 1])
                await writer.drain()
                await asyncio.sleep(interval)

        return run

    @staticmethod
    def endless(chunk: bytes = b"[" * 65536, *, interval: float = 0) -> Behaviour:
        """A 200 whose chunked body never ends (fast: the size cap, not the deadline, must stop it)."""

        async def run(request: Request, writer: asyncio.StreamWriter) -> None:
            writer.write(_head(200, {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}))
            frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
            while True:
                writer.write(frame)
                await writer.drain()
                await asyncio.sleep(interval)

        return run

    @staticmethod
    def hold() -> Behaviour:
        """Read the request, never answer."""

        async def run(request: Request, writer: asyncio.StreamWriter) -> None:
            await asyncio.Event().wait()

        return run

    @staticmethod
    def echo_headers(status: int = 401) -> Behaviour:
        """An error whose text carries every request header (a bearer token included)."""

        async def run(request: Request, writer: asyncio.StreamWriter) -> None:
            text = "; ".join(f"{k}: {v}" for k, v in request.headers.items())
            data = json.dumps({"error": {"code": -32001, "message": f"denied, you sent {text}"}}).encode()
            writer.write(_head(status, {"Content-Type": "application/json"}, len(data)) + data)
            await writer.drain()

        return run


@dataclass
class HostileServer:
    routes: dict[str, Behaviour] = field(default_factory=dict)
    default: Behaviour = field(default_factory=lambda: behaviours.respond(404, {"error": "no route"}))
    requests: list[Request] = field(default_factory=list)
    connections: int = 0
    """TCP connections accepted so far (keep-alive reuse shows as fewer connections than requests)."""
    idle_timeout: float | None = None
    """Seconds a keep-alive connection may wait for its next request before the server closes it."""
    _server: asyncio.Server | None = None
    _handlers: set[asyncio.Task[None]] = field(default_factory=set)
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def wait_for_requests(self, count: int = 1) -> None:
        """Until ``count`` requests have arrived (the test's own timeout bounds it)."""
        while len(self.requests) < count:
            self._arrived.clear()
            await self._arrived.wait()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    def route(self, path_suffix: str, behaviour: Behaviour) -> None:
        """Serve requests whose path ends with ``path_suffix`` with ``behaviour``."""
        self.routes[path_suffix] = behaviour

    def gateway(self, *entries: dict[str, str]) -> None:
        """Answer the tooling gateway's discovery (``.../mcpServers``) with ``entries``."""
        self.route("/mcpServers", behaviours.respond(200, {"mcpServers": list(entries)}))

    async def __aenter__(self) -> HostileServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._handlers):
            task.cancel()
        for task in list(self._handlers):
            with contextlib.suppress(BaseException):
                await task
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        self.connections += 1
        served = False
        try:
            while True:
                try:
                    idle = self.idle_timeout if served else None  # a new connection waits for its first
                    request = await asyncio.wait_for(self._read(reader), idle)
                except TimeoutError:  # an idle keep-alive connection: closed, as real servers do
                    return
                if request is None:
                    return
                served = True
                self.requests.append(request)
                self._arrived.set()
                behaviour = next(
                    (b for suffix, b in self.routes.items() if request.path.endswith(suffix)), self.default
                )
                await behaviour(request, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            self._handlers.discard(task)
            writer.close()

    @staticmethod
    async def _read(reader: asyncio.StreamReader) -> Request | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        body = await reader.readexactly(length) if length else b""
        return Request(method, path, headers, body)


class ServerThread:
    """A ``HostileServer`` on its own event loop in a thread: it outlives the test's event loops
    (``asyncio.run`` twice). ``setup(server)`` sets its routes before it serves."""

    def __init__(self, setup: Callable[[HostileServer], None], *, safety: float = 20.0) -> None:
        self._setup, self._safety = setup, safety
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._stop: asyncio.Event | None = None
        self.base_url = ""
        self.server: HostileServer | None = None
        self._thread = threading.Thread(
            target=self._loop.run_until_complete, args=(self._run(),), daemon=True
        )

    async def _run(self) -> None:
        self._stop = asyncio.Event()
        async with HostileServer() as server:
            self._setup(server)
            self.server, self.base_url = server, server.base_url
            self._ready.set()
            await self._stop.wait()

    def __enter__(self) -> ServerThread:
        self._thread.start()
        assert self._ready.wait(self._safety)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(self._safety)
        self._loop.close()
