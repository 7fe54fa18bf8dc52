"""OpenAI Agents SDK items -> :class:`ChatHistoryMessage` (pure functions, no I/O).

Items are what a ``Session.get_items()`` returns (``TResponseInputItem`` TypedDicts), or the
SDK's pydantic output models (``ResponseOutputMessage`` …); both shapes are read through the
same field accessor. Nothing here raises except the documented ``ValueError``s of
:func:`to_chat_history_messages` (``messages is required``, ``messages must be a sequence of
items``): an item that cannot be converted is skipped and logged, the others are kept.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

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

__all__ = [
    "TOOL_OUTPUT_ROLE",
    "TOOL_OUTPUT_TYPES",
    "extract_text",
    "to_chat_history_message",
    "to_chat_history_messages",
]

logger = logging.getLogger(__name__)

TOOL_OUTPUT_ROLE = "tool"
"""Role given to tool results, as LangChain's ``ToolMessage`` has."""

# Tool results are where prompt injection arrives: send them to threat protection as text.
TOOL_OUTPUT_TYPES = frozenset({"function_call_output"})

_MISSING = object()
_SURROGATE = re.compile("[\ud800-\udfff]")


def _field(item: Any, name: str) -> Any:
    """``item[name]`` for mappings, ``item.name`` otherwise; ``None`` when absent or unreadable."""
    try:
        if isinstance(item, Mapping):
            return item.get(name)
        value = getattr(item, name, _MISSING)
    except Exception:  # exotic objects whose accessors raise count as "no such field"
        return None
    return None if value is _MISSING else value


def _sendable(text: str) -> str:
    """``text`` unchanged unless it holds lone surrogates (JSON-decoded history can): those
    cannot be encoded as UTF-8 and would fail the whole request, so they become U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def _kind(item: Any) -> str | None:
    kind = _field(item, "type")
    return kind if isinstance(kind, str) else None


def _nonblank(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _parts_text(parts: Any) -> str | None:
    """The text of a list of content parts, joined by one space (parts without text ignored)."""
    if isinstance(parts, str | bytes | bytearray | Mapping) or not isinstance(parts, Iterable):
        return None
    texts: list[str] = []
    for part in parts:
        text = part if isinstance(part, str) else _field(part, "text")
        if _nonblank(text) is not None:
            texts.append(text)
    return " ".join(texts) if texts else None


def _content_text(value: Any) -> str | None:
    """A string used as is, or the joined text of content parts."""
    if isinstance(value, str):
        return _nonblank(value)
    return _parts_text(value)


def extract_text(item: Any) -> str | None:
    """The text of ``item``, or ``None`` when it has none (whitespace-only counts as none).

    Order: string ``content`` as is; the ``text`` of ``content`` parts joined by one space;
    the item's ``text``; for tool results (``function_call_output``) their ``output``.
    """
    text = _content_text(_field(item, "content"))
    if text is None:
        text = _nonblank(_field(item, "text"))
    if text is None and _kind(item) in TOOL_OUTPUT_TYPES:
        text = _content_text(_field(item, "output"))
    return text


def _role(item: Any) -> str | None:
    if _kind(item) in TOOL_OUTPUT_TYPES:
        return TOOL_OUTPUT_ROLE
    # Passed through unchanged: threat protection knows the Responses roles.
    return _nonblank(_field(item, "role"))


def _item_id(item: Any) -> str:
    value = _field(item, "id")
    return value if _nonblank(value) is not None else str(uuid.uuid4())


def to_chat_history_message(item: Any, timestamp: datetime | None = None) -> ChatHistoryMessage | None:
    """One item, or ``None`` when it has no text or no role (never raises)."""
    try:
        text = extract_text(item)
        role = _role(item) if text is not None else None
        if text is None or role is None:
            return None
        # Every field is a known-valid string/datetime here: skip pydantic validation (hot path).
        return trusted_message(
            _sendable(_item_id(item)),
            _sendable(role),
            _sendable(text),
            timestamp if timestamp is not None else datetime.now(UTC),
        )
    except Exception as exc:  # a str subclass or mapping that misbehaves: skip, don't fail the batch
        logger.debug("skipping an item that failed conversion: %s", type(exc).__name__)
        return None


def _fast_parts_text(parts: list[Any]) -> str | None:
    """``_parts_text(parts)`` when every part is an exact ``dict`` or ``str`` and every ``text`` an
    exact ``str`` or ``None``; ``None`` otherwise, and when no part has text (the general path then
    looks further)."""
    texts: list[str] = []
    for part in parts:
        piece = part.get("text") if type(part) is dict else part if type(part) is str else _MISSING
        if type(piece) is str:
            if piece and not piece.isspace():
                texts.append(piece)
        elif piece is not None:
            return None
    return " ".join(texts) if texts else None


def _is_message_like(item: Any) -> bool:
    """Messages (and untyped items) deserve a warning when skipped; tool calls, reasoning … don't."""
    kind = _field(item, "type")
    return kind is None or kind == "message" or _field(item, "role") is not None


