"""Seed 002: MCP tools really work in the agent loop (create_agent and a hand-written bind_tools loop)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain.agents.middleware import ModelCallLimitMiddleware
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.errors import GraphRecursionError

from agents_a365.emulator import Emulator, Fault
from agents_a365.tooling.extensions.langchain import McpToolRegistrationService
from support.leaks import our_tasks
from support.platform import AUTH_HANDLER
from support.scripted_langchain import ScriptedChatModel, call, calls, tool_results


def _text(message: BaseMessage) -> str:
    return message.text


def _answer_from_tool(messages: list[BaseMessage]) -> AIMessage:
    result = json.loads(_text(tool_results(messages)[0]))
    return AIMessage(content=f"Sent as {result['id']} to {', '.join(result['to'])}")


async def test_the_model_calls_an_mcp_tool_and_answers_from_its_result(
    emulator: Emulator, service: McpToolRegistrationService, turn: Any, authorization: Any
) -> None:
    model = ScriptedChatModel(
        script=[
            calls(call("send_email", to="carol@contoso.example", subject="Hi", body="Lunch?")),
            _answer_from_tool,
        ]
    )
    async with service.mcp_tools(authorization, AUTH_HANDLER, turn) as toolset:
        agent = toolset.create_agent({"model": model})
        result = await agent.ainvoke({"messages": [HumanMessage("Email Carol")]})
    sent = emulator.servers["mail"].state.sent
    assert [e.to for e in sent] == [["carol@contoso.example"]]
    tool_message = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert tool_message.name == "send_email"
    assert tool_message.status == "success"
    assert json.loads(_text(tool_message))["id"] == sent[0].id
    # The model's second call saw the ToolMessage; its final answer uses the result.
    assert isinstance(model.seen[1][-1], ToolMessage)
    assert result["messages"][-1].content == f"Sent as {sent[0].id} to carol@contoso.example"


async def test_the_same_loop_works_with_add_tool_servers_to_agent(
    emulator: Emulator, service: McpToolRegistrationService, turn: Any, authorization: Any
) -> None:
    model = ScriptedChatModel(
        script=[
            calls(call("send_email", to="dave@contoso.example", subject="s", body="b")),
            _answer_from_tool,
        ]
    )
    agent = await service.add_tool_servers_to_agent(
        authorization, AUTH_HANDLER, turn, agent_options={"model": model}
    )
    result = await agent.ainvoke({"messages": [HumanMessage("Email Dave")]})
    assert emulator.servers["mail"].state.sent[0].to == ["dave@contoso.example"]
    assert result["messages"][-1].content.startswith("Sent as sent-1")


async def test_two_calls_to_two_servers_in_one_step_run_in_parallel(
    emulator: Emulator, service: McpToolRegistrationService, turn: Any, authorization: Any
) -> None:
    # The emulator holds each tools/call until both are in flight (run one after the other, each is
    # released alone after the hold timeout): a count, not a timing window.
    emulator.faults.set("mcp", Fault(hold_until_concurrent=2, mcp_method="tools/call", times=2))
    model = ScriptedChatModel(
        script=[
            calls(
                call("list_emails", folder="inbox"),
                call("find_free_time", date="2025-01-06", duration_minutes=30),
            ),
            lambda messages: AIMessage(content=" | ".join(m.name or "" for m in tool_results(messages))),
        ]
    )
    async with service.mcp_tools(authorization, AUTH_HANDLER, turn) as toolset:
        agent = toolset.create_agent({"model": model})
        result = await agent.ainvoke({"messages": [HumanMessage("Inbox and a free slot")]})
    held = {
        r.server: r.held_together for r in emulator.requests_for("mcp") if r.jsonrpc_method == "tools/call"
    }
    assert held == {"mail": 2, "calendar": 2}
    seen = tool_results(model.seen[1])
    assert {m.name for m in seen} == {"list_emails", "find_free_time"}
    assert all(m.status == "success" for m in seen)
    inbox = json.loads(_text(next(m for m in seen if m.name == "list_emails")))
    assert [e["id"] for e in inbox] == ["inbox-1", "inbox-2", "inbox-3"]
    assert result["messages"][-1].content in {"list_emails | find_free_time", "find_free_time | list_emails"}


async def test_an_mcp_tool_error_comes_back_as_an_error_tool_message_and_the_run_goes_on(
    emulator: Emulator, service: McpToolRegistrationService, turn: Any, authorization: Any
) -> None:
    model = ScriptedChatModel(
        script=[
            calls(call("send_email", to="not-an-address", subject="s", body="b")),
            calls(call("send_email", to="erin@contoso.example", subject="s", body="b")),
            calls(text="sent on the second try"),
        ]
    )
    async with service.mcp_tools(authorization, AUTH_HANDLER, turn) as toolset:
        agent = toolset.create_agent({"model": model})
        result = await agent.ainvoke({"messages": [HumanMessage("Email Erin")]})
    failed, succeeded = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert failed.status == "error"
    assert "Invalid email address" in _text(failed)
    assert succeeded.status == "success"
    assert result["messages"][-1].content == "sent on the second try"
    assert [e.to for e in emulator.servers["mail"].state.sent] == [["erin@contoso.example"]]


async def test_a_call_to_an_unknown_tool_is_answered_with_an_error_not_a_crash(
    service: McpToolRegistrationService, turn: Any, authorization: Any
) -> None:
    model = ScriptedChatModel(script=[calls(call("delete_everything")), calls(text="sorry")])
    async with service.mcp_tools(authorization, AUTH_HANDLER, turn) as toolset:
        agent = toolset.create_agent({"model": model})
        result = await agent.ainvoke({"messages": [HumanMessage("x")]})
    error = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert error.status == "error"
    assert "delete_everything is not a valid tool" in _text(error)
    assert result["messages"][-1].content == "sorry"


async def test_a_model_call_limit_ends_a_looping_run_gracefully(
    emulator: Emulator, service: McpToolRegistrationService, turn: Any, authorization: Any
) -> None:
    model = ScriptedChatModel(script=[calls(call("list_emails"))], repeat_last=True)
    async with service.mcp_tools(authorization, AUTH_HANDLER, turn) as toolset:
        agent = toolset.create_agent(
            {"model": model, "middleware": [ModelCallLimitMiddleware(run_limit=3, exit_behavior="end")]}
        )
        result = await agent.ainvoke({"messages": [HumanMessage("loop")]})
    assert len(model.seen) == 3
    assert isinstance(result["messages"][-1], AIMessage)
    assert "limit" in result["messages"][-1].text.lower()


async def test_the_recursion_limit_stops_a_looping_run_and_the_sessions_still_close(
    service: McpToolRegistrationService, turn: Any, authorization: Any
) -> None:
    model = ScriptedChatModel(script=[calls(call("list_emails"))], repeat_last=True)

    async def run() -> None:
        async with service.mcp_tools(authorization, AUTH_HANDLER, turn) as toolset:
            agent = toolset.create_agent({"model": model})
            await agent.ainvoke({"messages": [HumanMessage("loop")]}, {"recursion_limit": 6})

    with pytest.raises(GraphRecursionError):
        await run()
    assert our_tasks() == []
    # The service is fine for the next turn.
    async with service.mcp_tools(authorization, AUTH_HANDLER, turn) as toolset:
        assert len(toolset) == 6


async def _bind_tools_loop(
    model: ScriptedChatModel, tools: list[Any], question: str, max_steps: int = 5
) -> str:
    """The seed's hand-written loop, as shown in the README."""
    by_name = {t.name: t for t in tools}
    model_with_tools = model.bind_tools(tools)
    messages: list[BaseMessage] = [HumanMessage(question)]
    response = await model_with_tools.ainvoke(messages)
    for _ in range(max_steps):
        if not response.tool_calls:
            break
        messages.append(response)
        for tool_call in response.tool_calls:
            selected = by_name.get(tool_call["name"])
            if selected is None:
                messages.append(
                    ToolMessage(
                        f"unknown tool {tool_call['name']}", tool_call_id=tool_call["id"], status="error"
                    )
                )
                continue
            messages.append(await selected.ainvoke(tool_call))  # a ToolCall in -> a ToolMessage out
        response = await model_with_tools.ainvoke(messages)
    return response.text


