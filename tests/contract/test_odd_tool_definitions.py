"""Odd tool definitions cost only themselves, the same in every extension (issue 37; the rule: the tooling core's
``_tool_names``): a name listed twice on one server keeps its first definition, and a tool whose ``inputSchema``
a framework or a model cannot take (a dangling or non-local ``$ref``, 100 levels of nesting, a non-object type, a
``$ref`` fan-out, an empty name) is left out with one WARNING naming its server and itself. Well-formed odd
schemas (a ``$ref`` cycle) are kept.

A real MCP server on 127.0.0.1 lists the definitions; each extension is checked where its framework converts the
tools: the names the model is offered (LangChain's ``convert_to_openai_tool``, the Agents SDK's per-run
conversion of ``mcp_servers``) and a real run of the agent that calls the good tool (LangChain's ``create_agent``,
the Agents SDK's ``Runner`` with ``mcp_servers`` and with ``function_tools=True``).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

import pytest
from mcp.types import Tool

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator
from agents_a365.tooling import MCPServerConfig
from agents_a365.tooling.extensibility import usable_tools
from contract.adapters import ADAPTERS
from contract.test_odd_server_data import _McpServer, _platform, _tool, _tooling, _turn
from support.hostile_mcp import _answer
from support.hostile_server import Request
from support.turns import make_turn_context


def _nested(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


def _fan_out(levels: int) -> dict[str, Any]:
    """Each definition refers to the next twice: 2**levels schemas once the ``$ref`` s are followed."""
    defs = {
        f"d{i}": {
            "type": "object",
            "properties": {"a": {"$ref": f"#/$defs/d{i + 1}"}, "b": {"$ref": f"#/$defs/d{i + 1}"}},
        }
        for i in range(levels)
    }
    defs[f"d{levels}"] = {"type": "string"}
    return {"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs}


def _schema(name: str, schema: Any) -> dict[str, Any]:
    return {"name": name, "description": name, "inputSchema": schema}


TREE = {  # a recursive schema: a $ref cycle is well formed, both frameworks and models take it
    "type": "object",
    "properties": {"root": {"$ref": "#/$defs/node"}},
    "$defs": {
        "node": {
            "type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
        }
    },
}
BAD = [
    _tool("good", description="the same name again"),
    _schema("dangling", {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}),
    _schema(
        "remote_ref", {"type": "object", "properties": {"a": {"$ref": "https://example.invalid/a.json"}}}
    ),
    _schema("deep", {"type": "object", "properties": {"x": _nested(100)}}),
    _schema("fan_out", _fan_out(14)),
    _schema("not_object", {"type": "string"}),
    _tool(""),
]
ODD = [_tool("good"), *BAD[:4], _schema("tree", TREE), *BAD[4:]]
KEPT = ["good", "tree"]


def _one_warning_each(caplog: pytest.LogCaptureFixture) -> None:
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    for tool in BAD:
        named = [
            w
            for w in warnings
            if f"tool {tool['name']!r} left out" in w and ("'mail'" in w or "/mail/mcp" in w)
        ]
        assert len(named) == 1, (tool["name"], warnings)
    assert len(warnings) == len(BAD), warnings


@pytest.mark.parametrize("adapter_name", sorted(ADAPTERS))
async def test_an_odd_tool_definition_costs_that_tool_only(
    emulator: Emulator, adapter_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    mail = _McpServer(tools=ODD)
    async with (
        _platform({"/mail/mcp": mail}, [("mail", "/mail/mcp")]) as platform,
        _tooling(platform) as tooling,
    ):
        with caplog.at_level(logging.WARNING):
            async with _turn(adapter_name, platform, emulator, tooling) as (adapter, registered):
                # The names the model is offered, through the framework's own conversion: unique, the bad left out.
                assert sorted(await adapter.tool_names(registered)) == KEPT
                await adapter.call_tool(registered, "good", {})
    assert mail.called == ["good"]
    _one_warning_each(caplog)


async def _run_langchain(tooling: Any, emulator: Emulator, turn: Any) -> str:
    from langchain_core.messages import AIMessage, HumanMessage

    from agents_a365.tooling.extensions.langchain import McpToolRegistrationService
    from support.scripted_langchain import ScriptedChatModel, call, calls

    model = ScriptedChatModel(script=[calls(call("good")), AIMessage(content="done")])
    async with McpToolRegistrationService(tooling).mcp_tools(
        emulator.authorization(), "AGENTIC", turn
    ) as toolset:
        result = await toolset.create_agent({"model": model}).ainvoke({"messages": [HumanMessage("go")]})
    assert sorted(model.bound_parameter_names()) == KEPT  # what the provider was offered
    return str(result["messages"][-1].content)


async def _run_openai(tooling: Any, emulator: Emulator, turn: Any, function_tools: bool) -> str:
    from agents import Agent, Runner

    from agents_a365.tooling.extensions.openai import McpToolRegistrationService
    from support.scripted_openai import ScriptedModel, assistant_message, function_call

    model = ScriptedModel(
        [lambda items, tools: [function_call("good", {})], lambda i, t: [assistant_message("done")]]
    )
    template = Agent(name="odd", model=model, mcp_config={"convert_schemas_to_strict": True})
    service = McpToolRegistrationService(tooling)
    async with service.connected_agent(
        template, emulator.authorization(), "AGENTIC", turn, function_tools=function_tools
    ) as agent:
        result = await Runner.run(agent, "go")
    assert sorted(model.calls[0][1]) == KEPT  # what the model was offered
    return str(result.final_output)


@pytest.mark.parametrize("form", ["langchain", "openai-mcp-servers", "openai-function-tools"])
async def test_an_agent_with_odd_tool_definitions_runs_with_the_good_ones(
    emulator: Emulator, form: str, caplog: pytest.LogCaptureFixture
) -> None:
    pytest.importorskip("langchain" if form == "langchain" else "agents")
    mail = _McpServer(tools=ODD)
    turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
    async with (
        _platform({"/mail/mcp": mail}, [("mail", "/mail/mcp")]) as platform,
        _tooling(platform) as tooling,
    ):
        with caplog.at_level(logging.WARNING):
            if form == "langchain":
                answer = await _run_langchain(tooling, emulator, turn)
            else:
                answer = await _run_openai(tooling, emulator, turn, form == "openai-function-tools")
    assert answer == "done"
    assert mail.called == ["good"]
    _one_warning_each(caplog)


@dataclass
class _PagedMcpServer(_McpServer):
    """Lists ``tools`` one per page (a ``nextCursor`` to the next)."""

    async def __call__(self, request: Request, writer: Any) -> None:
        message = json.loads(request.body) if request.method == "POST" and request.body else {}
        if message.get("method") != "tools/list":
            return await super().__call__(request, writer)
        page = int(message.get("params", {}).get("cursor") or 0)
        self.methods.append(f"tools/list {page}")
        result: dict[str, Any] = {"tools": self.tools[page : page + 1]}
        if page + 1 < len(self.tools):
            result["nextCursor"] = str(page + 1)
        _answer(writer, 200, {"jsonrpc": "2.0", "id": message["id"], "result": result})
        await writer.drain()


@pytest.mark.parametrize("adapter_name", sorted(ADAPTERS))
async def test_a_name_listed_again_on_a_later_page_keeps_its_first_definition(
    emulator: Emulator, adapter_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    mail = _PagedMcpServer(tools=[_tool("good", description="first"), _tool("other"), _tool("good")])
    async with (
        _platform({"/mail/mcp": mail}, [("mail", "/mail/mcp")]) as platform,
        _tooling(platform) as tooling,
    ):
        with caplog.at_level(logging.WARNING):
            async with _turn(adapter_name, platform, emulator, tooling) as (adapter, registered):
                assert sorted(await adapter.tool_names(registered)) == ["good", "other"]
        assert [m for m in mail.methods if m.startswith("tools/list")] == [
            f"tools/list {p}" for p in range(3)
        ]
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1, warnings
        assert "tool 'good' left out: its name is listed twice" in warnings[0]
        config = MCPServerConfig(mcp_server_name="mail", url=f"{platform.base_url}/mail/mcp")
        listed = await tooling.list_mcp_tools(config)  # what both extensions convert: the first definition
    assert [(t.name, t.description) for t in listed] == [("good", "first"), ("other", "other")]


def test_tool_objects_a_caller_passes_follow_the_same_rule() -> None:
    tools = [Tool(name="good", inputSchema={"type": "object"}), *(Tool.model_validate(t) for t in BAD[1:-1])]
    assert [t.name for t in usable_tools(tools, "mail")] == ["good"]
