"""``to_chat_history_messages`` (a batch) gives exactly what ``to_chat_history_message`` gives per item.

(Once a test of the inline fast path, removed with ``FastShape``: what stays is the public guarantee.)
Compared on items around the former fast path's shapes: the same text, role, id (or both a fresh
uuid4), the same timestamp, the same pydantic state (fields set, extra, private), the same wire bytes.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import agents_a365.tooling.extensions.openai._conversion as conversion
from agents_a365.tooling import ChatHistoryMessage, ChatMessageRequest
from agents_a365.tooling.extensions.openai import to_chat_history_message, to_chat_history_messages
from agents_a365.tooling.extensions.openai._conversion import read_item

NOW = datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
ALL_FIELDS = {"id", "role", "content", "timestamp"}


class Str(str):
    """A str subclass: the fast path must leave it to the general path."""

    def strip(self, *args: Any) -> str:
        # The general path calls it (and skips the item when it raises).
        if self == "raise":
            raise RuntimeError("strip")
        return super().strip(*args)


# Text around the fast path's checks: blank (ASCII and Unicode whitespace, incl. \x1c-\x1f that
# str.isspace() counts), non-ASCII, lone surrogates, zero-width (not whitespace), subclasses.
text = st.one_of(
    st.sampled_from(["", " ", "\t\n", "\u2003", "\x1c", "\u200b", "hi", " padded ", "é", "😀", "a\ud800b"]),
    st.text(max_size=12),
    st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=12),
    st.builds(Str, st.sampled_from(["sub", " ", "raise"])),
)
not_text = st.sampled_from([None, 0, 1.5, b"bytes", ["list"], {"text": "mapping"}])
part = st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["input_text", "output_text", "refusal"]), "text": text | not_text}
    ),
    st.fixed_dictionaries({"type": st.just("input_image"), "image_url": text}),
    st.fixed_dictionaries({"text": text}),
    text,
    not_text,
)
content = st.one_of(text, st.lists(part, max_size=4), not_text)
optional = {
    "type": st.sampled_from(["message", "Message", "function_call_output", "reasoning", None, 3]),
    "id": text | not_text,
    "text": text,
    "output": text,
    "status": st.just("completed"),
    "created_at": st.sampled_from([None, 1700000000, "2025-01-02T03:04:05Z", "junk"]),
    "timestamp": st.sampled_from([None, NOW, 1.5]),
}
item = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["user", "assistant", "system", "developer"]) | text | not_text,
        "content": content,
    },
    optional=optional,
)
stamp = st.sampled_from([NOW, NOW.replace(tzinfo=None), NOW.astimezone(timezone(timedelta(hours=2)))])


def _general(items: list[Any], now: datetime) -> list[tuple[Any, ChatHistoryMessage]]:
    pairs = [(it, to_chat_history_message(it, now)) for it in items]
    return [(it, message) for it, message in pairs if message is not None]


def _assert_same(item: Any, fast: ChatHistoryMessage, general: ChatHistoryMessage) -> None:
    assert type(fast) is ChatHistoryMessage
    assert (fast.role, fast.content) == (general.role, general.content)
    assert fast.timestamp == general.timestamp
    assert fast.timestamp.tzinfo is UTC
    given_id = item.get("id")
    if isinstance(given_id, str) and given_id.strip():
        assert fast.id == general.id
    else:  # no usable id: each path draws its own uuid4
        assert uuid.UUID(fast.id).version == 4
        assert uuid.UUID(general.id).version == 4
    assert fast.model_fields_set == general.model_fields_set == ALL_FIELDS
    assert fast.__pydantic_extra__ is None
    assert fast.__pydantic_private__ is None
    same_id = fast.model_copy(update={"id": general.id})
    assert same_id == general
    assert same_id.model_dump_json(by_alias=True) == general.model_dump_json(by_alias=True)
    ChatHistoryMessage.model_validate(dict(fast))  # a valid message


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.lists(item, max_size=6), now=stamp)
def test_fast_path_matches_the_general_path(items: list[dict[str, Any]], now: datetime) -> None:
    fast = to_chat_history_messages(items, now=now)
    general = _general(items, now)
    assert len(fast) == len(general)
    for fast_message, (source, general_message) in zip(fast, general, strict=True):
        _assert_same(source, fast_message, general_message)


def _outcome(read: Any, source: Any) -> Any:
    try:
        return read(source)
    except Exception as exc:  # the same failure on both readings
        return type(exc)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=item)
def test_the_quick_read_of_a_session_dict_is_the_general_read(source: dict[str, Any]) -> None:
    assert _outcome(read_item, source) == _outcome(conversion._read, source)


def test_session_dicts_skip_the_general_read(monkeypatch: pytest.MonkeyPatch) -> None:
    items: list[Any] = [
        {"role": "user", "content": "question", "id": "u1"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "answer"}]},
        {"type": "function_call_output", "call_id": "c", "content": "result", "created_at": 1700000000},
    ]
    calls: list[Any] = []
    monkeypatch.setattr(conversion, "_read", calls.append)
    converted = to_chat_history_messages(items, now=NOW)
    assert calls == []
    assert [(m.role, m.content) for m in converted] == [
        ("user", "question"),
        ("assistant", "answer"),
        ("tool", "result"),
    ]
    assert converted[2].timestamp == datetime.fromtimestamp(1700000000, UTC)
    # What the quick read cannot settle goes the general way: no text in ``content``, other parts.
    others: list[Any] = [{"role": "user", "content": " ", "text": "t"}, {"role": "user", "content": [7]}]
    to_chat_history_messages(others, now=NOW)
    assert calls == others


def test_plain_items_convert_as_one_by_one() -> None:
    items: list[Any] = [
        {"role": "user", "content": "question"},  # EasyInputMessage: no id, no type
        {"id": "msg_1", "role": "user", "content": " padded ", "type": "message"},
        {
            "id": "msg_2",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [
                {"type": "output_text", "text": "two", "annotations": []},
                {"type": "refusal", "refusal": "ignored"},
                {"type": "output_text", "text": "parts", "annotations": []},
            ],
        },
        {"id": "msg_3", "role": "developer", "content": [{"type": "input_text", "text": "é \ud800"}]},
        {"id": "  ", "role": "system", "content": "blank id"},
    ]
    expected = _general(items, NOW)
    fast = to_chat_history_messages(items, now=NOW)
    assert [m.content for m in fast] == ["question", " padded ", "two parts", "é \ufffd", "blank id"]
    for fast_message, (source, general_message) in zip(fast, expected, strict=True):
        _assert_same(source, fast_message, general_message)


def test_other_items_take_the_general_path(monkeypatch: pytest.MonkeyPatch) -> None:
    items: list[Any] = [
        {"type": "function_call_output", "call_id": "c", "output": "result"},  # role "tool"
        {"role": "user", "content": "   ", "text": "fallback"},  # blank content: ``text`` is used
        {"role": "user", "content": [], "text": "fallback"},
        {"role": Str("user"), "content": "subclass role"},
        {"role": "user", "content": "int id", "id": 7},
    ]
    calls: list[Any] = []

    def general_path(item: Any) -> Any:
        calls.append(item)
        return read_item(item)

    monkeypatch.setattr(conversion, "read_item", general_path)
    messages = to_chat_history_messages(items, now=NOW)
    assert calls == items
    assert [(m.role, m.content) for m in messages] == [
        ("tool", "result"),
        ("user", "fallback"),
        ("user", "fallback"),
        ("user", "subclass role"),
        ("user", "int id"),
    ]


def test_a_fast_message_is_what_model_construct_builds() -> None:
    (fast,) = to_chat_history_messages([{"id": "m", "role": "user", "content": "hi"}], now=NOW)
    built = ChatHistoryMessage.model_construct(id="m", role="user", content="hi", timestamp=NOW)
    assert fast == built
    assert repr(fast) == repr(built)
    assert fast.__dict__ == built.__dict__
    assert list(fast.__dict__) == list(built.__dict__)
    assert fast.model_fields_set == built.model_fields_set
    assert fast.model_dump() == built.model_dump()
    assert fast.model_dump_json(by_alias=True) == built.model_dump_json(by_alias=True)
    assert hash(fast) == hash(built)


def test_messages_of_a_batch_share_nothing_mutable_that_pydantic_changes() -> None:
    first, second = to_chat_history_messages(
        [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}], now=NOW.replace(tzinfo=None)
    )
    with pytest.raises(ValidationError):
        first.content = "changed"  # frozen
    copied = first.model_copy(update={"timestamp": NOW})  # what the service does for naive timestamps
    assert copied.timestamp == NOW
    assert first.timestamp == NOW  # a naive ``now`` is taken as UTC
    assert first.model_fields_set == second.model_fields_set == ALL_FIELDS
    body = ChatMessageRequest(
        conversation_id="c", message_id="m", user_message="u", chat_history=[copied, second]
    ).model_dump_json(by_alias=True)
    assert '"content":"a"' in body
    assert '"timestamp":"2025-01-02T03:04:05.678901Z"' in body