async def test_a_hand_written_bind_tools_loop_over_get_mcp_tools(
    emulator: Emulator, service: McpToolRegistrationService, turn: Any, authorization: Any
) -> None:
    model = ScriptedChatModel(
        script=[
            calls(call("create_event", title="Sync", start="2025-01-06T10:00:00", end="2025-01-06T10:30:00")),
            calls(call("send_email", to="bad", subject="s", body="b"), call("nope")),
            lambda messages: AIMessage(content=",".join(m.status for m in tool_results(messages))),
        ]
    )
    tools = await service.get_mcp_tools(authorization, AUTH_HANDLER, turn)
    answer = await _bind_tools_loop(model, tools, "Book a sync")
    assert [e.title for e in emulator.servers["calendar"].state.events] == ["Sync"]
    assert answer == "error,error"
    assert {t["function"]["name"] for t in model.bound_tools} == {t.name for t in tools}


async def test_a_hand_written_loop_inside_the_per_turn_scope(
    emulator: Emulator, service: McpToolRegistrationService, turn: Any, authorization: Any
) -> None:
    model = ScriptedChatModel(script=[calls(call("list_events", date="2025-01-06")), calls(text="none")])
    async with service.mcp_tools(authorization, AUTH_HANDLER, turn) as toolset:
        assert await _bind_tools_loop(model, toolset.tools(), "What is on Monday?") == "none"
    assert json.loads(_text(tool_results(model.seen[1])[0])) == []
