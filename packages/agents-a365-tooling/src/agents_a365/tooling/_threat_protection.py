"""Threat protection: the chat-message request, its serialization and its bounded, retried send."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from agents_a365.runtime import OperationResult, TurnContextLike

from ._deprecation import check_options
from ._part import Owner, ServicePart
from ._rtp_send import RtpSendSettings, send_chat_history_request
from ._telemetry_hooks import traced_rtp_send
from .constants import CHAT_HISTORY_PATH
from .headers import build_request_headers
from .models import ChatHistoryMessage, ChatMessageRequest, ToolOptions, as_utc

logger = logging.getLogger("agents_a365.tooling.service")


class ThreatProtection(ServicePart):
    """``send_chat_history`` and its in-flight bound; owned by :class:`McpToolServerConfigurationService`."""

    def __init__(self, owner: Owner) -> None:
        super().__init__(owner)
        self._rtp_semaphore: asyncio.Semaphore | None = None

    def reset(self) -> None:
        """Forget the semaphore of another event loop."""
        self._rtp_semaphore = None

    @traced_rtp_send
    async def send_chat_history(
        self,
        turn_context: TurnContextLike,
        chat_history_messages: Sequence[ChatHistoryMessage],
        options: ToolOptions | None = None,
    ) -> OperationResult:
        """See :meth:`McpToolServerConfigurationService.send_chat_history`."""
        check_options(options, ToolOptions)
        request = _chat_message_request(turn_context, chat_history_messages)
        body = _serialize(request)
        headers = build_request_headers(
            turn_context,
            orchestrator_name=options.orchestrator_name if options else None,
            distribution=options.distribution if options else None,
        )
        headers["Content-Type"] = "application/json"
        return await self._post_with_retries(
            f"{self.configuration.mcp_platform_endpoint}{CHAT_HISTORY_PATH}", body, headers
        )

    def _rtp_slots(self) -> asyncio.Semaphore:
        # Bounded in-flight sends: under a burst, waiting here is O(1) and fair, while a
        # thousand requests queued inside the connection pool are rescanned on every release
        # and starve the gateway calls that share it (scripts/load.py, scripts/bench).
        if self._rtp_semaphore is None:
            self._rtp_semaphore = asyncio.Semaphore(max(1, self.configuration.chat_history_concurrency))
        return self._rtp_semaphore

    async def _post_with_retries(self, url: str, body: bytes, headers: dict[str, str]) -> OperationResult:
        cfg = self.configuration
        settings = RtpSendSettings(
            wire_timeout=cfg.chat_history_timeout,
            queue_timeout=cfg.chat_history_queue_timeout,
            max_attempts=cfg.chat_history_max_attempts,
            max_response_bytes=cfg.max_rtp_response_bytes,
        )
        return await send_chat_history_request(
            self.http_client, url, body, headers, settings, self._rtp_slots()
        )


def _serialize(request: ChatMessageRequest) -> bytes:
    try:
        return request.model_dump_json(by_alias=True).encode()
    except PydanticSerializationError:
        # Lone surrogates (e.g. from JSON-decoded history) are not encodable as UTF-8:
        # send U+FFFD in their place rather than lose the whole record.
        data = request.model_dump(by_alias=True, mode="json")  # timestamps as "...Z" strings
        return json.dumps(_replace_surrogates(data), ensure_ascii=False).encode()


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {k: _replace_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_surrogates(v) for v in value]
    return value


def _required_text(value: Any, message: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(message)
    return value


def _chat_message_request(
    turn_context: TurnContextLike, messages: Sequence[ChatHistoryMessage]
) -> ChatMessageRequest:
    if turn_context is None:
        raise ValueError("turn_context is required")
    if messages is None:
        raise ValueError("chat_history_messages is required")
    if not isinstance(messages, list | tuple):
        raise TypeError(
            f"chat_history_messages must be a list of ChatHistoryMessage, got {type(messages).__name__}"
        )
    activity = getattr(turn_context, "activity", None)
    if activity is None:
        raise ValueError("turn_context.activity is required")
    conversation = getattr(activity, "conversation", None)
    conversation_id = _required_text(
        getattr(conversation, "id", None), "turn_context.activity.conversation.id is required"
    )
    message_id = _required_text(getattr(activity, "id", None), "turn_context.activity.id is required")
    user_message = _required_text(getattr(activity, "text", None), "turn_context.activity.text is required")
    # Messages made with model_construct skip the UTC normalisation of validation: do it here.
    history = [
        m.model_copy(update={"timestamp": as_utc(m.timestamp)})
        if type(m) is ChatHistoryMessage
        and isinstance(m.timestamp, datetime)
        and m.timestamp.tzinfo is not UTC
        else m
        for m in messages
    ]
    if all(type(m) is ChatHistoryMessage for m in history):
        # Already validated models: skip re-validation on the hot path.
        return ChatMessageRequest.model_construct(
            conversation_id=conversation_id,
            message_id=message_id,
            user_message=user_message,
            chat_history=history,
        )
    try:
        return ChatMessageRequest(
            conversation_id=conversation_id,
            message_id=message_id,
            user_message=user_message,
            chat_history=history,
        )
    except ValidationError as exc:
        raise ValueError(f"invalid chat history message: {exc.errors()[0]['msg']}") from exc
