from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

import httpx
from mcp import ClientSession

from agents_a365.emulator import Emulator, Headers

McpSessionFactory = Callable[..., AbstractAsyncContextManager[ClientSession]]


def test_headers_case_insensitive() -> None:
    headers = Headers([("X-Trace", "1"), ("x-trace", "2"), ("Accept", "a")])
    assert headers["x-TRACE"] == "1"
    assert headers.get_all("X-TRACE") == ["1", "2"]
    assert "ACCEPT" in headers
    assert list(headers) == ["X-Trace", "Accept"]
    assert headers.get("missing") is None


async def test_requests_recorded_in_python_and_over_http(
    emulator: Emulator,
    http: httpx.AsyncClient,
    platform_headers: dict[str, str],
    mcp_session: McpSessionFactory,
) -> None:
    await http.get(
        emulator.gateway_url("agent-x") + "?v=1&v=2", headers={**platform_headers, "X-Custom": "abc"}
    )
    # The exact bytes (httpx's json= spacing differs between versions): the body is recorded as sent.
    await http.post(emulator.rtp_url, content=b'{"bad":true}', headers={"Content-Type": "application/json"})
    async with mcp_session(emulator.server_url("mail"), emulator.platform_token()) as session:
        await session.call_tool("list_emails", {"limit": 1})
    await http.get(f"{emulator.base_url}/nowhere")

    gateway = emulator.requests_for("gateway")
    assert len(gateway) == 1
    g = gateway[0]
    assert (g.method, g.path, g.status, g.server) == ("GET", "/agents/v2/agent-x/mcpServers", 200, None)
    assert g.query_params == {"v": ["1", "2"]}
    assert g.headers["x-custom"] == g.headers["X-CUSTOM"] == "abc"
    assert g.headers["Authorization"] == platform_headers["Authorization"]

    rtp = emulator.requests_for("rtp")[0]
    assert rtp.json == {"bad": True}
    assert rtp.is_json
    assert rtp.body == b'{"bad":true}'
    assert rtp.status == 400

    methods = [r.jsonrpc_method for r in emulator.requests_for("mcp:mail")]
    assert methods[:3] == ["initialize", "notifications/initialized", "tools/call"]
    call = emulator.requests_for("mcp", server="mail")[2]
    assert call.json["params"] == {"name": "list_emails", "arguments": {"limit": 1}}
    assert emulator.requests_for("unknown")[0].status == 404

    timestamps = [r.timestamp for r in emulator.requests]
    assert timestamps == sorted(timestamps)

    listed = (await http.get(f"{emulator.base_url}/_emulator/requests")).json()
    assert len(listed) == len(emulator.requests)  # control requests are not recorded
    mcp_only = (await http.get(f"{emulator.base_url}/_emulator/requests", params={"route": "mcp"})).json()
    assert {r["route"] for r in mcp_only} == {"mcp"}
    assert [r["jsonrpcMethod"] for r in mcp_only][:3] == methods[:3]
    assert mcp_only[2]["json"]["method"] == "tools/call"
    gateway_http = (await http.get(f"{emulator.base_url}/_emulator/requests?route=gateway")).json()[0]
    assert ["x-custom", "abc"] in [[k.lower(), v] for k, v in gateway_http["headers"]]

    assert (await http.delete(f"{emulator.base_url}/_emulator/requests")).status_code == 204
    assert emulator.requests == []
    assert (await http.get(f"{emulator.base_url}/_emulator/requests")).json() == []


async def _raw_post(host: str, port: int, path: str, body: bytes) -> bytes:
    """One HTTP/1.1 request over a fresh connection (httpx's pool is far slower than the server here)."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        head = f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        writer.write(f"{head}Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
        await writer.drain()
        return await reader.read()
    finally:
        writer.close()
        await writer.wait_closed()


async def test_recording_under_1000_concurrent_requests(emulator: Emulator) -> None:
    url = httpx.URL(emulator.rtp_url)
    assert url.port is not None
    responses = await asyncio.wait_for(
        asyncio.gather(*(_raw_post(url.host, url.port, url.path, b'{"n": %d}' % i) for i in range(1000))),
        timeout=30,
    )
    assert {r.split(b"\r\n", 1)[0] for r in responses} == {b"HTTP/1.1 400 Bad Request"}
    recorded = emulator.requests_for("rtp")
    assert len(recorded) == 1000
    assert sorted(r.json["n"] for r in recorded) == list(range(1000))
    assert len({r.index for r in recorded}) == 1000
    assert {r.status for r in recorded} == {400}


async def test_reset_clears_recordings_faults_and_state(
    emulator: Emulator, http: httpx.AsyncClient, mcp_session: McpSessionFactory
) -> None:
    from agents_a365.emulator import Fault

    async with mcp_session(emulator.server_url("mail"), emulator.platform_token()) as session:
        await session.call_tool("send_email", {"to": "a@b.example", "subject": "s", "body": "b"})
    emulator.faults.set("rtp", Fault(status=500))
    assert emulator.servers["mail"].state.sent
    emulator.reset()
    assert emulator.requests == []
    assert emulator.servers["mail"].state.sent == []
    assert len(emulator.servers["mail"].state.inbox) == 3
    assert emulator.faults.get("rtp") is None
    servers = (await http.get(f"{emulator.base_url}/_emulator/servers")).json()
    assert servers["mail"]["state"]["sent"] == []
