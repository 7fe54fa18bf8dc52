"""The chat-history builder in tooling: the contract's rules, written once, for any native shape.

A third "orchestrator" with its own message class shows that an extension only says how to read its
messages; the rules (limit, skipping, ids, timestamps, surrogates, one warning) come from the builder.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from agents_a365.tooling.extensibility import (
    NativeMessage,
    build_chat_history,
    coerce_timestamp,
    convert_native,
)

NOW = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


@dataclass
class Note:
    """A third orchestrator's message type."""

    author: str
    body: Any
    key: str | None = None
    at: Any = None


def read_note(note: Note) -> NativeMessage:
    return NativeMessage({"me": "user", "bot": "assistant"}.get(note.author), note.body, note.key, note.at)


def test_a_third_extension_gets_every_rule_from_the_builder(caplog: pytest.LogCaptureFixture) -> None:
    notes = [
        Note("me", "old", "n0"),
        Note("me", "hi \ud800", "n1"),  # a lone surrogate becomes U+FFFD
        Note("bot", "   ", "n2"),  # blank: skipped
        Note("stranger", "who?", "n3"),  # no role: skipped
        Note("bot", "answer", None),  # no id: a uuid4
        Note("me", "dated", "n5", at=1_700_000_000),  # the source's time is kept
    ]
    with caplog.at_level(logging.WARNING, logger="agents_a365.tooling.history"):
        messages = build_chat_history(notes, read_note, limit=5, now=NOW)
    assert [(m.role, m.content) for m in messages] == [
        ("user", "hi \ufffd"),
        ("assistant", "answer"),
        ("user", "dated"),
    ]
    assert messages[0].id == "n1"
    assert uuid.UUID(messages[1].id).version == 4
    assert [m.timestamp for m in messages] == [NOW, NOW, datetime.fromtimestamp(1_700_000_000, UTC)]
    warnings = [r.getMessage() for r in caplog.records]
    assert warnings == ["chat history: skipped 2 message(s) without text or role; sending the other 3"]


def test_quiet_items_are_skipped_without_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    notes = [Note("bot", "", "call"), Note("me", "text", "t")]
    with caplog.at_level(logging.DEBUG, logger="agents_a365.tooling.history"):
        messages = build_chat_history(notes, read_note, quiet=lambda note: note.key == "call")
    assert [m.content for m in messages] == ["text"]
    assert [r.levelno for r in caplog.records] == [logging.DEBUG]


def test_a_quiet_check_that_raises_leaves_the_item_in_the_warning(caplog: pytest.LogCaptureFixture) -> None:
    def quiet(note: Note) -> bool:
        raise RuntimeError("no verdict")

    notes = [Note("bot", "", "call"), Note("me", "text", "t")]
    with caplog.at_level(logging.DEBUG, logger="agents_a365.tooling.history"):
        messages = build_chat_history(notes, read_note, quiet=quiet)
    assert [m.content for m in messages] == ["text"]
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.WARNING, "chat history: skipped 1 message(s) without text or role; sending the other 1")
    ]


def test_a_reader_that_raises_skips_only_that_message() -> None:
    def read(note: Note) -> NativeMessage:
        if note.key == "bad":
            raise RuntimeError("unreadable")
        return read_note(note)

    messages = build_chat_history([Note("me", "a", "bad"), Note("me", "b", "ok")], read)
    assert [m.id for m in messages] == ["ok"]
    with pytest.raises(RuntimeError):
        convert_native(Note("me", "a", "bad"), read)  # the one-message form lets it raise


@pytest.mark.parametrize(
    ("messages", "limit", "error"),
    [
        (None, None, "messages is required"),
        ("text", None, "messages must be a sequence of messages"),
        ({"role": "user"}, None, "messages must be a sequence of messages"),
        ([], -1, "limit must be a non-negative integer"),
        ([], True, "limit must be a non-negative integer"),
        ([], 1.5, "limit must be a non-negative integer"),
    ],
)
def test_argument_checks_and_their_messages(messages: Any, limit: Any, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        build_chat_history(messages, read_note, limit=limit)


def test_limit_zero_is_an_empty_history() -> None:
    assert build_chat_history([Note("me", "a")], read_note, limit=0) == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1_700_000_000, datetime.fromtimestamp(1_700_000_000, UTC)),
        (1_700_000_000.5, datetime.fromtimestamp(1_700_000_000.5, UTC)),
        ("2025-01-02T03:04:05Z", NOW),
        ("2025-01-02T05:04:05+02:00", NOW),
        (NOW.replace(tzinfo=None), NOW),  # naive: UTC
        (NOW.astimezone(timezone(timedelta(hours=-5))), NOW),
        (True, None),
        (float("nan"), None),
        (-1, None),
        (1e300, None),
        ("yesterday", None),
        ("", None),
        (object(), None),
    ],
)
def test_coerce_timestamp(value: Any, expected: datetime | None) -> None:
    result = coerce_timestamp(value)
    assert result == expected
    if result is not None:
        assert result.tzinfo is UTC


class Lying(str):
    """A role that claims text (its ``strip`` is not empty) but is empty: only validation sees it."""

    def strip(self, chars: str | None = None) -> str:
        return "x"


def test_a_message_that_fails_validation_skips_only_that_message(caplog: pytest.LogCaptureFixture) -> None:
    notes = [Note("me", "a", "n0"), Note("me", "b", "n1"), Note("me", "c", "n2")]

    def read(note: Note) -> tuple[Any, Any, Any, Any]:  # a plain tuple is a reading too
        return (Lying("") if note.key == "n1" else "user", note.body, note.key, None)

    with caplog.at_level(logging.WARNING, logger="agents_a365.tooling.history"):
        messages = build_chat_history(notes, read, now=NOW)
    assert [m.id for m in messages] == ["n0", "n2"]
    warnings = [r.getMessage() for r in caplog.records]
    assert warnings == ["chat history: skipped 1 message(s) without text or role; sending the other 2"]
