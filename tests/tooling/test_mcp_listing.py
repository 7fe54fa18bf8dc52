"""The core's ``tools/list`` (``get_mcp_client_tools`` / ``list_mcp_tools``): plain requests on its pooled client.

Against the emulator's real MCP servers (every transport mode, compared with the official client) and
hostile servers on 127.0.0.1 (SSE streams left open, huge or malformed answers, errors echoing the token,
redirects, cookies).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from agents_a365.emulator import Emulator, EmulatorConfig
from agents_a365.tooling import (
    MCPServerConfig,
    McpServerConnectionError,
    McpToolServerConfigurationService,
    ToolingConfiguration,
)
from agents_a365.tooling.extensibility import mcp_http_client_factory
from support.hostile_mcp import TOOL
from support.hostile_server import HostileServer, Request
from support.jwt import make_jwt

pytestmark = pytest.mark.filterwarnings("ignore:Use `streamable_http_client` instead:DeprecationWarning")

SAFETY = 10.0  # a safety net against hangs only
TOKEN = make_jwt(aud="api://mcp")


def _config(**overrides: Any) -> ToolingConfiguration:
    return ToolingConfiguration(use_tooling_manifest=False, allow_insecure_http=True, **overrides)


def _server(url: str, token: str = TOKEN, name: str = "srv") -> MCPServerConfig:
    return MCPServerConfig(mcp_server_name=name, url=url, headers={"Authorization": f"Bearer {token}"})


async def _official(url: str, token: str) -> list[Any]:
    async with (
        mcp_http_client_factory(headers={"Authorization": f"Bearer {token}"}) as http,
        streamable_http_client(url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        return list((await session.list_tools()).tools)


@pytest.mark.parametrize(
    ("stateless", "json_response"), [(True, True), (True, False), (False, True), (False, False)]
)
async def test_lists_what_the_official_client_lists_in_every_transport_mode(
    stateless: bool, json_response: bool
) -> None:
    config = EmulatorConfig(mcp_stateless=stateless, mcp_json_response=json_response)
    async with Emulator(config) as emu, McpToolServerConfigurationService(_config()) as service:
        for name in emu.servers:
            url, token = emu.server_url(name), emu.server_token(name, user_id="u")
            official = await _official(url, token)
            emu.recorder.clear()
            ours = await service.get_mcp_client_tools(name, _server(url, token, name))
            assert [t.model_dump() for t in ours] == [t.model_dump() for t in official]
            assert ours  # every emulated server has tools
            # The official client opens the standalone GET event stream of a session the server keeps.
            seen = [(r.method, r.jsonrpc_method) for r in emu.requests_for("mcp") if r.method != "GET"]
            # The session stays in the service's pool for the calls that follow (ended by aclose, when idle).
            assert seen == [
                ("POST", "initialize"),
                ("POST", "notifications/initialized"),
                ("POST", "tools/list"),
            ]
            assert all(r.headers["authorization"] == f"Bearer {token}" for r in emu.requests_for("mcp"))


async def test_list_mcp_tools_caches_per_server_and_token() -> None:
    async with Emulator(EmulatorConfig()) as emu, McpToolServerConfigurationService(_config()) as service:
        url = emu.server_url("mail")
        alice = _server(url, emu.server_token("mail", user_id="alice"), "mail")
        bob = _server(url, emu.server_token("mail", user_id="bob"), "mail")
        first = await service.list_mcp_tools(alice)
        again = await service.list_mcp_tools(alice)
        await service.list_mcp_tools(bob)
        assert [t.name for t in again] == [t.name for t in first]
        listings = [r for r in emu.requests_for("mcp") if r.jsonrpc_method == "tools/list"]
        assert len(listings) == 2  # alice once (then cached), bob on his own
        with pytest.raises(TypeError, match="server must be an MCPServerConfig"):
            await service.list_mcp_tools("mail")  # type: ignore[arg-type]


# -- hostile servers ------------------------------------------------------------------------------------


def _mcp(
    on_list: Any = None,
    *,
    version: str = "2025-06-18",
    headers: dict[str, str] | None = None,
) -> Any:
    """A minimal MCP server behaviour: initialize and notifications as the spec says, tools/list by ``on_list``."""

    async def run(request: Request, writer: asyncio.StreamWriter) -> None:
        message = json.loads(request.body)
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        if "id" not in message:
            writer.write(f"HTTP/1.1 202 Accepted\r\n{extra}Content-Length: 0\r\n\r\n".encode())
        elif message["method"] == "initialize":
            result = {
                "protocolVersion": version,
                "capabilities": {},
                "serverInfo": {"name": "h", "version": "1"},
            }
            data = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
            head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{extra}Content-Length: {len(data)}\r\n\r\n"
            writer.write(head.encode() + data)
        else:
            await on_list(message, request, writer)
            return
        await writer.drain()

    return run


def _json(message_id: Any, payload: dict[str, Any]) -> bytes:
    data = json.dumps({"jsonrpc": "2.0", "id": message_id, **payload}).encode()
    return (
        f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n".encode()
        + data
    )


async def _list(server: HostileServer, **config: Any) -> list[Any]:
    async with McpToolServerConfigurationService(_config(**config)) as service:
        async with asyncio.timeout(SAFETY):
            return await service.get_mcp_client_tools("srv", _server(f"{server.base_url}/mcp"))


async def test_an_sse_answer_is_taken_without_waiting_for_the_stream_to_end() -> None:
    async def answer_then_hold(
        message: dict[str, Any], request: Request, writer: asyncio.StreamWriter
    ) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        ping = b': keep-alive\r\n\r\nevent: message\r\ndata: {"jsonrpc": "2.0", "method": "notifications/progress"}\r\n\r\n'
        answer = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": [TOOL]}}).encode()
        for part in (
            ping,
            b"data: " + answer[:20],
            answer[20:] + b"\r",
            b"\n\r\n",
        ):  # split mid-line and mid-CRLF
            writer.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
            await writer.drain()
        await asyncio.Event().wait()  # the stream never ends

    async with HostileServer() as server:
        server.route("/mcp", _mcp(answer_then_hold))
        tools = await _list(server, request_timeout=5.0)
    assert [t.name for t in tools] == ["echo"]


async def test_a_huge_answer_stops_at_the_size_cap() -> None:
    async def huge(message: dict[str, Any], request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        chunk = b" " * 65536
        while True:  # never ends: only the cap can stop the read
            writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            await writer.drain()

    async with HostileServer() as server:
        server.route("/mcp", _mcp(huge))
        with pytest.raises(McpServerConnectionError, match="larger than 100000 bytes"):
            await _list(server, max_mcp_response_bytes=100_000, request_timeout=5.0)


async def test_a_declared_length_over_the_cap_is_not_read() -> None:
    async def declared(message: dict[str, Any], request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 999999999\r\n\r\n"
        )
        await writer.drain()
        await asyncio.Event().wait()

    async with HostileServer() as server:
        server.route("/mcp", _mcp(declared))
        with pytest.raises(McpServerConnectionError, match="larger than 1000 bytes"):
            await _list(server, max_mcp_response_bytes=1000, request_timeout=5.0)


async def test_a_trickled_answer_fails_at_the_total_deadline() -> None:
    async def trickle(message: dict[str, Any], request: Request, writer: asyncio.StreamWriter) -> None:
        data = _json(message["id"], {"result": {"tools": [TOOL]}})
        for i in range(len(data)):
            writer.write(data[i : i + 1])
            await writer.drain()
            await asyncio.sleep(0.05)  # the peer's pace (each byte resets a per-read timeout)

    async with HostileServer() as server:
        server.route("/mcp", _mcp(trickle))
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(McpServerConnectionError, match=r"did not answer within 0\.3 s"):
            await _list(server, request_timeout=0.3)
        assert loop.time() - started < 3.0  # the whole answer would take ~6 s


async def test_a_json_rpc_error_echoing_the_token_is_scrubbed() -> None:
    async def echo(message: dict[str, Any], request: Request, writer: asyncio.StreamWriter) -> None:
        text = f"denied for {request.headers['authorization']}"
        writer.write(_json(message["id"], {"error": {"code": -32001, "message": text}}))
        await writer.drain()

    async with HostileServer() as server:
        server.route("/mcp", _mcp(echo))
        with pytest.raises(McpServerConnectionError) as caught:
            await _list(server)
    error: BaseException | None = caught.value
    while error is not None:  # the message of every exception in the chain
        assert TOKEN not in str(error)
        assert TOKEN not in repr(error)
        error = error.__cause__ or error.__context__
    assert "-32001" in str(caught.value)


@pytest.mark.parametrize(
    ("answer", "match"),
    [
        (b"not json", "not JSON"),
        (json.dumps({"jsonrpc": "2.0", "id": 999, "result": {}}).encode(), "sent no answer"),
        (json.dumps({"jsonrpc": "2.0", "id": "ID", "result": {"tools": "x"}}).encode(), "no list of tools"),
        (json.dumps({"jsonrpc": "2.0", "id": "ID", "result": [1]}).encode(), "not an object"),
    ],
)
async def test_malformed_answers_fail_with_a_clear_error(answer: bytes, match: str) -> None:
    async def bad(message: dict[str, Any], request: Request, writer: asyncio.StreamWriter) -> None:
        nonlocal answer
        answer = answer.replace(b'"ID"', json.dumps(message["id"]).encode())  # the answer to this request
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(answer)}\r\n\r\n"
        writer.write(head.encode() + answer)
        await writer.drain()

    async with HostileServer() as server:
        server.route("/mcp", _mcp(bad))
        with pytest.raises(McpServerConnectionError, match=match):
            await _list(server)


async def test_an_unusable_tool_definition_is_left_out_with_a_warning_naming_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tools = [{"name": 5}, {"name": "no_schema"}, {"name": "ok", "inputSchema": {"type": "object"}}]

    async def listing(message: dict[str, Any], request: Request, writer: asyncio.StreamWriter) -> None:
        answer = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": tools}}).encode()
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(answer)}\r\n\r\n"
        writer.write(head.encode() + answer)
        await writer.drain()

    async with HostileServer() as server:
        server.route("/mcp", _mcp(listing))
        with caplog.at_level(logging.WARNING):
            assert [t.name for t in await _list(server)] == ["ok"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2, warnings
    assert "'<unnamed>'" in warnings[0]
    assert "'no_schema'" in warnings[1]


async def test_an_unsupported_protocol_version_is_refused() -> None:
    async with HostileServer() as server:
        server.route("/mcp", _mcp(version="1999-01-01"))
        with pytest.raises(McpServerConnectionError, match=r"(?i)unsupported protocol version.*1999-01-01"):
            await _list(server)
    assert [json.loads(r.body)["method"] for r in server.requests] == ["initialize"]


async def test_a_redirect_is_not_followed_and_the_token_stays_home() -> None:
    async with HostileServer() as elsewhere, HostileServer() as server:
        location = f"{elsewhere.base_url}/steal"
        server.route("/mcp", _redirect(location))
        with pytest.raises(McpServerConnectionError, match="HTTP 307"):
            await _list(server)
    assert not elsewhere.requests


def _redirect(location: str) -> Any:
    async def run(request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(
            f"HTTP/1.1 307 Temporary Redirect\r\nLocation: {location}\r\nContent-Length: 0\r\n\r\n".encode()
        )
        await writer.drain()

    return run


async def test_cookies_a_server_sets_are_never_sent_again() -> None:
    async def listing(message: dict[str, Any], request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(_json(message["id"], {"result": {"tools": [TOOL]}}))
        await writer.drain()

    async with HostileServer() as server:
        server.route("/mcp", _mcp(listing, headers={"Set-Cookie": "session=alice-secret; Path=/"}))
        async with McpToolServerConfigurationService(_config()) as service:
            # By name: cookie jars refuse cookies of IP addresses, and the rule must not rest on that.
            url = f"{server.base_url.replace('127.0.0.1', 'localhost')}/mcp"
            await service.get_mcp_client_tools("srv", _server(url, make_jwt(sub="alice")))
            await service.get_mcp_client_tools("srv", _server(url, make_jwt(sub="bob")))
    assert len(server.requests) == 6
    assert not [r for r in server.requests if "cookie" in r.headers]


async def test_servers_of_one_host_share_keep_alive_connections() -> None:
    async def listing(message: dict[str, Any], request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(_json(message["id"], {"result": {"tools": [TOOL]}}))
        await writer.drain()

    async with HostileServer() as server:
        server.route("/mcp", _mcp(listing))
        async with McpToolServerConfigurationService(_config()) as service:
            for index in range(8):  # one after another: each reuses the idle connection
                await service.get_mcp_client_tools(f"s{index}", _server(f"{server.base_url}/mcp"))
    assert len(server.requests) == 10  # one pooled session (same URL and token): 8 listings on it
    # One connection pool for every listing, reused from one listing to the next: the official client
    # sends the initialized notification while tools/list goes out, so two connections, not one.
    assert server.connections <= 2


async def test_a_connection_the_server_drops_is_retried_once_within_the_deadline() -> None:
    dropped: list[str] = []

    async def listing(message: dict[str, Any], request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(_json(message["id"], {"result": {"tools": [TOOL]}}))
        await writer.drain()

    inner = _mcp(listing)

    async def drop_first_notification(request: Request, writer: asyncio.StreamWriter) -> None:
        if "id" not in json.loads(request.body) and not dropped:
            dropped.append("initialized")
            writer.transport.abort()  # as a server closing an idle keep-alive connection we just reused
            return
        await inner(request, writer)

    async with HostileServer() as server:
        server.route("/mcp", drop_first_notification)
        tools = await _list(server)
    assert [t.name for t in tools] == ["echo"]
    methods = [json.loads(r.body)["method"] for r in server.requests]
    # The dropped notification is sent again on a fresh connection (none of it reached the server): the
    # session stays, no second initialize (the listing may go out before or after the resend).
    assert sorted(methods) == [
        "initialize",
        "notifications/initialized",
        "notifications/initialized",
        "tools/list",
    ]
    assert methods[:2] == ["initialize", "notifications/initialized"]


async def test_a_server_that_always_drops_fails_after_one_resend_and_one_new_session() -> None:
    async def drop(request: Request, writer: asyncio.StreamWriter) -> None:
        writer.transport.abort()

    async with HostileServer() as server:
        server.route("/mcp", drop)
        with pytest.raises(McpServerConnectionError, match="srv"):
            await _list(server)
    # Each session's initialize is sent once more on a fresh connection, and the session opened once more:
    # 4 requests, bounded (not a loop).
    assert [json.loads(r.body)["method"] for r in server.requests] == ["initialize"] * 4
