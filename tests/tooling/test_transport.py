"""The core's own HTTP client (gateway, threat protection): proxies from the environment, no cookies,
keep-alive reuse, and a dropped connection reported as one (not as a timeout).

Real sockets on 127.0.0.1: the emulator, a hostile server, and a small forward proxy that records the
request line of everything it forwards.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator
from agents_a365.tooling import (
    McpToolServerConfigurationService,
    ToolingConfiguration,
    ToolServerDiscoveryError,
)
from agents_a365.tooling._transport import core_client
from agents_a365.tooling.extensibility import mcp_http_client_factory, shared_ssl_context
from support.hostile_server import HostileServer, Request, behaviours
from support.jwt import make_jwt
from support.platform import production_config
from support.turns import make_turn_context

SAFETY = 10.0  # a safety net against hangs only
TOKEN = make_jwt(appid=DEFAULT_AGENT_ID)
_HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "content-length", "host"}


class ForwardProxy:
    """An HTTP forward proxy on 127.0.0.1 that records ``METHOD absolute-URL`` of each request it forwards."""

    def __init__(self) -> None:
        self.forwarded: list[str] = []
        self.url = ""

    async def _forward(self, request: web.Request) -> web.Response:
        target = request.raw_path  # absolute-form: "http://host:port/path?query"
        self.forwarded.append(f"{request.method} {target}")
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP}
        async with (
            aiohttp.ClientSession(auto_decompress=False) as session,
            session.request(request.method, target, headers=headers, data=await request.read()) as answer,
        ):
            body = await answer.read()
            kept = {k: v for k, v in answer.headers.items() if k.lower() not in _HOP_BY_HOP}
            return web.Response(status=answer.status, headers=kept, body=body)

    async def __aenter__(self) -> ForwardProxy:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._runner.cleanup()


@pytest.fixture
async def proxy() -> AsyncIterator[ForwardProxy]:
    async with ForwardProxy() as running:
        yield running


def _use_proxy(monkeypatch: pytest.MonkeyPatch, url: str, no_proxy: str = "") -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, url)
    for name in ("ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    # Set explicitly: a default NO_PROXY of the machine may exempt 127.0.0.1.
    monkeypatch.setenv("NO_PROXY", no_proxy)
    monkeypatch.setenv("no_proxy", no_proxy)


async def _gateway_and_rtp(emulator: Emulator) -> str:
    """Discovery, one server listed on the service's pooled MCP session, one send; the server's URL."""
    turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
    async with McpToolServerConfigurationService(production_config(emulator)) as service:
        servers = await service.list_tool_servers(turn, emulator.authorization(), "agentic")
        assert servers
        assert await service.list_mcp_tools(servers[0])
        result = await service.send_chat_history(turn, [])
        assert result.succeeded, result
        return servers[0].url


async def test_the_gateway_and_threat_protection_go_through_the_proxy_of_the_environment(
    emulator: Emulator, proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    _use_proxy(monkeypatch, proxy.url)
    async with asyncio.timeout(SAFETY):
        mcp_url = await _gateway_and_rtp(emulator)
        # The MCP clients (httpx's own reading of the environment) take the same way.
        async with mcp_http_client_factory() as mcp_client:
            await mcp_client.get(f"{emulator.base_url}/mcp-proxy-check")
    base = emulator.base_url
    gets = [line for line in proxy.forwarded if line.startswith(f"GET {base}/") and "mcpServers" in line]
    assert len(gets) == 1, proxy.forwarded
    assert f"POST {base}/agents/real-time-threat-protection/chat-message" in proxy.forwarded
    assert f"GET {base}/mcp-proxy-check" in proxy.forwarded
    # The pooled MCP sessions (listings, both extensions' calls) too: their clients share one transport,
    # which httpx does not route by the environment by itself.
    assert f"POST {mcp_url}" in proxy.forwarded


async def test_a_callers_own_request_on_the_services_client_takes_the_proxy_too(
    emulator: Emulator, proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    _use_proxy(monkeypatch, proxy.url)
    async with (
        asyncio.timeout(SAFETY),
        McpToolServerConfigurationService(production_config(emulator)) as service,
    ):
        await service.http_client.get(f"{emulator.base_url}/own-request")
    assert proxy.forwarded == [f"GET {emulator.base_url}/own-request"]


async def test_no_proxy_exempts_a_host_as_it_does_for_the_mcp_clients(
    emulator: Emulator, proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    _use_proxy(monkeypatch, proxy.url, no_proxy="localhost,127.0.0.1")
    async with asyncio.timeout(SAFETY):
        await _gateway_and_rtp(emulator)
        async with mcp_http_client_factory() as mcp_client:
            await mcp_client.get(f"{emulator.base_url}/mcp-proxy-check")
    assert proxy.forwarded == []


@pytest.mark.parametrize(
    ("url", "proxy"),
    [
        ("https://gateway.example.com/x", None),  # a subdomain of a NO_PROXY name
        ("https://example.com/x", None),
        ("https://notexample.com/x", "http://proxy.test:3128"),  # a suffix, not a subdomain
        ("http://a.internal/x", None),  # ".internal": its subdomains
        ("http://internal/x", "http://plain.test:8080"),
        ("http://10.1.2.3:8080/x", None),
        ("http://10.1.2.4/x", "http://plain.test:8080"),  # HTTP_PROXY without a scheme: http://
    ],
)
def test_the_proxy_of_a_url_is_chosen_as_httpx_chooses_it(
    monkeypatch: pytest.MonkeyPatch, url: str, proxy: str | None
) -> None:
    _use_proxy(monkeypatch, "", no_proxy="Example.com, .internal,10.1.2.3")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.test:3128")
    monkeypatch.setenv("https_proxy", "http://proxy.test:3128")
    monkeypatch.setenv("HTTP_PROXY", "plain.test:8080")
    monkeypatch.setenv("http_proxy", "plain.test:8080")
    client = core_client(verify=shared_ssl_context(), max_connections=1, timeout=1.0)
    assert client.proxy_for(url) == proxy
    monkeypatch.setenv("NO_PROXY", "*")
    monkeypatch.setenv("no_proxy", "*")
    assert core_client(verify=shared_ssl_context(), max_connections=1, timeout=1.0).proxy_for(url) is None


async def test_without_a_proxy_the_core_uses_its_aiohttp_session_directly_and_closes_it(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
    async with asyncio.timeout(SAFETY):
        async with McpToolServerConfigurationService(production_config(emulator)) as service:
            assert await service.list_tool_servers(turn, emulator.authorization(), "agentic")
            assert (await service.send_chat_history(turn, [])).succeeded
            direct = service.http_client.direct
            # httpx's objects cost as much CPU as the floor's whole send (docs/performance.md, "Threat-protection sends")
            assert direct is not None
            assert direct.cache_info().currsize == 1  # type: ignore[attr-defined]
        assert direct().closed


def _config(server: HostileServer, host: str = "127.0.0.1") -> ToolingConfiguration:
    return ToolingConfiguration(
        mcp_platform_endpoint=server.base_url.replace("127.0.0.1", host),
        use_tooling_manifest=False,
        request_timeout=SAFETY / 2,
    )


async def test_cookies_a_server_sets_are_never_sent_again() -> None:
    async with HostileServer() as server:
        server.route(
            "/chat-message", behaviours.respond(200, {}, {"Set-Cookie": "session=alice-secret; Path=/"})
        )
        # By name: cookie jars refuse cookies of IP addresses, and the rule must not rest on that.
        async with McpToolServerConfigurationService(_config(server, "localhost")) as service:
            for _ in range(3):
                assert (await service.send_chat_history(_turn(), [])).succeeded
            assert not service.http_client.cookies  # nothing kept that a later request could carry
    assert len(server.requests) == 3
    assert not [r for r in server.requests if "cookie" in r.headers]


async def test_sends_one_after_another_reuse_one_keep_alive_connection() -> None:
    async with HostileServer() as server:
        server.route("/chat-message", behaviours.respond(200, {}))
        async with McpToolServerConfigurationService(_config(server)) as service:
            for _ in range(6):
                assert (await service.send_chat_history(_turn(), [])).succeeded
    assert len(server.requests) == 6
    assert server.connections == 1


async def _drop_at_once(request: Request, writer: Any) -> None:
    writer.transport.abort()


async def _not_http(request: Request, writer: Any) -> None:
    writer.write(b"SPDY/9 what\r\n\r\n")
    await writer.drain()
    writer.transport.abort()


async def _drop_mid_body(request: Request, writer: Any) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n[{")
    await writer.drain()
    writer.transport.abort()


@pytest.mark.parametrize(
    ("behaviour", "error"),
    [(_drop_at_once, "RemoteProtocolError"), (_drop_mid_body, "ReadError"), (_not_http, "ReadError")],
)
async def test_a_dropped_connection_is_reported_as_dropped_not_as_a_timeout(
    behaviour: Any, error: str
) -> None:
    async with HostileServer() as server:
        server.route("/mcpServers", behaviour)
        async with McpToolServerConfigurationService(_config(server)) as service:
            with pytest.raises(ToolServerDiscoveryError) as caught:
                await service.list_tool_servers(_turn(), None, None, auth_token=TOKEN)
    assert f"unreachable: {error}" in str(caught.value)


def _turn() -> Any:
    return make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