def to_chat_history_messages(items: Any, *, now: datetime | None = None) -> list[ChatHistoryMessage]:
    """Convert ``items`` (oldest first) to chat history messages, in the same order.

    Role passed through (``tool`` for ``function_call_output``); string content as is, content
    parts' text joined by one space, ``text`` as fallback; ``id`` kept or a new uuid4; every
    message stamped ``now`` (default: the current UTC time). Items without text are skipped:
    one warning per call counts the skipped messages; other item kinds without text
    (function calls, reasoning, …) are skipped silently (debug log).
    """
    if items is None:
        raise ValueError("messages is required")
    if isinstance(items, str | bytes | bytearray | Mapping) or not isinstance(items, Iterable):
        raise ValueError("messages must be a sequence of items")
    try:
        snapshot = list(items)
    except Exception as exc:
        raise ValueError("messages must be a sequence of items") from exc
    stamp = now if now is not None else datetime.now(UTC)
    fields_set = all_fields()
    converted: list[ChatHistoryMessage] = []
    skipped_messages = 0
    skipped_other = 0
    direct = DIRECT_CONSTRUCTION
    for item in snapshot:
        # Fast path for what sessions hold nearly always: plain dicts with a role and string or
        # text-part content, exact str/dict/list values only, so it cannot raise. It gives exactly
        # what to_chat_history_message gives them (tests/openai/test_openai_conversion_fast_path.py);
        # anything else — tool results, blank text, subclasses — goes the general way.
        # (``s.isspace()`` is ``not s.strip()`` for a non-empty ``s``, without copying it.)
        if direct and type(item) is dict:
            kind = item.get("type")
            role = item.get("role")
            ident = item.get("id")
            if (
                (kind is None or (type(kind) is str and kind == "message"))
                and type(role) is str
                and role
                and not role.isspace()
                and (ident is None or type(ident) is str)
            ):
                content = item.get("content")
                if type(content) is str:
                    text = content if content and not content.isspace() else None
                else:
                    text = _fast_parts_text(content) if type(content) is list else None
                if text is not None:
                    if not ident or ident.isspace():
                        ident = str(uuid.uuid4())
                    if not (ident.isascii() and role.isascii() and text.isascii()):  # O(1) check
                        ident, role, text = _sendable(ident), _sendable(role), _sendable(text)
                    # trusted_message inlined: a call is a tenth of the per-message cost.
                    built = new_message()
                    set_dict(built, {"id": ident, "role": role, "content": text, "timestamp": stamp})
                    set_fields_set(built, fields_set)
                    set_extra(built, None)
                    set_private(built, None)
                    converted.append(built)
                    continue
        message = to_chat_history_message(item, stamp)
        if message is not None:
            converted.append(message)
            continue
        try:
            message_like = _is_message_like(item)
        except Exception:
            message_like = True
        if message_like:
            skipped_messages += 1
        else:
            skipped_other += 1
    if skipped_messages:
        logger.warning(
            "chat history: skipped %d message(s) without text or role; sending the other %d",
            skipped_messages,
            len(converted),
        )
    if skipped_other:
        logger.debug("chat history: skipped %d non-message item(s) without text", skipped_other)
    return converted
