"""The pure conversion and naming functions (no I/O)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, ChatMessage, HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool

from agents_a365.tooling.extensions.langchain import (
    convert_messages,
    extract_text,
    map_role,
    resolve_tool_names,
)


class Duck:
    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


@pytest.mark.parametrize(
    ("message", "role"),
    [
        (Duck(type="human"), "user"),
        (Duck(type="ai"), "assistant"),
        (Duck(type="AIMessageChunk"), "assistant"),
        (Duck(type="chat", role=""), "user"),
        (Duck(type="chat", role=None), "user"),
        (ChatMessage("x", role=" judge "), "judge"),
        (Duck(type="remove"), "user"),
        (Duck(type=3), "user"),
        (object(), "user"),
    ],
)
def test_map_role(message: Any, role: str) -> None:
    assert map_role(message) == role


@pytest.mark.parametrize(
    ("message", "text"),
    [
        (HumanMessage("plain"), "plain"),
        (
            Duck(content=["a", {"type": "text", "text": "b"}, {"text": "c"}, {"type": "image"}, 5, None]),
            "a b c",
        ),
        (Duck(content=[Duck(text="x"), Duck(text=None)]), "x"),
        (Duck(text=lambda: "called"), "called"),
        (Duck(content={"type": "text", "text": "dict is not a list"}), None),
        (Duck(content=b"bytes"), None),
        (Duck(content=None), None),
        (Duck(), None),
        (
            ToolMessage(
                content=[{"type": "text", "text": "r1"}, {"type": "text", "text": "r2"}], tool_call_id="c"
            ),
            "r1 r2",  # parts joined by one space, as the OpenAI extension does (contract)
        ),
    ],
)
def test_extract_text(message: Any, text: str | None) -> None:
    assert extract_text(message) == text


def test_convert_messages_argument_errors() -> None:
    with pytest.raises(ValueError, match="messages is required"):
        convert_messages(None)
    for wrong in ("text", b"bytes", {"a": 1}, 42):
        with pytest.raises(ValueError, match="messages must be a sequence of messages"):
            convert_messages(wrong)
    for limit in (-1, 1.5, True, "3"):
        with pytest.raises(ValueError, match="limit must be a non-negative integer"):
            convert_messages([], limit)  # type: ignore[arg-type]


def test_limit_takes_the_most_recent_messages_then_skips_those_without_text() -> None:
    # Same semantics as openai-agents' Session.get_items(limit): the newest N items of the history.
    messages = [HumanMessage("a"), AIMessage("b"), AIMessage(""), HumanMessage("c")]
    assert [m.content for m in convert_messages(messages, limit=2)] == ["c"]
    assert [m.content for m in convert_messages(messages, limit=3)] == ["b", "c"]
    assert [m.content for m in convert_messages(messages, limit=10)] == ["a", "b", "c"]
    assert convert_messages(iter(messages), limit=0) == []


def _tool(name: str) -> StructuredTool:
    async def run() -> str:
        return name

    return StructuredTool.from_function(coroutine=run, name=name, description=name)


def test_name_clash_rule() -> None:
    own = [_tool("search")]
    by_server = {
        "b": [_tool("search"), _tool("add"), _tool("unique_b")],
        "a": [_tool("add"), _tool("b_add")],  # a's b_add would collide with b's prefixed add
    }
    names = [t.name for t in resolve_tool_names(own, by_server)]
    assert names == ["b_search", "b_add_2", "unique_b", "a_add", "b_add"]
    reordered = {"a": by_server["a"], "b": by_server["b"]}
    assert sorted(t.name for t in resolve_tool_names(own, reordered)) == sorted(names)
    assert len(set(names)) == len(names)


def test_mcp_names_drive_the_rule_for_tools_already_renamed() -> None:
    # The service names tools that clash across servers when it builds them; the rule then goes by each tool's
    # name on its server (mcp_names), not by the name it already has, and copies only what must change.
    named = {"a": [_tool("a_add"), _tool("only_a")], "b": [_tool("b_add")]}
    mcp_names = {"a": ["add", "only_a"], "b": ["add"]}
    tools = resolve_tool_names([], named, mcp_names)
    assert [t.name for t in tools] == ["a_add", "only_a", "b_add"]
    assert all(t is u for t, u in zip(tools, [*named["a"], *named["b"]], strict=True))  # nothing copied
    # A server mcp_names leaves out goes by its tools' names (b's is "b_add": a's "add" clashes no more and gets
    # its name back); a clash with the agent's own tool is a copy.
    tools = resolve_tool_names([_tool("only_a")], {**named, "c": [_tool("c_only")]}, {"a": mcp_names["a"]})
    assert [t.name for t in tools] == ["add", "a_only_a", "b_add", "c_only"]
    assert tools[1] is not named["a"][1]
    assert tools[2] is named["b"][0]


def test_unsafe_server_names_give_provider_safe_tool_names() -> None:
    names = [t.name for t in resolve_tool_names([], {"my server.v2": [_tool("x")], "other": [_tool("x")]})]
    assert names == ["my_server_v2_x", "other_x"]


class _RedactingMessage(HumanMessage):
    """A message class that knows its own text better than its content (e.g. strips markup)."""

    @property
    def text(self) -> str:  # type: ignore[override]
        return str(self.content).replace("<b>", "").replace("</b>", "")


def test_a_message_class_overriding_text_is_honoured_and_plain_parts_keep_one_space() -> None:
    assert extract_text(_RedactingMessage("<b>hello</b>")) == "hello"
    assert extract_text(HumanMessage("<b>hello</b>")) == "<b>hello</b>"  # no override: the content as is
    # langchain-core's own ``.text`` joins parts with no separator; both extensions join with one space.
    assert extract_text(HumanMessage(content=["first part", {"type": "text", "text": "second"}])) == (
        "first part second"
    )
    [converted] = convert_messages([_RedactingMessage("<b>x</b>")])
    assert converted.content == "x"
