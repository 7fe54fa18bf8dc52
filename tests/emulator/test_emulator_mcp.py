from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

import httpx
import pytest
from mcp import ClientSession, types

from agents_a365.emulator import CALENDAR_AUDIENCE, Emulator, EmulatorConfig

McpSessionFactory = Callable[..., AbstractAsyncContextManager[ClientSession]]


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def test_mail_tools_change_state(emulator: Emulator, mcp_session: McpSessionFactory) -> None:
    async with mcp_session(emulator.server_url("mail"), emulator.platform_token()) as session:
        tools = {t.name for t in (await session.list_tools()).tools}
        assert tools == {"send_email", "list_emails", "search_emails"}
        inbox = json.loads(_text(await session.call_tool("list_emails", {})))
        assert len(inbox) == 3
        result = await session.call_tool(
            "send_email", {"to": "bob@contoso.example", "subject": "Hi", "body": "Yo"}
        )
        assert not result.isError
        assert json.loads(_text(result))["status"] == "sent"
        sent = json.loads(_text(await session.call_tool("list_emails", {"folder": "sent", "limit": 5})))
        assert [e["subject"] for e in sent] == ["Hi"]
        found = json.loads(_text(await session.call_tool("search_emails", {"query": "quarterly"})))
        assert [e["subject"] for e in found] == ["Quarterly report"]
    state = emulator.servers["mail"].state
    assert [(e.to, e.subject, e.body) for e in state.sent] == [(["bob@contoso.example"], "Hi", "Yo")]


async def test_mail_invalid_address_is_tool_error(emulator: Emulator, mcp_session: McpSessionFactory) -> None:
    async with mcp_session(emulator.server_url("mail"), emulator.platform_token()) as session:
        result = await session.call_tool("send_email", {"to": "not-an-address", "subject": "s", "body": "b"})
        assert result.isError
        assert "Invalid email address" in _text(result)
        missing = await session.call_tool("send_email", {"to": "a@b.example"})
        assert missing.isError
        assert "subject" in _text(missing)
        unknown = await session.call_tool("no_such_tool", {})
        assert unknown.isError
    assert emulator.servers["mail"].state.sent == []


async def test_calendar_v2_audience(
    emulator: Emulator, mcp_session: McpSessionFactory, http: httpx.AsyncClient
) -> None:
    calendar_token = emulator.issuer.mint(CALENDAR_AUDIENCE, app_id="a")
    assert calendar_token == calendar_token  # keep the name visible in failures
    # The platform token is refused by the V2 server ...
    response = await http.post(
        emulator.server_url("calendar"),
        headers={"Authorization": f"Bearer {emulator.platform_token()}", "Accept": "application/json"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    )
    assert response.status_code == 401
    assert response.json()["reason"] == "wrong_audience"
    # ... and the calendar token is refused by the V1 mail server.
    response = await http.post(
        emulator.server_url("mail"),
        headers={"Authorization": f"Bearer {calendar_token}"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    )
    assert response.status_code == 401
    async with mcp_session(emulator.server_url("calendar"), calendar_token) as session:
        created = await session.call_tool(
            "create_event",
            {
                "title": "Standup",
                "start": "2025-03-03T10:00:00Z",
                "end": "2025-03-03T10:30:00Z",
                "attendees": ["a@b.example"],
            },
        )
        assert not created.isError, _text(created)
        events = json.loads(_text(await session.call_tool("list_events", {"date": "2025-03-03"})))
        assert [e["title"] for e in events] == ["Standup"]
        free = json.loads(
            _text(await session.call_tool("find_free_time", {"date": "2025-03-03", "duration_minutes": 60}))
        )
        assert free == [
            {"start": "2025-03-03T09:00:00+00:00", "end": "2025-03-03T10:00:00+00:00"},
            {"start": "2025-03-03T10:30:00+00:00", "end": "2025-03-03T17:00:00+00:00"},
        ]
        bad = await session.call_tool(
            "create_event", {"title": "Back", "start": "2025-03-03T11:00:00Z", "end": "2025-03-03T10:00:00Z"}
        )
        assert bad.isError
        assert "after its start" in _text(bad)
    assert [e.title for e in emulator.servers["calendar"].state.events] == ["Standup"]


async def test_platform_token_refused_by_calendar_via_mcp_client(
    emulator: Emulator, mcp_session: McpSessionFactory
) -> None:
    with pytest.raises(Exception) as info:  # noqa: PT011 - the MCP client wraps the 401 in an exception group
        async with mcp_session(emulator.server_url("calendar"), emulator.platform_token()):
            pass
    assert "401" in repr(info.value) or "Unauthorized" in repr(info.value)


async def test_server_url_without_trailing_slash_and_unknown_server(
    emulator: Emulator, http: httpx.AsyncClient, mcp_session: McpSessionFactory
) -> None:
    async with mcp_session(emulator.server_url("mail").rstrip("/"), emulator.platform_token()) as session:
        assert (await session.list_tools()).tools
    response = await http.post(f"{emulator.base_url}/agents/servers/nope/", json={})
    assert response.status_code == 404


async def test_many_notes_servers_have_independent_state(mcp_session: McpSessionFactory) -> None:
    async with Emulator(EmulatorConfig.with_notes_servers(3)) as emu:
        token = emu.platform_token()
        for name in ("notes_1", "notes_3"):
            async with mcp_session(emu.server_url(name), token) as session:
                await session.call_tool("add_note", {"text": f"hello {name}"})
                notes = json.loads(_text(await session.call_tool("list_notes", {})))
                assert notes == [{"id": 1, "text": f"hello {name}"}]
        assert emu.servers["notes_2"].state.notes == []
        assert emu.servers["notes_3"].state.notes == [{"id": 1, "text": "hello notes_3"}]


async def test_stateful_sessions_also_work(mcp_session: McpSessionFactory) -> None:
    async with Emulator(EmulatorConfig(mcp_stateless=False, mcp_json_response=False)) as emu:
        async with mcp_session(emu.server_url("mail"), emu.platform_token()) as session:
            await session.call_tool("send_email", {"to": "x@y.example", "subject": "s", "body": "b"})
        assert len(emu.servers["mail"].state.sent) == 1
        assert "mcp-session-id" in emu.requests_for("mcp")[-1].headers
