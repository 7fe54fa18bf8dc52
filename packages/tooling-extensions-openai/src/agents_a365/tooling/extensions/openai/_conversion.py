"""OpenAI Agents SDK items -> :class:`ChatHistoryMessage`: only what is native to the SDK.

Items are what a ``Session.get_items()`` returns (``TResponseInputItem`` TypedDicts), or the SDK's
pydantic output models (``ResponseOutputMessage`` …); both shapes are read through the same field
accessor. Every shared rule (argument checks, ``limit``, skipping, ids, timestamps, surrogates) is tooling's history builder (``agents_a365.tooling.extensibility``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from agents_a365.tooling import ChatHistoryMessage
from agents_a365.tooling.extensibility import PART_SEPARATOR, build_chat_history, convert_native, join_parts

__all__ = [
    "TOOL_OUTPUT_ROLE",
    "TOOL_OUTPUT_TYPE",
    "extract_text",
    "to_chat_history_message",
    "to_chat_history_messages",
]

TOOL_OUTPUT_ROLE = "tool"
"""Role given to tool results, as LangChain's ``ToolMessage`` has."""

# Tool results are where prompt injection arrives: send them to threat protection as text.
TOOL_OUTPUT_TYPE = "function_call_output"

# Where an item carries its own time (epoch seconds or ISO text): kept instead of "now".
TIMESTAMP_FIELDS = ("created_at", "timestamp")


def _field(item: Any, name: str) -> Any:
    """``item[name]`` for mappings, ``item.name`` otherwise; ``None`` when absent or unreadable."""
    if type(item) is dict:  # the common item (a TypedDict), without the ABC check of every call
        return item.get(name)
    try:
        return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)
    except Exception:  # exotic objects whose accessors raise count as "no such field"
        return None


def _nonblank(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _content_text(value: Any) -> str | None:
    """A string used as is, or the text of content parts (``str`` or with a ``text``), joined."""
    if isinstance(value, str):
        return _nonblank(value)
    if isinstance(value, str | bytes | bytearray | Mapping) or not isinstance(value, Iterable):
        return None
    texts = [part if isinstance(part, str) else _field(part, "text") for part in value]
    return join_parts(t for t in texts if _nonblank(t) is not None)


def extract_text(item: Any) -> str | None:
    """The text of ``item``, or ``None`` when it has none (whitespace-only counts as none).

    Order: string ``content`` as is; the ``text`` of ``content`` parts joined by one space;
    the item's ``text``; for tool results (``function_call_output``) their ``output``.
    """
    text = _content_text(_field(item, "content"))
    if text is None:
        text = _nonblank(_field(item, "text"))
    if text is None and _field(item, "type") == TOOL_OUTPUT_TYPE:
        text = _content_text(_field(item, "output"))
    return text


def _plain_parts(parts: list[Any]) -> str | None:
    """The joined text of parts that are all exact ``str`` or ``dict`` with an exact ``str`` (or no)
    ``text``; ``None`` for anything else and when there is no text (the general path decides)."""
    texts = []
    for part in parts:
        piece = part if type(part) is str else part.get("text") if type(part) is dict else part
        if type(piece) is str:
            if piece.strip():
                texts.append(piece)
        elif piece is not None:
            return None
    return PART_SEPARATOR.join(texts) if texts else None


def read_item(item: Any) -> tuple[Any, Any, Any, Any] | None:
    """Role (passed through; ``tool`` for tool results), text, id and source time of one item."""
    if type(item) is dict:  # a session item: what the general path reads, without its per-field checks
        content, kind = item.get("content"), item.get("type")
        if type(content) is str:
            text = content if content.strip() else None
        else:
            text = _plain_parts(content) if type(content) is list else None
        if text is not None and (kind is None or type(kind) is str):
            role = TOOL_OUTPUT_ROLE if kind == TOOL_OUTPUT_TYPE else item.get("role")
            stamp = item.get("created_at")
            return role, text, item.get("id"), item.get("timestamp") if stamp is None else stamp
    return _read(item)


def _read(item: Any) -> tuple[Any, Any, Any, Any] | None:
    """The general reading, for any item (what :func:`read_item` gives for session dicts too)."""
    text = extract_text(item)
    if text is None:
        return None
    # Passed through unchanged: threat protection knows the Responses roles.
    role = TOOL_OUTPUT_ROLE if _field(item, "type") == TOOL_OUTPUT_TYPE else _field(item, "role")
    stamp = next((v for v in (_field(item, name) for name in TIMESTAMP_FIELDS) if v is not None), None)
    return role, text, _field(item, "id"), stamp


def _is_quiet(item: Any) -> bool:
    """Tool calls, reasoning … without text are normal; messages (and untyped items) deserve a warning."""
    kind = _field(item, "type")
    return not (kind is None or kind == "message" or _field(item, "role") is not None)


def to_chat_history_message(item: Any, timestamp: datetime | None = None) -> ChatHistoryMessage | None:
    """One item, or ``None`` when it has no text or no role (never raises)."""
    try:
        return convert_native(item, read_item, timestamp)
    except Exception:  # a str subclass or mapping that misbehaves: no message
        return None


def to_chat_history_messages(
    items: Any, *, now: datetime | None = None, limit: int | None = None
) -> list[ChatHistoryMessage]:
    """Convert ``items`` (oldest first) to chat history messages, in the same order.

    Role passed through (``tool`` for ``function_call_output``); string content as is, content parts'
    text joined by one space, ``text`` as fallback; ``id`` kept or a new uuid4; the item's own
    ``created_at``/``timestamp`` kept, else ``now`` (default: the current UTC time). With ``limit``,
    the ``limit`` most recent items. Items without text are skipped: one warning per call counts the
    skipped messages; other item kinds (function calls, reasoning, …) are skipped silently.
    """
    return build_chat_history(items, read_item, limit=limit, now=now, quiet=_is_quiet)
