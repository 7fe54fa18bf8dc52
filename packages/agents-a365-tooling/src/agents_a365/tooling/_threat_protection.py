"""Threat protection: the chat-message request, its serialization and its bounded, retried send."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from agents_a365.runtime import OperationError, OperationResult, require

from ._deprecation import check_options
from ._part import ServicePart, Shared
from ._redact import scrub
from ._rtp_send import send_chat_history_request
from ._telemetry_hooks import SendTelemetry
from ._turn import Turn
from .constants import CHAT_HISTORY_PATH
from .errors import ChatHistorySendError
from .headers import request_headers
from .models import ChatHistoryMessage, ChatMessageRequest, ToolOptions, as_utc

logger = logging.getLogger("agents_a365.tooling.service")

_DRAIN_POLL = 0.05


class ThreatProtection(ServicePart):
    """``send_chat_history``, its in-flight bound and its drain at close; owned by
    :class:`McpToolServerConfigurationService`."""

    def __init__(self, shared: Shared) -> None:
        super().__init__(shared)
        self._slots: asyncio.Semaphore | None = None
        self._slots_size = 0
        # Every send under way (queued for a slot or on the wire), by the deadline that ends it at close.
        self._sends: set[asyncio.Timeout] = set()
        self._idle: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.closed = False

    def _on_running_loop(self) -> None:
        # The slots and sends of another event loop (an earlier asyncio.run) cannot be awaited in this one,
        # whoever owns the HTTP client.
        if (loop := asyncio.get_running_loop()) is not self._loop:
            self._loop, self._slots = loop, None
            self._sends.clear()

    async def send_chat_history(
        self,
        turn: Turn,
        chat_history_messages: Sequence[ChatHistoryMessage],
        options: ToolOptions | None,
        send: SendTelemetry,
    ) -> OperationResult:
        """See :meth:`McpToolServerConfigurationService.send_chat_history` (``turn``: its turn, read once;
        ``send``: its span, open)."""
        check_options(options, ToolOptions)
        body, record = _request_body(turn, chat_history_messages)
        if self.closed:
            return _undelivered(record, "the service is closed")
        headers = request_headers(turn, options)
        headers["Content-Type"] = "application/json"
        url = f"{self.configuration.mcp_platform_endpoint}{CHAT_HISTORY_PATH}"
        self._on_running_loop()
        deadline = asyncio.timeout(None)  # moved to "now" by drain() when the drain deadline passes
        self._sends.add(deadline)
        try:
            async with deadline:
                result = await send_chat_history_request(
                    self.http_client, url, body, headers, self.configuration, self._send_slots(), send
                )
        except Exception as exc:
            # A result, never a raise (e.g. a caller's HTTP client closed under the send).
            reason = (
                "the service closed before the send completed (drain deadline passed)"
                if deadline.expired()
                else f"{type(exc).__name__}: {scrub(exc)}"
            )
            return _undelivered(record, reason)
        finally:
            self._sends.discard(deadline)
            if not self._sends and self._idle is not None:
                self._idle.set()
        if not result.succeeded:
            error = result.errors[0].exception
            if isinstance(error, ChatHistorySendError):
                error.conversation_id, error.message_id = record
        return result

    async def drain(self) -> None:
        """Refuse new sends; let those under way finish within ``chat_history_drain_timeout`` (on the
        service's clock), then end the rest, each with a failed result naming its record."""
        self.closed = True
        self._on_running_loop()
        if not self._sends:
            return
        timeout, clock = max(self.configuration.chat_history_drain_timeout, 0.0), self.shared.clock
        deadline = clock() + timeout
        idle = self._idle = asyncio.Event()
        logger.debug("closing: draining %d threat-protection send(s), up to %s s", len(self._sends), timeout)
        while self._sends and (left := deadline - clock()) > 0:
            # Short waits, so the deadline is read on ``clock`` (a test's fake clock ends it without sleeping).
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(min(left, _DRAIN_POLL)):
                    await idle.wait()
        if self._sends:
            logger.warning(
                "closing: %d threat-protection send(s) not done within chat_history_drain_timeout (%s s): "
                "their records are reported undelivered",
                len(self._sends),
                timeout,
            )
            now = asyncio.get_running_loop().time()
            for send in list(self._sends):
                send.reschedule(now)
            with contextlib.suppress(TimeoutError):  # they unwind at once; bounded all the same
                async with asyncio.timeout(1.0):
                    await idle.wait()

    def _send_slots(self) -> asyncio.Semaphore:
        # Bounded in-flight sends: under a burst, waiting here is O(1) and fair, while a
        # thousand requests queued inside the connection pool are rescanned on every release
        # and starve the gateway calls that share it (scripts/load.py, scripts/bench).
        # The size is read at each send: a new chat_history_concurrency applies to the sends that
        # follow (those under way finish on the slots they hold).
        size = max(1, self.configuration.chat_history_concurrency)
        if self._slots is None or size != self._slots_size:
            self._slots, self._slots_size = asyncio.Semaphore(size), size
        return self._slots


def _undelivered(record: tuple[str, str], reason: str) -> OperationResult:
    conversation_id, message_id = record
    error = ChatHistorySendError(
        f"threat protection record (conversation {conversation_id!r}, message {message_id!r}) not delivered: "
        f"{reason}",
        attempts=0,
    )
    error.conversation_id, error.message_id = record
    return OperationResult.failed(OperationError(error))


def _serialize(request: ChatMessageRequest) -> bytes:
    try:
        return request.model_dump_json(by_alias=True).encode()
    except PydanticSerializationError:
        # Lone surrogates (e.g. from JSON-decoded history) are not encodable as UTF-8:
        # send U+FFFD in their place rather than lose the whole record (JSON's own characters are ASCII:
        # only the text of its strings changes).
        data = request.model_dump(by_alias=True, mode="json")  # timestamps as "...Z" strings
        text = json.dumps(data, ensure_ascii=False)
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode()


def _required_text(value: Any, message: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(message)
    return value


def _request_body(turn: Turn, messages: Sequence[ChatHistoryMessage]) -> tuple[bytes, tuple[str, str]]:
    """The serialized request and its record (conversation id, message id). The models end here: a send
    waiting for a slot holds only bytes (fewer live objects for the garbage collector in a burst)."""
    require(turn.context, "turn_context")
    require(messages, "chat_history_messages")
    if not isinstance(messages, list | tuple):
        raise TypeError(
            f"chat_history_messages must be a list of ChatHistoryMessage, got {type(messages).__name__}"
        )
    require(turn.identity, "turn_context.activity")
    conversation_id = _required_text(
        turn.conversation_id, "turn_context.activity.conversation.id is required"
    )
    message_id = _required_text(turn.message_id, "turn_context.activity.id is required")
    user_message = _required_text(turn.text, "turn_context.activity.text is required")
    # Messages made with model_construct skip the UTC normalisation of validation: do it here.
    history = [
        m.model_copy(update={"timestamp": as_utc(m.timestamp)})
        if type(m) is ChatHistoryMessage
        and isinstance(m.timestamp, datetime)
        and m.timestamp.tzinfo is not UTC
        else m
        for m in messages
    ]
    try:  # validated: messages that are already models are taken as they are (cheaper than model_construct)
        request = ChatMessageRequest(
            conversation_id=conversation_id,
            message_id=message_id,
            user_message=user_message,
            chat_history=history,
        )
    except ValidationError as exc:
        raise ValueError(f"invalid chat history message: {exc.errors()[0]['msg']}") from exc
    return _serialize(request), (conversation_id, message_id)
