"""Seed 003: identity through runtime context, async tools, parallel merges, checkpointer history."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from langchain.tools import ToolRuntime, tool
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator, EmulatorConfig
from agents_a365.tooling.extensions.langchain import McpToolRegistrationService, TurnIdentity, turn_identity
from support.platform import AUTH_HANDLER, production_config
from support.scripted_langchain import ScriptedChatModel, call, calls, tool_results
from support.turns import make_turn_context

IDENTITY_FIELDS = {
    "conversation_id",
    "user_id",
    "agent_id",
    "channel",
    "sub_channel",
    "tenant_id",
    "runtime",
    "context",
}


@tool
async def whoami(runtime: ToolRuntime[TurnIdentity]) -> str:
    """Who the current user is."""
    identity = runtime.context
    return json.dumps(
        {"user": identity.user_id, "conversation": identity.conversation_id, "tenant": identity.tenant_id}
    )


@tool
async def save_note(text: str, runtime: ToolRuntime[TurnIdentity]) -> str:
    """Save a note for the current user."""
    await asyncio.sleep(0.05)
    return f"{runtime.context.user_id}:{text}"


def test_turn_identity_reads_a_real_turn_context() -> None:
    turn = make_turn_context(
        agentic_app_id=DEFAULT_AGENT_ID, conversation_id="conv-9", user_id="user-9", tenant_id="tenant-9"
    )
    assert turn_identity(turn) == TurnIdentity(
        conversation_id="conv-9",
        user_id="user-9",
        agent_id=DEFAULT_AGENT_ID,
        channel="msteams",
        sub_channel="email",
        tenant_id="tenant-9",
    )


def test_turn_identity_of_a_non_agentic_turn_without_conversation() -> None:
    identity = turn_identity(make_turn_context(conversation_id=None, channel_id="webchat"))
    assert identity.conversation_id is None
    assert identity.agent_id == "agent-1"
    assert (identity.channel, identity.sub_channel) == ("webchat", None)
    assert identity.tenant_id == "tenant-1"


async def test_tools_read_the_identity_from_runtime_context_and_no_schema_exposes_it(
    service: McpToolRegistrationService, authorization: Any
) -> None:
    turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID, conversation_id="conv-7", user_id="user-7")
    model = ScriptedChatModel(script=[calls(call("whoami")), lambda m: AIMessage(tool_results(m)[0].text)])
    async with service.mcp_tools(authorization, AUTH_HANDLER, turn) as toolset:
        agent = toolset.create_agent(
            {"model": model, "tools": [whoami, save_note], "context_schema": TurnIdentity}
        )
        result = await agent.ainvoke({"messages": [HumanMessage("who am I?")]}, context=turn_identity(turn))
    assert json.loads(result["messages"][-1].content) == {
        "user": "user-7",
        "conversation": "conv-7",
        "tenant": "tenant-1",
    }
    parameters = model.bound_parameter_names()
    assert len(parameters) == 8  # whoami, save_note and the six MCP tools
    for name, params in parameters.items():
        assert not params & IDENTITY_FIELDS, f"{name} exposes {params & IDENTITY_FIELDS}"
    assert parameters["save_note"] == {"text"}


async def test_all_mcp_tools_are_async(
    service: McpToolRegistrationService, turn: Any, authorization: Any
) -> None:
    for mcp_tool in await service.get_mcp_tools(authorization, AUTH_HANDLER, turn):
        assert mcp_tool.coroutine is not None  # type: ignore[attr-defined]
        assert mcp_tool.func is None  # type: ignore[attr-defined]


async def test_parallel_tool_results_merge_through_the_reducer_without_loss(turn: Any) -> None:
    step = calls(
        call("add_note", text="a"),
        call("list_emails"),
        call("list_events", date="2025-01-06"),
        call("save_note", text="b"),
        call("search_emails", query="lunch"),
    )
    model = ScriptedChatModel(script=[step, calls(text="done")])
    async with (
        Emulator(EmulatorConfig.with_notes_servers(1)) as emu,
        McpToolRegistrationService(configuration=production_config(emu)) as svc,
        svc.mcp_tools(emu.authorization(), AUTH_HANDLER, turn) as toolset,
    ):
        agent = toolset.create_agent({"model": model, "tools": [save_note], "context_schema": TurnIdentity})
        result = await agent.ainvoke({"messages": [HumanMessage("all at once")]}, context=turn_identity(turn))
    tool_messages = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert sorted(m.tool_call_id for m in tool_messages) == sorted(c["id"] for c in step.tool_calls)
    assert all(m.status == "success" for m in tool_messages)
    assert next(m for m in tool_messages if m.name == "save_note").text == "user-1:b"
    assert emu.servers["notes_1"].state.notes == [{"id": 1, "text": "a"}]


async def test_level_one_sends_the_history_stored_by_a_checkpointer_for_a_thread(
    emulator: Emulator, service: McpToolRegistrationService, turn: Any, authorization: Any
) -> None:
    model = ScriptedChatModel(
        script=[calls(call("list_emails")), calls(text="You have 3 emails."), calls(text="other thread")]
    )
    checkpointer = InMemorySaver()
    async with service.mcp_tools(authorization, AUTH_HANDLER, turn) as toolset:
        agent = toolset.create_agent({"model": model, "checkpointer": checkpointer})
        config = {"configurable": {"thread_id": "conversation-1"}}
        await agent.ainvoke({"messages": [HumanMessage("How many emails?", id="h1")]}, config)
        await agent.ainvoke(
            {"messages": [HumanMessage("elsewhere")]}, {"configurable": {"thread_id": "other"}}
        )
    result = await service.send_chat_history(turn, agent, config)
    assert result.succeeded
    [body] = emulator.chat_messages
    history = body["chatHistory"]
    # The AI message with only a tool call has no text and is skipped.
    assert [m["role"] for m in history] == ["user", "tool", "assistant"]
    assert history[0] == {**history[0], "id": "h1", "content": "How many emails?"}
    assert "inbox-1" in history[1]["content"]
    assert history[2]["content"] == "You have 3 emails."
    assert body["conversationId"] == "conversation-1"
