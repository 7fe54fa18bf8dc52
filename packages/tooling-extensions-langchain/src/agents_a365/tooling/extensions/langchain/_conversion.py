"""LangChain messages -> :class:`ChatHistoryMessage` (pure functions, no I/O).

Never raises except the documented ``ValueError``s of :func:`convert_messages` (``messages is
required``, ``messages must be a sequence of messages``, ``limit must be a non-negative integer``):
a message that cannot be converted is skipped and logged, the others are kept.
"""

from __future__ import annotations

import inspect
import logging
import re
import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from agents_a365.tooling import ChatHistoryMessage
from agents_a365.tooling.message_construction import (
    DIRECT_CONSTRUCTION,
    all_fields,
    new_message,
    set_dict,
    set_extra,
    set_fields_set,
    set_private,
    trusted_message,
)

__all__ = ["DEFAULT_ROLE", "ROLE_BY_TYPE", "convert_message", "convert_messages", "extract_text", "map_role"]

logger = logging.getLogger(__name__)

DEFAULT_ROLE = "user"

# ``BaseMessage.type`` -> role sent to threat protection. Chunk classes report their class
# name as ``type`` (``AIMessageChunk``), normalised to the same keys by ``_type_key``.
ROLE_BY_TYPE: Mapping[str, str] = {
    "human": "user",
    "ai": "assistant",
    "system": "system",
    "tool": "tool",
    "function": "function",
}

_CHUNK_TYPES: Mapping[str, str] = {
    "aimessagechunk": "ai",
    "humanmessagechunk": "human",
    "systemmessagechunk": "system",
    "toolmessagechunk": "tool",
    "functionmessagechunk": "function",
    "chatmessagechunk": "chat",
}


_SURROGATE = re.compile("[\ud800-\udfff]")

# Classes whose ``type``/``content``/``id`` are plain pydantic fields (no subclass overriding them):
# the fast path of :func:`convert_messages` reads those directly.
_PLAIN_CLASSES = frozenset({HumanMessage, AIMessage, SystemMessage, ToolMessage})


