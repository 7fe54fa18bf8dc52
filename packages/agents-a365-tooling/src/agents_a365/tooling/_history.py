"""The chat-history builder: every rule the extensions must agree on, written once.

An extension says only what is native to its orchestrator: how to read the role, the text, the id
and (where its items carry one) the timestamp of one of its messages (a :data:`NativeReader`), which
skipped items are normal (a tool-call-only turn, a reasoning item) rather than worth a warning, and,
optionally, the exact plain shape of its common messages (:class:`FastShape`) so the builder can
convert those inline. Everything else is here: argument checks and their messages, the ``limit``
rule (the most recent N), skipping text-less messages with one warning per call, id kept or uuid4,
the timestamp rule (the source's when the item carries one, else now, UTC), surrogate-safe text and
the construction without validation. docs/contract.md states these rules; tests/contract checks them.
"""

from __future__ import annotations

import logging
import math
import re
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple

from .message_construction import (
    DIRECT_CONSTRUCTION,
    all_fields,
    set_dict,
    set_extra,
    set_fields_set,
    set_private,
    trusted_message,
)
from .models import ChatHistoryMessage

__all__ = [
    "PART_SEPARATOR",
    "FastShape",
    "NativeMessage",
    "NativeReader",
    "build_chat_history",
    "check_limit",
    "coerce_timestamp",
    "convert_native",
    "join_parts",
    "sendable",
]

logger = logging.getLogger("agents_a365.tooling.history")

_SURROGATE = re.compile("[\ud800-\udfff]")
PART_SEPARATOR = " "
"""Text parts of one message are joined by one space (docs/contract.md), in every extension."""


class NativeMessage(NamedTuple):
    """What an extension reads from one native message; ``None`` where the message has no such value."""

    role: str | None
    text: str | None
    id: str | None = None
    timestamp: Any = None


NativeReader = Callable[[Any], NativeMessage | None]
"""Reads one native message; ``None`` (or no role, or no text) skips it. May raise: the builder
counts the message as failed and goes on."""


@dataclass(frozen=True, slots=True)
class FastShape:
    """The exact plain shape of an extension's common messages, converted inline by the builder.

    A message whose type is in ``types`` is read from its fields (``item`` itself for a ``dict``,
    else ``item.__dict__``): role from ``role_field`` (mapped through ``role_map`` when given),
    content from ``content_field`` (a ``str``, or with ``content_parts`` a list of ``str`` and
    ``dict`` parts whose ``text`` is a ``str``; parts of other ``type`` than ``part_types`` need the
    general path), id from ``id_field``. Only exact ``str`` values qualify, and an item with a
    ``kind_field`` outside ``kinds`` or any of ``timestamp_fields`` set goes the general way: the
    fast path must give exactly what the reader gives (each extension proves it with a property test).
    """

    types: frozenset[type]
    role_field: str
    content_field: str = "content"
    id_field: str = "id"
    role_map: Mapping[str, str] | None = None
    kind_field: str | None = None
    kinds: frozenset[str | None] = field(default_factory=lambda: frozenset({None}))
    content_parts: bool = False
    part_types: frozenset[str] | None = None
    timestamp_fields: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if len(self.timestamp_fields) > 2:
            raise ValueError("timestamp_fields takes at most two field names")


