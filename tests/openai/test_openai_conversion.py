"""The pure conversion of OpenAI Agents SDK items to ChatHistoryMessage."""

from __future__ import annotations

import logging
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

from agents_a365.tooling import ChatHistoryMessage
from agents_a365.tooling.extensions.openai import to_chat_history_message, to_chat_history_messages

NOW = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def _one(item: Any) -> ChatHistoryMessage | None:
    return to_chat_history_message(item, NOW)


def test_string_content_is_used_as_is_and_role_passed_through() -> None:
    message = _one({"role": "Custom-Role", "content": "  spaced  ", "id": "x"})
    assert message == ChatHistoryMessage(id="x", role="Custom-Role", content="  spaced  ", timestamp=NOW)


def test_content_parts_text_is_joined_by_one_space() -> None:
    item = {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "a"},
            {"type": "input_image", "image_url": "data:..."},
            {"type": "input_text", "text": "b"},
            "c",
        ],
    }
    message = _one(item)
    assert message is not None
    assert message.content == "a b c"


def test_text_is_the_fallback() -> None:
    message = _one({"role": "assistant", "content": [], "text": "fallback"})
    assert message is not None
    assert message.content == "fallback"


def test_id_is_kept_or_a_uuid4() -> None:
    kept = _one({"role": "user", "content": "hi", "id": "msg_1"})
    generated = _one({"role": "user", "content": "hi", "id": ""})
    assert kept is not None
    assert kept.id == "msg_1"
    assert generated is not None
    assert uuid.UUID(generated.id).version == 4


def test_timestamp_is_now_in_utc_by_default() -> None:
    before = datetime.now(UTC)
    (message,) = to_chat_history_messages([{"role": "user", "content": "hi"}])
    assert message.timestamp.tzinfo is not None
    assert message.timestamp.utcoffset().total_seconds() == 0
    assert before <= message.timestamp <= datetime.now(UTC)


def test_tool_results_become_role_tool() -> None:
    text_output = _one({"type": "function_call_output", "call_id": "c", "output": "result"})
    parts_output = _one(
        {
            "type": "function_call_output",
            "call_id": "c",
            "output": [{"type": "input_text", "text": "r1"}, {"text": "r2"}],
        }
    )
    assert text_output is not None
    assert (text_output.role, text_output.content) == ("tool", "result")
    assert parts_output is not None
    assert parts_output.content == "r1 r2"


def test_pydantic_output_models_are_read_too() -> None:
    model = ResponseOutputMessage(
        id="msg_9",
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text="hello", annotations=[])],
    )
    message = _one(model)
    assert message is not None
    assert (message.id, message.role, message.content) == (
        "msg_9",
        "assistant",
        "hello",
    )


@pytest.mark.parametrize(
    "item",
    [
        None,
        42,
        "a bare string",
        {},
        {"role": "user"},
        {"role": "user", "content": "   "},
        {"role": None, "content": "no role"},
        {"role": 3, "content": "bad role"},
        {"role": "user", "content": [None, 1, {"text": None}, {"text": ["nested"]}]},
        {"role": "user", "content": {"text": "a mapping is not a part list"}},
        {"type": "function_call", "name": "f", "arguments": "{}"},
        {"type": ["unhashable"], "content": None},
        {"type": "function_call_output", "output": None},
    ],
)
def test_items_without_text_or_role_are_skipped(item: Any) -> None:
    assert _one(item) is None


def test_objects_whose_accessors_raise_are_skipped_not_raised() -> None:
    class Hostile:
        @property
        def content(self) -> str:
            raise RuntimeError("boom")

        role = "user"

    class BadMapping(dict[str, Any]):
        def get(self, key: str, default: Any = None) -> Any:
            raise KeyError(key)

    messages = to_chat_history_messages(
        [Hostile(), BadMapping(role="user"), {"role": "user", "content": "ok"}]
    )
    assert [(m.role, m.content) for m in messages] == [("user", "ok")]


def test_batch_keeps_order_and_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    items = [
        {"role": "user", "content": "1"},
        {"role": "user", "content": ""},
        {"type": "function_call", "name": "f", "arguments": "{}"},
        {"role": "assistant", "content": "2"},
        {"role": "user"},
    ]
    with caplog.at_level(logging.DEBUG, logger="agents_a365.tooling.extensions.openai"):
        messages = to_chat_history_messages(items, now=NOW)
    assert [m.content for m in messages] == ["1", "2"]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "skipped 2 message(s)" in warnings[0].getMessage()


def test_an_empty_list_converts_to_an_empty_list() -> None:
    assert to_chat_history_messages([]) == []
    assert to_chat_history_messages(()) == []


@pytest.mark.parametrize("bad", [None, "text", b"bytes", {"role": "user"}, 5])
def test_non_sequences_raise_value_error(bad: Any) -> None:
    with pytest.raises(ValueError, match="messages"):
        to_chat_history_messages(bad)


def test_lone_surrogates_become_replacement_characters_so_the_history_stays_sendable() -> None:
    # json.loads (as SQLiteSession uses) turns "\ud800" escapes into lone surrogates.
    message = _one({"role": "user", "content": "a\ud800b", "id": "i\udfff"})
    assert message is not None
    assert message.content == "a\ufffdb"
    assert message.id == "i\ufffd"
    message.model_dump_json()  # encodable


def test_ordinary_text_is_untouched() -> None:
    message = _one({"role": "user", "content": "héllo 👋 \u2028"})
    assert message is not None
    assert message.content == "héllo 👋 \u2028"
