"""The chat-history builder: every rule the extensions must agree on, written once.

An extension says only what is native to its orchestrator: how to read the role, the text, the id
and (where its items carry one) the timestamp of one of its messages (a :data:`NativeReader`), which
skipped items are normal (a tool-call-only turn, a reasoning item) rather than worth a warning.
Everything else is here: argument checks and their messages, the ``limit`` rule (the most recent N),
skipping text-less messages with one warning per call, id kept or uuid4, the timestamp rule (the
source's when the item carries one, else now, UTC), surrogate-safe text and the construction (one
validation call per history). docs/contract.md states these rules; tests/contract checks them.
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
import uuid
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, NamedTuple

from pydantic import OnErrorOmit, TypeAdapter

from agents_a365.runtime import require

from .models import ChatHistoryMessage, as_utc

__all__ = [
    "PART_SEPARATOR",
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


NativeReader = Callable[[Any], NativeMessage | tuple[Any, Any, Any, Any] | None]
"""Reads one native message (a :class:`NativeMessage`, or a plain tuple in its order: cheaper for a
reader that runs for every message); ``None`` (or no role, or no text) skips it. May raise: the
builder counts the message as failed and goes on."""


def sendable(text: str) -> str:
    """``text`` unchanged unless it holds lone surrogates (JSON-decoded history can): those cannot be
    encoded as UTF-8 and would fail the whole request, so they become U+FFFD."""
    if text.isascii():  # O(1): no surrogate, no copy
        return text
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
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError("limit must be a non-negative integer")
    return limit


def _snapshot(messages: Any) -> list[Any]:
    require(messages, "messages")
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
        return as_utc(value)
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


# All of a history validated in one call (a constructor call per message costs ~40 % more); a row that fails
# (a str subclass that misreports itself) is left out, and counted as skipped.
_HISTORY: TypeAdapter[list[ChatHistoryMessage]] = TypeAdapter(list[OnErrorOmit[ChatHistoryMessage]])


def _row(native: tuple[Any, Any, Any, Any] | None, now: datetime) -> dict[str, Any] | None:
    """The fields of one message (every rule checked), or ``None`` when it has no text or role."""
    if native is None:
        return None
    role, text, ident, source_time = native
    if not isinstance(text, str) or not text.strip() or not isinstance(role, str) or not role.strip():
        return None
    if not isinstance(ident, str) or not ident.strip():
        ident = str(uuid.uuid4())
    stamp = coerce_timestamp(source_time) if source_time is not None else None
    ident, role, text = sendable(ident), sendable(role), sendable(text)
    return {"id": ident, "role": role, "content": text, "timestamp": stamp or now}


def _stamp(now: Any) -> Any:
    """``now`` in UTC once per history (else every message converts it); what validation accepts
    (ISO text, epoch seconds) as before; the current time when ``None``."""
    return datetime.now(UTC) if now is None else coerce_timestamp(now) or now


def convert_native(item: Any, read: NativeReader, now: datetime | None = None) -> ChatHistoryMessage | None:
    """One message by the general path, or ``None`` when it has no text or role. May raise for
    exotic objects (a reader that raises); :func:`build_chat_history` never does."""
    row = _row(read(item), _stamp(now))
    return None if row is None else ChatHistoryMessage(**row)


def build_chat_history(
    messages: Any,
    read: NativeReader,
    *,
    limit: int | None = None,
    now: datetime | None = None,
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
    stamp = _stamp(now)
    rows: list[dict[str, Any]] = []
    skipped = skipped_quiet = 0
    for item in items:
        try:
            native = read(item)
            if native is not None:
                role, text, ident, source_time = native
                # The common case inline (exact ASCII str, no source time): what _row gives, cheaper.
                if source_time is None and type(text) is type(role) is type(ident) is str:
                    ascii_ = text.isascii() and role.isascii() and ident.isascii()  # no surrogate
                    if ascii_ and text.strip() and role.strip() and ident.strip():
                        rows.append({"id": ident, "role": role, "content": text, "timestamp": stamp})
                        continue
            row = _row(native, stamp)
        except Exception as exc:
            row = None
            logger.debug("skipping a message that failed conversion: %s", type(exc).__name__)
        if row is not None:
            rows.append(row)
            continue
        skipped += 1
        with contextlib.suppress(Exception):  # a quiet() that raises: the item is worth the warning
            if quiet is not None and quiet(item):
                skipped_quiet += 1
    converted = _HISTORY.validate_python(rows)
    skipped += len(rows) - len(converted) - skipped_quiet  # those the warning counts
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