def sendable(text: str) -> str:
    """``text`` unchanged unless it holds lone surrogates (JSON-decoded history can): those cannot be
    encoded as UTF-8 and would fail the whole request, so they become U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def join_parts(texts: Iterable[str]) -> str | None:
    """Non-blank texts joined by :data:`PART_SEPARATOR`; ``None`` when there is none."""
    kept = [t for t in texts if t and not t.isspace()]
    return PART_SEPARATOR.join(kept) if kept else None


def check_limit(limit: Any) -> int | None:
    """``limit`` as given, or ``ValueError`` unless it is ``None`` or a non-negative ``int``."""
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ValueError("limit must be a non-negative integer")
    return limit


def _snapshot(messages: Any) -> list[Any]:
    if messages is None:
        raise ValueError("messages is required")
    if isinstance(messages, str | bytes | bytearray | Mapping) or not isinstance(messages, Iterable):
        raise ValueError("messages must be a sequence of messages")
    try:
        return list(messages)
    except Exception as exc:
        raise ValueError("messages must be a sequence of messages") from exc


_MAX_EPOCH = 253402300799.0  # 9999-12-31T23:59:59Z: beyond it datetime cannot represent the time


def coerce_timestamp(value: Any) -> datetime | None:
    """A source timestamp as an aware UTC ``datetime``, or ``None`` when it is not one.

    Accepts a ``datetime`` (naive means UTC), epoch seconds (``int``/``float``, as OpenAI's
    ``created_at``) and ISO 8601 text (``Z`` allowed).
    """
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
        if not math.isfinite(seconds) or not 0 <= seconds <= _MAX_EPOCH:
            return None
        return datetime.fromtimestamp(seconds, UTC)
    if isinstance(value, str) and value.strip():
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        return coerce_timestamp(parsed)
    return None


def _convert(item: Any, read: NativeReader, now: datetime) -> ChatHistoryMessage | None:
    native = read(item)
    if native is None:
        return None
    role, text, ident, source_time = native
    if not isinstance(text, str) or not text.strip() or not isinstance(role, str) or not role.strip():
        return None
    if not isinstance(ident, str) or not ident.strip():
        ident = str(uuid.uuid4())
    stamp = coerce_timestamp(source_time) if source_time is not None else None
    # Every field is a known-valid str/datetime here: skip pydantic validation (hot path).
    return trusted_message(sendable(ident), sendable(role), sendable(text), stamp or now)


def convert_native(item: Any, read: NativeReader, now: datetime | None = None) -> ChatHistoryMessage | None:
    """One message by the general path, or ``None`` when it has no text or role. May raise for
    exotic objects (a reader that raises); :func:`build_chat_history` never does."""
    return _convert(item, read, now if now is not None else datetime.now(UTC))


def build_chat_history(
    messages: Any,
    read: NativeReader,
    *,
    limit: int | None = None,
    now: datetime | None = None,
    fast: FastShape | None = None,
    quiet: Callable[[Any], bool] | None = None,
) -> list[ChatHistoryMessage]:
    """``messages`` (oldest first) as :class:`ChatHistoryMessage` objects, in the same order.

    With ``limit``, only the ``limit`` most recent messages are considered. A message without text or
    role, or whose reading fails, is skipped: one WARNING per call counts them, except those for which
    ``quiet(item)`` is true (a turn that only calls tools, a reasoning item: DEBUG). Ids are kept or
    become a uuid4; the timestamp is the source's where the reader returns one, else ``now`` (default:
    the current UTC time). ``ValueError`` (``messages is required``, ``messages must be a sequence of
    messages``, ``limit must be a non-negative integer``) is the only exception.
    """
    items = _snapshot(messages)
    wanted = check_limit(limit)
    if wanted is not None:
        items = items[len(items) - wanted :] if wanted else []
    stamp = now if now is not None else datetime.now(UTC)
    converted: list[ChatHistoryMessage] = []
    skipped = skipped_quiet = 0
    # The fast path's settings as locals: the loop below runs once per message of every history.
    shape = fast if DIRECT_CONSTRUCTION else None
    types: frozenset[type] = shape.types if shape is not None else frozenset()
    fields_set = all_fields()
    new, message_class, append = object.__new__, ChatHistoryMessage, converted.append
    if shape is not None:
        as_mapping = shape.types == frozenset({dict})
        role_field, content_field, id_field = shape.role_field, shape.content_field, shape.id_field
        role_map, kind_field, kinds = shape.role_map, shape.kind_field, shape.kinds
        parts, part_types = shape.content_parts, shape.part_types
        # Up to two timestamp fields are checked inline (a generator per message costs too much).
        stamp_a, stamp_b = (*shape.timestamp_fields, None, None)[:2]
    for item in items:
        # The fast path, for messages of the exact plain shape with exact str values only, so it
        # cannot raise; it gives exactly what the general path gives (property tests per extension).
        # ``s.isspace()`` is ``not s.strip()`` for a non-empty ``s``, without copying it.
        if type(item) in types:
            fields = item if as_mapping else item.__dict__
            kind = fields.get(kind_field) if kind_field is not None else None
            raw = fields.get(role_field)
            if role_map is not None:
                role = role_map.get(raw) if type(raw) is str else None
            else:
                role = raw if type(raw) is str and raw and not raw.isspace() else None
            content = fields.get(content_field)
            ident = fields.get(id_field)
            if type(content) is str:
                text = content if content and not content.isspace() else None
            elif parts and type(content) is list:
                text = _fast_parts(content, part_types)
            else:
                text = None
            if (
                role is not None
                and text is not None
                and (ident is None or type(ident) is str)
                and (kind is None or type(kind) is str)
                and kind in kinds
                and (stamp_a is None or fields.get(stamp_a) is None)
                and (stamp_b is None or fields.get(stamp_b) is None)
            ):
                if not ident or ident.isspace():
                    ident = str(uuid.uuid4())
                if not (ident.isascii() and role.isascii() and text.isascii()):  # O(1) check
                    ident, role, text = sendable(ident), sendable(role), sendable(text)
                # trusted_message inlined: a call is a tenth of the per-message cost.
                built = new(message_class)
                set_dict(built, {"id": ident, "role": role, "content": text, "timestamp": stamp})
                set_fields_set(built, fields_set)
                set_extra(built, None)
                set_private(built, None)
                append(built)
                continue
        try:
            result = _convert(item, read, stamp)
        except Exception as exc:
            result = None
            logger.debug("skipping a message that failed conversion: %s", type(exc).__name__)
        if result is not None:
            converted.append(result)
            continue
        try:
            is_quiet = quiet is not None and quiet(item)
        except Exception:
            is_quiet = False
        if is_quiet:
            skipped_quiet += 1
        else:
            skipped += 1
    if skipped_quiet:
        logger.debug(
            "chat history: skipped %d item(s) that carry no message text (tool calls only, reasoning, ...)",
            skipped_quiet,
        )
    if skipped:
        logger.warning(
            "chat history: skipped %d message(s) without text or role; sending the other %d",
            skipped,
            len(converted),
        )
    return converted


def _fast_parts(parts: list[Any], part_types: frozenset[str] | None) -> str | None:
    """The joined text of ``parts`` when every part is an exact ``str`` or ``dict`` (of a type in
    ``part_types``, when given) whose ``text`` is an exact ``str`` or absent; ``None`` otherwise, and
    when no part has text (the general path then looks further)."""
    texts: list[str] = []
    for part in parts:
        if type(part) is str:
            piece: Any = part
        elif type(part) is dict:
            if part_types is not None:
                kind = part.get("type", "text")
                if type(kind) is not str or kind not in part_types:
                    return None
            piece = part.get("text")
        else:
            return None
        if type(piece) is str:
            if piece and not piece.isspace():
                texts.append(piece)
        elif piece is not None:
            return None
    return PART_SEPARATOR.join(texts) if texts else None
