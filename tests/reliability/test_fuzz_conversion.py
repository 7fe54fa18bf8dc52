"""Property-based fuzzing of both extensions' message conversion (hypothesis, 2,000 examples each, new ones every run).

Conversion must never raise beyond its documented ``ValueError``s, and every message it produces must be
a valid ``ChatHistoryMessage`` that threat protection can be sent (it survives validation and JSON
serialisation).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    HumanMessageChunk,
    SystemMessage,
    ToolMessage,
)
from pydantic import ValidationError

from agents_a365.tooling import ChatHistoryMessage, ChatMessageRequest
from agents_a365.tooling.extensions.langchain import convert_messages
from agents_a365.tooling.extensions.openai import to_chat_history_messages

pytestmark = pytest.mark.slow  # started first on the parallel workers (tests/conftest.py)

FUZZ = settings.get_profile("a365-fuzz")

LANGCHAIN_ERRORS = {
    "messages is required",
    "messages must be a sequence of messages",
    "limit must be a non-negative integer",
}
OPENAI_ERRORS = {
    "messages is required",
    "messages must be a sequence of messages",
    "limit must be a non-negative integer",
}

# Any unicode, lone surrogates included (they arrive from JSON decoding), plus control characters.
any_text = st.one_of(
    st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=40),
    st.builds(
        lambda head, code, tail: f"{head}{chr(code)}{tail}",
        st.text(max_size=10),
        st.integers(0xD800, 0xDFFF),  # a lone surrogate
        st.text(max_size=10),
    ),
)
huge_text = st.builds(
    lambda c, n: c * n, st.sampled_from(["a", "é", "😀", "\n", " "]), st.integers(100_000, 1_000_000)
)
scalar = st.one_of(
    any_text, st.none(), st.integers(), st.floats(allow_nan=True), st.booleans(), st.binary(max_size=8)
)
part_types = st.sampled_from(
    ["text", "input_text", "output_text", "image_url", "refusal", "tool_use", "", "TEXT"]
)


def _part(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=4),
        st.fixed_dictionaries({"type": part_types | scalar, "text": children}),
        st.fixed_dictionaries({"text": children}),
        st.dictionaries(
            st.sampled_from(["type", "text", "content", "url", "id"]) | any_text, children, max_size=3
        ),
    )


nested_content = st.recursive(scalar, _part, max_leaves=12)
content = st.one_of(
    any_text, huge_text.filter(lambda _: True), nested_content, st.lists(nested_content, max_size=5)
)


class Exotic:
    """An object whose every accessor raises."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"no {name}")


class WeirdStr(str):
    def strip(self, *args: Any) -> str:  # type: ignore[override]
        raise RuntimeError("strip")


def _langchain_message(kind: str, body: Any, ident: Any, role: Any) -> Any:
    classes: dict[str, Any] = {
        "human": HumanMessage,
        "ai": AIMessage,
        "system": SystemMessage,
        "ai_chunk": AIMessageChunk,
        "human_chunk": HumanMessageChunk,
    }
    fields: dict[str, Any] = {"content": body, "id": ident}
    if kind == "tool":
        cls: Any = ToolMessage
        fields["tool_call_id"] = "call-1"
    elif kind == "chat":
        cls = ChatMessage
        fields["role"] = role
    elif kind == "function":
        cls = FunctionMessage
        fields["name"] = "fn"
    else:
        cls = classes[kind]
    try:
        return cls(**fields)
    except (ValidationError, TypeError, ValueError):
        # Shapes LangChain's validation refuses still reach us through model_construct / deserialisation.
        return cls.model_construct(**fields)


langchain_message = st.builds(
    _langchain_message,
    st.sampled_from(["human", "ai", "system", "tool", "chat", "function", "ai_chunk", "human_chunk"]),
    content,
    st.one_of(st.none(), any_text, st.integers()),
    st.one_of(any_text, st.none(), st.integers()),
)
garbage = st.one_of(
    scalar,
    st.dictionaries(any_text, scalar, max_size=3),
    st.builds(Exotic),
    st.builds(WeirdStr, any_text),
    st.builds(object),
)
langchain_messages = st.lists(st.one_of(langchain_message, langchain_message, garbage), max_size=8)