def _sendable(text: str) -> str:
    """``text`` unchanged unless it holds lone surrogates (JSON-decoded history can): those are
    not valid in a ``ChatHistoryMessage`` nor encodable as UTF-8, so they become U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def _type_key(message: Any) -> str | None:
    value = getattr(message, "type", None)
    if not isinstance(value, str):
        return None
    key = value.strip().lower()
    return _CHUNK_TYPES.get(key, key)


def map_role(message: Any) -> str:
    """The role of ``message``: human->user, ai->assistant, system, tool, function,
    chat->its own ``role``, anything else->user."""
    key = _type_key(message)
    if key == "chat":
        role = getattr(message, "role", None)
        if isinstance(role, str) and role.strip():
            return role.strip()
        return DEFAULT_ROLE
    if key is None:
        return DEFAULT_ROLE
    return ROLE_BY_TYPE.get(key, DEFAULT_ROLE)


def _text_accessor(message: Any) -> str | None:
    try:
        value = getattr(message, "text", None)
        if callable(value) and not isinstance(value, str):
            value = value()
    except Exception:  # content shapes the accessor does not expect: fall through
        return None
    return str(value) if isinstance(value, str) else None


def _part_text(part: Any) -> str | None:
    if isinstance(part, str):
        return part
    if isinstance(part, Mapping):
        if part.get("type", "text") == "text":
            text = part.get("text")
            return text if isinstance(text, str) else None
        return None
    text = getattr(part, "text", None)
    return text if isinstance(text, str) else None


_BASE_TEXT = inspect.getattr_static(BaseMessage, "text", None)


_OVERRIDES: dict[type, bool] = {}


def _overrides_text(cls: type) -> bool:
    """Whether a message class defines its own ``text`` (langchain-core's is the default); cached per class."""
    known = _OVERRIDES.get(cls)
    if known is None:
        known = _OVERRIDES[cls] = (
            issubclass(cls, BaseMessage) and inspect.getattr_static(cls, "text", None) is not _BASE_TEXT
        )
    return known


def extract_text(message: Any) -> str | None:
    """The text of ``message``, or ``None`` when it has none.

    Order: the message's own ``text`` accessor when its class overrides langchain-core's (the
    class knows its text best); string ``content``; the text parts of list ``content`` joined
    by one space (as the OpenAI extension joins content parts, so both send the same text —
    langchain-core's ``.text`` would concatenate them with no separator); then the ``text``
    accessor for other shapes. Whitespace-only text counts as no text.
    """
    if _overrides_text(type(message)):
        own = _text_accessor(message)
        if own is not None and own.strip():
            return own
    content = getattr(message, "content", None)
    if isinstance(content, str):
        return content if content.strip() else None
    if isinstance(content, Iterable) and not isinstance(content, bytes | bytearray | Mapping):
        try:
            parts = [t for t in (_part_text(p) for p in content) if t is not None and t.strip()]
        except Exception:  # an iterable that fails mid-way: fall back to the accessor
            parts = []
        if parts:
            return " ".join(parts)
    text = _text_accessor(message)
    if text is not None and text.strip():
        return text
    return None


def _message_id(message: Any) -> str:
    value = getattr(message, "id", None)
    if isinstance(value, str) and value.strip():
        return value
    return str(uuid.uuid4())


def convert_message(message: Any, timestamp: datetime | None = None) -> ChatHistoryMessage | None:
    """One message, or ``None`` when it has no text. May raise for exotic objects; use
    :func:`convert_messages` for the never-raising batch form."""
    text = extract_text(message)
    if text is None:
        return None
    # Every field is a known-valid string/datetime here: skip pydantic validation (hot path).
    return trusted_message(
        _sendable(_message_id(message)),
        _sendable(map_role(message)),
        _sendable(text),
        timestamp if timestamp is not None else datetime.now(UTC),
    )


def _check_limit(limit: Any) -> int | None:
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ValueError("limit must be a non-negative integer")
    return limit


def convert_messages(messages: Any, limit: int | None = None) -> list[ChatHistoryMessage]:
    """Convert ``messages`` (oldest first); with ``limit``, only the ``limit`` most recent messages.

    Messages without text, and messages whose conversion fails, are skipped (one warning
    per call summarises them); the rest keep their order. Existing ids are kept, others
    get a uuid4; every message is stamped with the current UTC time.
    """
    if messages is None:
        raise ValueError("messages is required")
    if isinstance(messages, str | bytes | bytearray | Mapping) or not isinstance(messages, Iterable):
        raise ValueError("messages must be a sequence of messages")
    wanted = _check_limit(limit)
    try:
        items = list(messages)
    except Exception as exc:
        raise ValueError("messages must be a sequence of messages") from exc
    if wanted is not None:
        # The most recent ``limit`` messages of the history, as ``Session.get_items(limit)``
        # counts them in the OpenAI extension; those without text are then skipped.
        items = items[len(items) - wanted :] if wanted else []
    now = datetime.now(UTC)
    fields_set = all_fields()
    converted: list[ChatHistoryMessage] = []
    skipped_empty = 0
    skipped_failed = 0
    skipped_calls = 0
    direct = DIRECT_CONSTRUCTION
    for message in items:
        # Fast path for what histories hold nearly always: Human/AI/System/ToolMessage (exact classes,
        # their fields plain entries of ``__dict__``) with string content, exact str values only, so
        # it cannot raise. It gives exactly what convert_message gives them
        # (tests/langchain/test_langchain_conversion_fast_path.py); anything else goes the general way.
        # ``__dict__[name]`` is ``getattr(message, name)`` for these classes (one missing: general path);
        # ``ROLE_BY_TYPE`` is ``map_role`` for an already normalised ``type`` ("human", "ai" …);
        # ``s.isspace()`` is ``not s.strip()`` for a non-empty ``s``, without copying it.
        if direct and type(message) in _PLAIN_CLASSES:
            fields = message.__dict__
            try:
                kind = fields["type"]
                content = fields["content"]
                ident = fields["id"]
            except KeyError:
                kind = content = ident = None
            role = ROLE_BY_TYPE.get(kind) if type(kind) is str else None
            if (
                role is not None
                and type(content) is str
                and content
                and not content.isspace()
                and (ident is None or type(ident) is str)
            ):
                if not ident or ident.isspace():
                    ident = str(uuid.uuid4())
                if not (ident.isascii() and role.isascii() and content.isascii()):  # O(1) check
                    ident, role, content = _sendable(ident), _sendable(role), _sendable(content)
                # trusted_message inlined: a call is a tenth of the per-message cost.
                built = new_message()
                set_dict(built, {"id": ident, "role": role, "content": content, "timestamp": now})
                set_fields_set(built, fields_set)
                set_extra(built, None)
                set_private(built, None)
                converted.append(built)
                continue
        try:
            result = convert_message(message, now)
        except Exception as exc:
            skipped_failed += 1
            logger.debug("skipping a message that failed conversion: %s", type(exc).__name__)
            continue
        if result is None:
            if getattr(message, "tool_calls", None):
                skipped_calls += 1  # an assistant turn that only calls tools: normal, nothing to act on
            else:
                skipped_empty += 1
            continue
        converted.append(result)
    if skipped_calls:
        logger.debug("chat history: skipped %d tool-call-only message(s) (no text)", skipped_calls)
    if skipped_empty or skipped_failed:
        logger.warning(
            "chat history: skipped %d message(s) without text and %d that failed conversion",
            skipped_empty,
            skipped_failed,
        )
    return converted
