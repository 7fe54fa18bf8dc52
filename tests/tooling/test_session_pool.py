"""McpSessionPool, the one session holder of the core and both extensions, against real servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agents_a365.emulator import Emulator, EmulatorConfig, Fault
from agents_a365.tooling import MCPServerConfig, McpServerConnectionError, _sessions
from agents_a365.tooling.extensibility import McpSessionPool
from support.clock import FakeClock
from support.hostile_server import HostileServer, Request, behaviours
from support.platform import mail_server

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


@pytest.fixture
async def emulator() -> AsyncIterator[Emulator]:
    async with Emulator(EmulatorConfig(mcp_stateless=False)) as emu:
        yield emu


def _initializes(emu: Emulator) -> int:
    return sum(1 for r in emu.requests_for("mcp", server="mail") if r.jsonrpc_method == "initialize")


def _session_ids(emu: Emulator, method: str) -> list[str | None]:
    """The ``mcp-session-id`` of each ``method`` request to mail, in arrival order."""
    requests = emu.requests_for("mcp", server="mail")
    return [r.headers.get("mcp-session-id") for r in requests if r.jsonrpc_method == method]


async def test_a_new_session_pool_loads_no_ca_bundle(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every pool takes the process's one TLS context: loading the CA bundle held the event loop ~27 ms
    # for each new pool (one per LangChain turn), on top of a cold listing's steps (issue 27).
    async with McpSessionPool(timeout=10) as pool:
        await pool.list_tools(mail_server(emulator))  # the process's TLS context exists from here on
    loads: list[object] = []
    load = ssl.SSLContext.load_verify_locations

    def counted(context: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        loads.append(args)
        load(context, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    async with McpSessionPool(timeout=10) as pool:
        assert await pool.list_tools(mail_server(emulator))
    assert loads == []


async def test_listing_requests_carry_the_session_id_and_protocol_version_mcp_sends(
    emulator: Emulator,
) -> None:
    async with McpSessionPool(timeout=10) as pool:
        assert await pool.list_tools(mail_server(emulator))
    requests = emulator.requests_for("mcp", server="mail")
    initialized = next(r for r in requests if r.jsonrpc_method == "notifications/initialized")
    listings = [r for r in requests if r.jsonrpc_method == "tools/list"]
    assert listings
    for name in ("mcp-session-id", "mcp-protocol-version"):
        assert initialized.headers.get(name)
        assert {r.headers.get(name) for r in listings} == {initialized.headers[name]}


async def test_no_repr_of_the_pool_or_its_sessions_shows_the_token(emulator: Emulator) -> None:
    mail = mail_server(emulator)
    token = mail.headers["Authorization"].split()[1]
    async with McpSessionPool(timeout=10) as pool:
        assert await pool.list_tools(mail)
        shown = [repr(pool), *(repr(session) for session in pool._entries.values())]
        assert len(shown) == 2
        assert not [text for text in shown if token in text or token.rsplit(".", 1)[-1] in text]


async def test_concurrent_calls_share_one_session(emulator: Emulator) -> None:
    emulator.faults.set("mcp:mail", Fault(hold_until_concurrent=5, mcp_method="tools/call", times=5))
    mail = mail_server(emulator)
    async with McpSessionPool(timeout=10) as pool:
        results = await asyncio.gather(*(pool.call_tool(mail, "list_emails", {}) for _ in range(5)))
    assert not any(r.isError for r in results)
    assert _initializes(emulator) == 1
    held = [
        r.held_together
        for r in emulator.requests_for("mcp", server="mail")
        if r.jsonrpc_method == "tools/call"
    ]
    assert held == [5] * 5  # all five in flight at once on the one session


async def test_over_the_bound_a_session_that_only_listed_goes_before_one_that_served_calls(
    emulator: Emulator,
) -> None:
    # A turn lists every server and calls a few: with more users than sessions, the listing-only sessions
    # must not push out the ones the users' calls come back to (each reopen costs two round trips).
    called = mail_server(emulator)
    listed, third = (
        called.model_copy(update={"headers": {**called.headers, "x-ms-agentid": user}})
        for user in ("listed", "third")
    )
    async with McpSessionPool(timeout=10, max_sessions=2) as pool:
        assert not (await pool.call_tool(called, "list_emails", {})).isError  # the oldest
        assert await pool.list_tools(listed)
        assert await pool.list_tools(third)  # over the bound: one idle session goes
        assert len(pool) == 2
        opened = _initializes(emulator)
        assert not (await pool.call_tool(called, "list_emails", {})).isError
        assert _initializes(emulator) == opened  # the session that served a call was kept
        assert await pool.list_tools(listed)
        assert _initializes(emulator) == opened + 1  # the listing-only one went


async def test_a_session_retired_while_in_use_closes_only_when_its_call_returns(emulator: Emulator) -> None:
    clock = FakeClock()
    # One token for all three calls (see _mail): minted per call, the slow call's token could carry the next
    # second, a key of its own: it then opened a second session and the next call a third (flaky under load).
    mail = mail_server(emulator)
    async with McpSessionPool(timeout=10, idle_timeout=10, clock=clock) as pool:
        await pool.call_tool(mail, "list_emails", {})
        emulator.faults.set("mcp:mail", Fault(latency_ms=300, mcp_method="tools/call", times=1))
        slow = asyncio.create_task(pool.call_tool(mail, "list_emails", {}))
        while not [r for r in emulator.requests_for("mcp", server="mail") if r.fault]:  # noqa: ASYNC110
            await asyncio.sleep(0.005)
        clock.advance(3600)  # idle and token expiry alike: retired now, in use
        pool.prune()
        assert len(pool) == 0
        other = await pool.call_tool(mail, "list_emails", {})  # a new session
        assert not (await slow).isError  # the retired one finished its call
        assert not other.isError
        assert _initializes(emulator) == 2  # the retired session is not reopened
        first, second = _session_ids(emulator, "notifications/initialized")
        assert first != second
        # The first call and the slow one on the first session, the next call on the new one.
        assert _session_ids(emulator, "tools/call") == [first, first, second]
    with pytest.raises(RuntimeError, match="closed"):
        await pool.call_tool(mail, "list_emails", {})


def _structured(answer: dict[str, Any]) -> Any:
    async def run(request: Request, writer: asyncio.StreamWriter) -> None:
        message = json.loads(request.body)
        if "id" not in message:
            writer.write(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
        else:
            if message["method"] == "initialize":
                result: dict[str, Any] = {
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "s", "version": "1"},
                }
            else:
                result = answer
            data = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
            head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
            writer.write(head.encode() + data)
        await writer.drain()

    return run


@pytest.mark.parametrize(
    ("structured", "error"),
    [
        ({"n": 1}, None),
        ({"n": "one"}, "does not match its output schema"),
        (None, "returned no structured content"),
    ],
)
async def test_structured_results_are_checked_against_the_definitions_schema_without_listing(
    structured: Any, error: str | None
) -> None:
    answer = {"content": [{"type": "text", "text": "ok"}], "isError": False}
    if structured is not None:
        answer["structuredContent"] = structured
    async with HostileServer() as server:
        server.route("/mcp", _structured(answer))
        target = MCPServerConfig(mcp_server_name="s", url=f"{server.base_url}/mcp")
        async with McpSessionPool(timeout=10) as pool:
            if error is None:
                result = await pool.call_tool(target, "count", {}, output_schema=SCHEMA)
                assert result.structuredContent == {"n": 1}
            else:
                with pytest.raises(McpServerConnectionError, match=error):
                    await pool.call_tool(target, "count", {}, output_schema=SCHEMA)
    methods = [json.loads(r.body).get("method") for r in server.requests if r.method == "POST"]
    assert "tools/list" not in methods  # the schema came from the cached definition


async def test_closing_the_pool_fails_a_call_still_connecting_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The server never answers ``initialize``: the caller holds the session, so only the pool's close ends it,
    # at once (not after the grace period a session that is open gets to finish its calls).
    monkeypatch.setattr(_sessions, "_CLOSE_TIMEOUT", 3600.0)
    async with HostileServer() as server:
        server.route("/mcp", behaviours.hold())
        pool = McpSessionPool(timeout=0)  # no deadline: nothing but the close can end the call
        target = MCPServerConfig(mcp_server_name="s", url=f"{server.base_url}/mcp")
        call = asyncio.create_task(pool.call_tool(target, "count", {}))
        async with asyncio.timeout(10):
            await server.wait_for_requests()
            await pool.aclose()
            with pytest.raises(McpServerConnectionError, match="closed while connecting"):
                await call


async def test_a_call_racing_the_pools_close_fails_at_once() -> None:
    # The close runs before the session's holder task ever starts (gather starts both in one loop turn).
    pool = McpSessionPool(timeout=0)  # no deadline: nothing but the close can end the call
    target = MCPServerConfig(mcp_server_name="s", url="http://127.0.0.1:9/mcp")
    async with asyncio.timeout(10):
        call, _ = await asyncio.gather(
            pool.call_tool(target, "count", {}), pool.aclose(), return_exceptions=True
        )
    assert isinstance(call, McpServerConnectionError), call
    assert "closed while connecting" in str(call)


@pytest.mark.parametrize("bad", [{"timeout": -1}, {"idle_timeout": True}, {"max_sessions": -1}])
def test_bad_settings_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=next(iter(bad))):
        McpSessionPool(**bad)


@pytest.mark.parametrize("code", [-32001, 0])
def test_a_json_rpc_error_is_told_by_its_code_and_scrubbed_message_whatever_the_code(code: int) -> None:
    # What a caller's McpServerConnectionError says of a server's JSON-RPC error (code 0 included: mcp 1's
    # McpError was once read through a falsy-code fallback and described as a plain exception).
    from mcp.shared.exceptions import McpError
    from mcp.types import ErrorData

    from agents_a365.tooling._mcp_errors import describe, error_code

    exc = McpError(ErrorData(code=code, message="denied, you sent Bearer abc.def"))
    assert error_code(exc) == code
    assert describe(exc) == f"JSON-RPC error {code}: denied, you sent Bearer <redacted>"
