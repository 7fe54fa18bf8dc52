"""``convert_messages`` (a batch) gives exactly what the general path (``convert_native``) gives per message.

(Once a test of the inline fast path, removed with ``FastShape``: what stays is the public guarantee.)
Compared on messages around the former fast path's shapes: the same text, role, id (or both a fresh
uuid4), the same timestamp, the same pydantic state (fields set, extra, private), the same wire bytes.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from pydantic import ValidationError

import agents_a365.tooling.extensions.langchain._conversion as conversion
from agents_a365.tooling import ChatHistoryMessage, ChatMessageRequest
from agents_a365.tooling.extensibility import convert_native
from agents_a365.tooling.extensions.langchain import convert_messages
from agents_a365.tooling.extensions.langchain._conversion import ROLE_BY_TYPE, read_message

ALL_FIELDS = {"id", "role", "content", "timestamp"}


class Str(str):
    """A str subclass: the fast path must leave it to the general path."""

    def strip(self, *args: Any) -> str:
        # The general path calls it (and counts the message as failed when it raises).
        if self == "raise":
            raise RuntimeError("strip")
        return super().strip(*args)


class MyHuman(HumanMessage):
    """A subclass: not one of the fast path's exact classes."""


# Text around the fast path's checks: blank (ASCII and Unicode whitespace, incl. \x1c-\x1f that
# str.isspace() counts), non-ASCII, lone surrogates, zero-width (not whitespace), subclasses.
text = st.one_of(
    st.sampled_from(["", " ", "\t\n", "\u2003", "\x1c", "\u200b", "hi", " padded ", "é", "😀", "a\ud800b"]),
    st.text(max_size=12),
    st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=12),
    st.builds(Str, st.sampled_from(["sub", " ", "raise"])),
)
content = st.one_of(
    text, text, st.lists(text | st.fixed_dictionaries({"type": st.just("text"), "text": text}), max_size=3)
)
ident = st.one_of(st.none(), text, st.just(7))
kind = st.sampled_from(
    [None, "human", "ai", "system", "tool", "function", "chat", " Human ", "AI", "remove", 3]
)
classes = st.sampled_from(
    [HumanMessage, AIMessage, SystemMessage, ToolMessage, AIMessageChunk, ChatMessage, MyHuman]
)


def _build(
    cls: type[BaseMessage], body: Any, message_id: Any, type_override: Any, construct: bool
) -> BaseMessage:
    fields: dict[str, Any] = {"content": body, "id": message_id}
    if cls is ToolMessage:
        fields["tool_call_id"] = "call-1"
    if cls is ChatMessage:
        fields["role"] = "judge"
    # Unvalidated values (str subclasses kept, any ``type``) arrive through model_construct.
    if type_override is not None:
        return cls.model_construct(**fields, type=type_override)
    if construct:
        return cls.model_construct(**fields)
    try:
        return cls(**fields)
    except (ValidationError, TypeError, ValueError):
        return cls.model_construct(**fields)


message = st.builds(_build, classes, content, ident, kind, st.booleans())


def _general(messages: list[Any], now: datetime) -> list[tuple[Any, ChatHistoryMessage]]:
    pairs = []
    for source in messages:
        try:
            converted = convert_native(source, read_message, now)
        except Exception:  # convert_messages counts it as failed and skips it
            continue
        if converted is not None:
            pairs.append((source, converted))
    return pairs


def _assert_same(source: Any, fast: ChatHistoryMessage, general: ChatHistoryMessage) -> None:
    assert type(fast) is ChatHistoryMessage
    assert (fast.role, fast.content) == (general.role, general.content)
    assert fast.timestamp is general.timestamp
    given_id = getattr(source, "id", None)
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


def _check(messages: list[Any]) -> list[ChatHistoryMessage]:
    fast = convert_messages(messages)
    if not fast:
        assert _general(messages, datetime.now()) == []
        return fast
    now = fast[0].timestamp  # one stamp for the batch
    general = _general(messages, now)
    assert len(fast) == len(general)
    for fast_message, (source, general_message) in zip(fast, general, strict=True):
        _assert_same(source, fast_message, general_message)
    return fast


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=st.lists(message, max_size=6))
def test_fast_path_matches_the_general_path(messages: list[Any]) -> None:
    _check(messages)


def _count_general_path(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    calls: list[Any] = []

    def general_path(source: Any) -> Any:
        calls.append(source)
        return read_message(source)

    monkeypatch.setattr(conversion, "read_message", general_path)
    return calls


def _outcome(read: Any, source: Any) -> Any:
    try:
        return read(source)
    except Exception as exc:  # the same failure on both readings
        return type(exc)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=message)