def _assert_valid(messages: list[ChatHistoryMessage]) -> None:
    for message in messages:
        assert type(message) is ChatHistoryMessage
        # model_construct skips validation: validate what was produced, field by field.
        ChatHistoryMessage.model_validate(dict(message))
        assert isinstance(message.timestamp, datetime)
        assert message.timestamp.tzinfo is not None
        assert message.content.strip()
    # And it can be sent: the request body serialises to JSON.
    body = ChatMessageRequest(
        conversation_id="c", message_id="m", user_message="u", chat_history=messages
    ).model_dump_json(by_alias=True)
    assert len(json.loads(body)["chatHistory"]) == len(messages)


# What is not a list of messages with a valid limit: scalars, other objects, and cheap lists beside any limit
# (a list's messages are the other properties' domain: drawing them here would only repeat those, slowly).
not_a_history = st.one_of(scalar, garbage, st.lists(garbage, max_size=3))
any_limit = st.one_of(st.none(), st.integers(0, 10), scalar)


def _valid_limit(limit: Any) -> bool:
    return limit is None or (type(limit) is int and limit >= 0)


@FUZZ
@given(
    messages=langchain_messages,
    limit=st.one_of(st.none(), st.integers(0, 10), st.integers(min_value=0)),
)
def test_langchain_conversion_never_raises_and_produces_valid_messages(
    messages: list[Any], limit: int | None
) -> None:
    _assert_valid(convert_messages(messages, limit))


@FUZZ
@given(messages=not_a_history, limit=any_limit)
def test_langchain_conversion_raises_only_the_documented_value_errors(messages: Any, limit: Any) -> None:
    try:
        result = convert_messages(messages, limit)
    except ValueError as exc:
        assert str(exc) in LANGCHAIN_ERRORS, str(exc)  # noqa: PT017 - either outcome is a property
        assert not (isinstance(messages, list) and _valid_limit(limit)), str(exc)  # noqa: PT017
    else:
        _assert_valid(result)


roles = st.one_of(st.sampled_from(["user", "assistant", "system", "developer", "tool"]), any_text, scalar)
openai_part = st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["input_text", "output_text", "refusal"]), "text": any_text | scalar}
    ),
    st.fixed_dictionaries({"type": st.just("input_image"), "image_url": any_text}),
    st.fixed_dictionaries({"type": st.just("refusal"), "refusal": any_text}),
    nested_content,
)
openai_item = st.one_of(
    st.fixed_dictionaries(
        {"role": roles, "content": st.one_of(any_text, huge_text, st.lists(openai_part, max_size=5), scalar)},
        optional={"type": st.just("message"), "id": st.one_of(any_text, scalar), "status": any_text},
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("function_call_output"),
            "call_id": any_text,
            "output": st.one_of(any_text, st.lists(openai_part, max_size=3), scalar),
        }
    ),
    st.fixed_dictionaries(
        {"type": st.just("function_call"), "name": any_text, "arguments": any_text, "call_id": any_text}
    ),
    st.fixed_dictionaries(
        {"type": st.just("reasoning"), "id": any_text, "summary": st.lists(openai_part, max_size=3)},
        optional={"content": st.lists(openai_part, max_size=2)},
    ),
    st.dictionaries(
        st.sampled_from(["role", "content", "type", "text", "output", "id"]) | any_text,
        nested_content,
        max_size=4,
    ),
)
openai_items = st.lists(st.one_of(openai_item, openai_item, garbage), max_size=8)


@FUZZ
@given(items=openai_items)
def test_openai_conversion_never_raises_and_produces_valid_messages(items: list[Any]) -> None:
    _assert_valid(to_chat_history_messages(items))


@FUZZ
@given(items=not_a_history)
def test_openai_conversion_raises_only_the_documented_value_errors(items: Any) -> None:
    try:
        result = to_chat_history_messages(items)
    except ValueError as exc:
        assert str(exc) in OPENAI_ERRORS, str(exc)  # noqa: PT017 - either outcome is a property
        assert not isinstance(items, list), str(exc)  # noqa: PT017
    else:
        _assert_valid(result)
