"""Odd server data gets the same answer from every extension (issue 27; the rule: the tooling core's
``_tool_names``, README "Tool names"): a URL listed twice is registered once, a clashing tool name is
prefixed with its server's name only on a clash (stable across turns and discovery orders), and a tool
with an unusable ``inputSchema`` is left out with one WARNING while the server's other tools stay.

The platform (gateway and MCP servers) is a small server of our own on 127.0.0.1; the emulator only mints
the tokens.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator
from agents_a365.tooling import McpToolServerConfigurationService, ToolingConfiguration
from agents_a365.tooling.extensibility import resolve_tool_names
from contract.adapters import ADAPTERS
from support.hostile_mcp import HostileMcp, _answer
from support.hostile_server import HostileServer, Request, behaviours
from support.turns import make_turn_context


def _tool(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": name, "inputSchema": {"type": "object", "properties": {}}, **extra}


@dataclass
class _McpServer(HostileMcp):
    """Lists the given tool definitions as they are; records the names it was called with."""

    tools: list[Any] = field(default_factory=list)
    called: list[str] = field(default_factory=list)

    async def __call__(self, request: Request, writer: Any) -> None:
        message = json.loads(request.body) if request.method == "POST" and request.body else {}
        if message.get("method") == "tools/list":
            _answer(writer, 200, {"jsonrpc": "2.0", "id": message["id"], "result": {"tools": self.tools}})
            await writer.drain()
            return
        if message.get("method") == "tools/call":
            self.called.append(message["params"]["name"])
        await super().__call__(request, writer)


@asynccontextmanager
async def _platform(
    servers: dict[str, _McpServer], entries: list[tuple[str, str]]
) -> AsyncIterator[HostileServer]:
    """Gateway entries ``(name, path)``; each path served by ``servers[path]``."""
    async with HostileServer() as platform:
        for path, server in servers.items():
            platform.route(path, server)
        listed = [{"mcpServerName": name, "url": f"{platform.base_url}{path}"} for name, path in entries]
        platform.route("/mcpServers", behaviours.respond(200, {"mcpServers": listed}))
        yield platform


@asynccontextmanager
async def _turn(
    adapter_name: str, platform: HostileServer, emulator: Emulator, tooling: Any
) -> AsyncIterator[Any]:
    adapter = ADAPTERS[adapter_name](tooling)
    turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
    async with adapter.register(emulator.authorization(), turn) as registered:
        yield adapter, registered


def _tooling(platform: HostileServer) -> McpToolServerConfigurationService:
    config = ToolingConfiguration(mcp_platform_endpoint=platform.base_url, use_tooling_manifest=False)
    return McpToolServerConfigurationService(config)


@pytest.mark.parametrize("adapter_name", sorted(ADAPTERS))
async def test_a_url_listed_under_two_names_is_registered_once(emulator: Emulator, adapter_name: str) -> None:
    mail = _McpServer(tools=[_tool("send_email"), _tool("list_emails")])
    entries = [("mail", "/mail/mcp"), ("mail-again", "/mail/mcp/")]
    async with (
        _platform({"/mail/mcp": mail, "/mail/mcp/": mail}, entries) as platform,
        _tooling(platform) as tooling,
        _turn(adapter_name, platform, emulator, tooling) as (adapter, registered),
    ):
        assert sorted(await adapter.tool_names(registered)) == ["list_emails", "send_email"]
    assert mail.methods.count("initialize") == 1  # listed once, under the first name


@pytest.mark.parametrize("adapter_name", sorted(ADAPTERS))
async def test_a_clashing_tool_name_is_prefixed_with_its_server_only_on_a_clash(
    emulator: Emulator, adapter_name: str
) -> None:
    a = _McpServer(tools=[_tool("search"), _tool("only_a")])
    b = _McpServer(tools=[_tool("search"), _tool("only_b")])
    expected = ["a_search", "b_search", "only_a", "only_b"]
    for entries in ([("a", "/a/mcp"), ("b", "/b/mcp")], [("b", "/b/mcp"), ("a", "/a/mcp")]):
        async with _platform({"/a/mcp": a, "/b/mcp": b}, entries) as platform, _tooling(platform) as tooling:
            for _ in range(2):  # cold, then warm: the same names
                async with _turn(adapter_name, platform, emulator, tooling) as (adapter, registered):
                    assert sorted(await adapter.tool_names(registered)) == expected
                    await adapter.call_tool(registered, "b_search", {})
    assert b.called == ["search"] * 4  # the server is called with its own name
    assert a.called == []


def test_the_agents_own_names_are_reserved_however_they_are_given() -> None:
    # resolve_tool_names takes any iterable of the agent's own names: a generator reserves them as a list does.
    by_server = {"mail": ["search", "send"]}
    for own in (["search"], iter(["search"]), (name for name in ("search",))):
        assert resolve_tool_names(own, by_server) == {"mail": ["mail_search", "send"]}


@pytest.mark.parametrize("adapter_name", sorted(ADAPTERS))
async def test_a_tool_with_an_unusable_input_schema_is_left_out_with_one_warning(
    emulator: Emulator, adapter_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    bad = [
        {"name": "no_schema", "description": "x"},
        {"name": "null_schema", "inputSchema": None},
        {"name": "list_schema", "inputSchema": ["type", "object"]},
        {"name": "text_schema", "inputSchema": "object"},
    ]
    odd = _McpServer(tools=[_tool("good"), *bad])
    async with _platform({"/odd/mcp": odd}, [("odd", "/odd/mcp")]) as platform, _tooling(platform) as tooling:
        with caplog.at_level(logging.WARNING):
            async with _turn(adapter_name, platform, emulator, tooling) as (adapter, registered):
                assert await adapter.tool_names(registered) == ["good"]
                await adapter.call_tool(registered, "good", {})
    assert odd.called == ["good"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    for tool in bad:
        # Named with its server (its name, or the URL where the listing knows no name).
        named = [w for w in warnings if repr(tool["name"]) in w and ("'odd'" in w or "/odd/mcp" in w)]
        assert len(named) == 1, warnings
