"""Outermost ASGI middleware: records every request and applies injected faults."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agents_a365.emulator._context import EmulatorContext
from agents_a365.emulator._routes import classify
from agents_a365.emulator.faults import Fault
from agents_a365.emulator.recording import Headers, RecordedRequest

logger = logging.getLogger("agents_a365.emulator")

MALFORMED_BODY = b'{"this is": not valid json'


async def _read_body(receive: Receive) -> tuple[bytes, bool]:
    """The whole request body, and whether the client disconnected while sending it."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(chunks), True
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks), False


def _parse_json(body: bytes) -> tuple[Any, bool]:
    if not body:
        return None, False
    try:
        return json.loads(body), True
    except (ValueError, UnicodeDecodeError):
        return None, False


def _jsonrpc_method(payload: Any) -> str | None:
    if isinstance(payload, list) and payload:
        payload = payload[0]
    if isinstance(payload, dict):
        method = payload.get("method")
        return method if isinstance(method, str) else None
    return None


async def _send_fault_response(send: Send, fault: Fault, kind: str) -> int:
    status = fault.status if fault.status is not None else 200
    if fault.malformed:
        body = MALFORMED_BODY
    elif fault.body is not None:
        body = json.dumps(fault.body).encode("utf-8")
    else:
        body = json.dumps(
            {
                "error": "fault_injected",
                "message": f"injected HTTP {status} on route {kind}",
                "status": status,
            }
        ).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode("ascii"))]
    if fault.retry_after is not None:
        headers.append((b"retry-after", fault.retry_after.encode("latin-1")))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
    return status


class RecordingMiddleware:
    def __init__(self, app: ASGIApp, ctx: EmulatorContext) -> None:
        self._app = app
        self._ctx = ctx

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        kind, server = classify(scope["path"])
        if kind == "control":
            await self._app(scope, receive, send)
            return
        body, disconnected = await _read_body(receive)
        parsed, is_json = _parse_json(body)
        method = _jsonrpc_method(parsed) if kind == "mcp" else None
        record = RecordedRequest(
            index=self._ctx.recorder.next_index(),
            timestamp=time.monotonic(),
            method=scope["method"],
            path=scope["path"],
            query=scope.get("query_string", b"").decode("latin-1"),
            headers=Headers([(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]),
            body=body,
            route=kind,
            server=server,
            jsonrpc_method=method,
            json=parsed,
            is_json=is_json,
        )
        self._ctx.recorder.add(record)
        if disconnected:
            return

        taken = self._ctx.faults.take(kind, server, method) if kind != "unknown" else None
        if taken is not None:
            key, fault, barrier = taken
            record.fault = key
            logger.info("Applying fault %s to %s %s", key, scope["method"], scope["path"])
            if barrier is not None:
                # First, so the held requests then get the fault's other effects together.
                record.held_together = await barrier.wait(fault.hold_timeout_ms / 1000)
            if fault.latency_ms:
                await asyncio.sleep(fault.latency_ms / 1000)
            if fault.drop:
                record.dropped = True
                if await self._ctx.drop_connection(scope, receive):
                    return
                logger.warning("Could not drop the connection of %s; answering 503 instead", scope["path"])
                record.status = await _send_fault_response(send, Fault(status=503), kind)
                return
            if fault.replaces_response:
                record.status = await _send_fault_response(send, fault, kind)
                return

        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        async def capture(message: Message) -> None:
            if message["type"] == "http.response.start":
                record.status = int(message["status"])
            await send(message)

        await self._app(scope, replay, capture)
