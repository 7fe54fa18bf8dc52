"""LangChain messages -> :class:`ChatHistoryMessage`: only what is native to LangChain.

How to read the role, the text and the id of a ``BaseMessage``; every shared rule (argument checks,
``limit``, skipping, ids, timestamps, surrogates) is tooling's history builder
(``agents_a365.tooling.extensibility``). :func:`convert_messages` never raises except its documented
``ValueError``s.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from agents_a365.tooling import ChatHistoryMessage
from agents_a365.tooling.extensibility import build_chat_history, join_parts

__all__ = ["DEFAULT_ROLE", "ROLE_BY_TYPE", "convert_messages", "extract_text", "map_role", "read_message"]

DEFAULT_ROLE = "user"

# ``BaseMessage.type`` -> role sent to threat protection. Chunk classes report their class
# name as ``type`` (``AIMessageChunk``): ``map_role`` drops the ``MessageChunk`` suffix.
ROLE_BY_TYPE: Mapping[str, str] = {
    "human": "user",
    "ai": "assistant",
    "system": "system",
    "tool": "tool",
    "function": "function",
}


def map_role(message: Any) -> str:
    """The role of ``message``: human->user, ai->assistant, system, tool, function,
    chat->its own ``role``, anything else->user."""
    kind = getattr(message, "type", None)
    key = kind.strip().lower().removesuffix("messagechunk") if isinstance(kind, str) else ""
    if key == "chat":
        role = getattr(message, "role", None)
        if isinstance(role, str) and role.strip():
            return role.strip()
    return ROLE_BY_TYPE.get(key, DEFAULT_ROLE)


def _text_accessor(message: Any) -> str | None:
    """The message's own ``text`` (property or method), or ``None`` when it has none or only whitespace."""
    try:
        value = getattr(message, "text", None)
        if callable(value) and not isinstance(value, str):
            value = value()
    except Exception:  # content shapes the accessor does not expect: fall through
        return None
    text = str(value) if isinstance(value, str) else ""
    return text if text.strip() else None


def _part_text(part: Any) -> str | None:
    if isinstance(part, str):
        return part
    if isinstance(part, Mapping):  # a content block: only text blocks count
        text = part.get("text") if part.get("type", "text") == "text" else None
    else:
        text = getattr(part, "text", None)
    return text if isinstance(text, str) else None


_BASE_TEXT = inspect.getattr_static(BaseMessage, "text", None)


@functools.cache
def _overrides_text(cls: type) -> bool:
    """Whether a message class defines its own ``text`` (langchain-core's is the default); cached per class."""
    return issubclass(cls, BaseMessage) and inspect.getattr_static(cls, "text", None) is not _BASE_TEXT


def extract_text(message: Any) -> str | None:
    """The text of ``message``, or ``None`` when it has none.

    Order: the message's own ``text`` accessor when its class overrides langchain-core's (the
    class knows its text best); string ``content``; the text parts of list ``content`` joined
    by one space (as the OpenAI extension joins content parts, so both send the same text —
    langchain-core's ``.text`` would concatenate them with no separator); then the ``text``
    accessor for other shapes. Whitespace-only text counts as no text.
    """
    if _overrides_text(type(message)):  # type: ignore[arg-type]  # typeshed: a class is not Hashable
        own = _text_accessor(message)
        if own is not None:
            return own
    content = getattr(message, "content", None)
    if isinstance(content, str):
        return content if content.strip() else None
    if isinstance(content, Iterable) and not isinstance(content, bytes | bytearray | Mapping):
        try:
            joined = join_parts(t for t in (_part_text(p) for p in content) if t is not None)
        except Exception:  # an iterable that fails mid-way: fall back to the accessor
            joined = None
        if joined is not None:
            return joined
    return _text_accessor(message)


# The common messages: exact classes that keep langchain-core's ``text`` (so string ``content`` is their
# text) and whose ``type`` is a ROLE_BY_TYPE key; read through their public fields, nothing else tried.
_PLAIN = frozenset({HumanMessage, AIMessage, SystemMessage, ToolMessage})


def read_message(message: Any) -> tuple[Any, Any, Any, Any] | None:
    """Role, text and id of one message (LangChain messages carry no time of their own)."""
    if type(message) in _PLAIN:
        content, kind = getattr(message, "content", None), getattr(message, "type", None)
        if type(content) is str and type(kind) is str and kind in ROLE_BY_TYPE:
            ident = getattr(message, "id", None)
            return (ROLE_BY_TYPE[kind], content, ident, None) if content.strip() else None
    return _read(message)


def _read(message: Any) -> tuple[Any, Any, Any, Any] | None:
    """The general reading, for any message (what :func:`read_message` gives for the common ones too)."""
    text = extract_text(message)
    return None if text is None else (map_role(message), text, getattr(message, "id", None), None)


def _only_calls_tools(message: Any) -> bool:
    # An assistant turn that only calls tools has no text: normal, nothing to act on.
    return bool(getattr(message, "tool_calls", None))


def convert_messages(messages: Any, limit: int | None = None) -> list[ChatHistoryMessage]:
    """Convert ``messages`` (oldest first); with ``limit``, only the ``limit`` most recent messages.

    Messages without text, and messages whose conversion fails, are skipped (one warning per call
    counts them; tool-call-only turns are skipped silently); the rest keep their order. Existing ids
    are kept, others get a uuid4; every message is stamped with the current UTC time.
    """
    return build_chat_history(messages, read_message, limit=limit, quiet=_only_calls_tools)