def test_the_quick_read_of_a_plain_message_is_the_general_read(source: BaseMessage) -> None:
    assert _outcome(read_message, source) == _outcome(conversion._read, source)


def test_plain_messages_skip_the_general_read(monkeypatch: pytest.MonkeyPatch) -> None:
    messages: list[Any] = [
        HumanMessage("q", id="h"),
        AIMessage("a"),
        SystemMessage("s"),
        ToolMessage("t", tool_call_id="c"),
    ]
    calls: list[Any] = []
    monkeypatch.setattr(conversion, "_read", calls.append)
    converted = convert_messages(messages)
    assert calls == []
    assert [m.role for m in converted] == ["user", "assistant", "system", "tool"]
    others: list[Any] = [MyHuman("subclass"), AIMessage(content=[{"type": "text", "text": "parts"}])]
    convert_messages(others)
    assert calls == others


def test_plain_messages_convert_as_one_by_one() -> None:
    messages: list[Any] = [
        HumanMessage("question"),  # no id
        AIMessage(" padded ", id="run-1"),
        SystemMessage("be brief", id="  "),
        ToolMessage("é \ud800", tool_call_id="call-1", id="t1"),
    ]
    fast = _check(messages)  # the batch gives what one-by-one conversion gives
    assert [(m.role, m.content) for m in fast] == [
        ("user", "question"),
        ("assistant", " padded "),
        ("system", "be brief"),
        ("tool", "é \ufffd"),
    ]


def test_other_messages_take_the_general_path(monkeypatch: pytest.MonkeyPatch) -> None:
    messages: list[Any] = [
        AIMessage(content=[{"type": "text", "text": "a"}, "b"]),  # list content
        AIMessageChunk(content="chunk"),
        ChatMessage(content="judged", role="judge"),
        MyHuman(content="subclass"),
        HumanMessage.model_construct(content="odd type", type=" Human "),
        HumanMessage.model_construct(content="int id", id=7),
        HumanMessage("   "),  # blank: skipped by the general path
    ]
    calls = _count_general_path(monkeypatch)
    converted = convert_messages(messages)
    assert calls == messages
    assert [(m.role, m.content) for m in converted] == [
        ("assistant", "a b"),
        ("assistant", "chunk"),
        ("judge", "judged"),
        ("user", "subclass"),
        ("user", "odd type"),
        ("user", "int id"),
    ]


def test_a_message_without_an_id_field_gets_a_uuid4_on_either_path() -> None:
    without_id = HumanMessage("no id field")
    del without_id.__dict__["id"]  # getattr(message, "id", None) is None: a uuid4
    [fast] = convert_messages([without_id])
    general = convert_native(without_id, read_message)
    assert general is not None
    assert uuid.UUID(fast.id).version == uuid.UUID(general.id).version == 4


def test_role_by_type_keys_are_already_normalised() -> None:
    # The fast path maps ``type`` with ROLE_BY_TYPE directly: map_role's strip/lower/chunk step must
    # not change any of its keys.
    for key in ROLE_BY_TYPE:
        assert key == key.strip().lower().removesuffix("messagechunk")
        assert conversion.map_role(SimpleNamespace(type=key)) == ROLE_BY_TYPE[key]
        assert key != "chat"


def test_a_fast_message_is_what_model_construct_builds() -> None:
    (fast,) = convert_messages([HumanMessage("hi", id="m")])
    built = ChatHistoryMessage.model_construct(id="m", role="user", content="hi", timestamp=fast.timestamp)
    assert fast == built
    assert repr(fast) == repr(built)
    assert list(fast.__dict__) == list(built.__dict__)
    assert fast.model_fields_set == built.model_fields_set
    assert fast.model_dump_json(by_alias=True) == built.model_dump_json(by_alias=True)
    assert hash(fast) == hash(built)


def test_messages_of_a_batch_share_nothing_mutable_that_pydantic_changes() -> None:
    first, second = convert_messages([HumanMessage("a"), AIMessage("b")])
    with pytest.raises(ValidationError):
        first.content = "changed"  # frozen
    copied = first.model_copy(update={"content": "c"})
    assert (first.content, copied.content) == ("a", "c")
    assert first.model_fields_set == second.model_fields_set == ALL_FIELDS
    body = ChatMessageRequest(
        conversation_id="c", message_id="m", user_message="u", chat_history=[copied, second]
    ).model_dump_json(by_alias=True)
    assert '"content":"c"' in body
    assert '"role":"assistant"' in body
