"""Token hygiene and input safety: tokens in no log/error/repr, https only, validated names and headers.

The fault-matrix scenarios are each checked for token leaks by the ``guard`` fixture; the tests here
prove that the guard's checks bite, and cover reprs, URL schemes, server names and header injection.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from pathlib import Path
from typing import Any

import pytest
from agents import Agent
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator, Fault
from agents_a365.tooling import (
    McpToolServerConfigurationService,
    TokenAcquisitionError,
    ToolingConfiguration,
    ToolServerConfigurationError,
)
from agents_a365.tooling.extensions.langchain import McpToolRegistrationService as LangChainService
from agents_a365.tooling.extensions.openai import McpToolRegistrationService as OpenAIService
from support.guard import AUTH_HANDLER, Guard, config
from support.jwt import make_jwt
from support.turns import make_turn_context

pytestmark = pytest.mark.filterwarnings("ignore:Use `streamable_http_client` instead:DeprecationWarning")


# -- the guard's checks bite ---------------------------------------------------------------------


async def test_guard_finds_a_token_in_a_log_record_an_error_or_a_repr(emulator: Emulator) -> None:
    for leak in ("log", "error", "cause", "repr"):
        checker = Guard()
        checker.start()
        try:
            token = checker.watch(emulator).platform_token()
            assert checker.token_leaks() == []
            if leak == "log":
                logging.getLogger("anything").debug("sending %s", {"Authorization": f"Bearer {token}"})
            elif leak == "error":
                checker.error(RuntimeError(f"401 for {token}"))
            elif leak == "cause":
                try:
                    try:
                        raise ValueError(token.rsplit(".", 1)[-1])  # the signature alone counts
                    except ValueError as inner:
                        raise RuntimeError("clean message") from inner
                except RuntimeError as outer:
                    checker.error(outer)
            else:
                checker.repr_of({"headers": {"Authorization": token}})
            assert checker.token_leaks(), leak
        finally:
            checker.stop_capture()


async def test_guard_finds_a_leftover_task_and_an_open_socket() -> None:
    checker = Guard()
    checker.start()
    try:
        task = asyncio.create_task(asyncio.sleep(60), name="forgotten")
        sock = socket.socket()
        with pytest.raises(AssertionError, match="forgotten"):
            await checker.assert_clean(check_tokens=False)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        with pytest.raises(AssertionError, match="file descriptors left open"):
            await checker.assert_clean(check_tokens=False)
        sock.close()
        await checker.assert_clean(check_tokens=False)
    finally:
        checker.stop_capture()


# -- reprs and error texts -----------------------------------------------------------------------


async def test_no_repr_of_a_turns_objects_shows_a_token(
    emu: Emulator, guard: Guard, turn: TurnContext
) -> None:
    async with (
        McpToolServerConfigurationService(config(emu)) as tooling,
        LangChainService(configuration=config(emu)) as lc,
        OpenAIService(configuration=config(emu)) as oa,
    ):
        servers = await tooling.list_tool_servers(turn, emu.authorization(), AUTH_HANDLER)
        assert all(s.headers["Authorization"].startswith("Bearer ey") for s in servers)
        guard.repr_of(
            servers,
            tooling,
            tooling.configuration,
            lc,
            oa,
            str(servers),
            [s.model_dump(exclude={"headers"}) for s in servers],
        )
        async with lc.mcp_tools(emu.authorization(), AUTH_HANDLER, turn) as toolset:
            guard.repr_of(toolset, toolset.servers, toolset.tools())
        async with oa.connected_agent(Agent(name="a"), emu.authorization(), AUTH_HANDLER, turn) as agent:
            guard.repr_of(agent.mcp_servers, [s.name for s in agent.mcp_servers])
    assert all("<redacted>" in repr(s) for s in servers)


class _LeakyAuthorization:
    """A token exchange whose failure message quotes the token it was given (foreign code does)."""

    def __init__(self, token: str) -> None:
        self.token = token

    async def exchange_token(
        self, context: Any, scopes: Any = None, auth_handler_id: Any = None, **_: Any
    ) -> Any:
        raise RuntimeError(f"exchange refused: assertion Bearer {self.token} is invalid (token={self.token})")


async def test_foreign_error_text_quoting_a_token_is_scrubbed(
    emu: Emulator, guard: Guard, turn: TurnContext
) -> None:
    token = emu.platform_token()
    async with McpToolServerConfigurationService(config(emu)) as svc:
        with guard.raises(TokenAcquisitionError) as caught:
            await svc.list_tool_servers(turn, _LeakyAuthorization(token), AUTH_HANDLER)
    assert "exchange refused" in str(caught[0])
    assert "<redacted" in str(caught[0])
    # The cause (foreign code's own exception) keeps its text: only our message is ours to scrub.
    guard.errors.remove(caught[0])
    guard.error(RuntimeError(str(caught[0])))


# -- https only ------------------------------------------------------------------------------------


def _manifest(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "ToolingManifest.json"
    path.write_text(json.dumps({"mcpServers": [{"mcpServerName": "mail", "url": url}]}), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "url",
    [
        "http://mcp.contoso.example/mail/",
        "http://10.0.0.5/mail/",
        "ftp://mcp.contoso.example/mail/",
        "ws://mcp.contoso.example/mail/",
        "file:///etc/passwd",
        "https://user:secret@mcp.contoso.example/mail/",
        "mcp.contoso.example/mail",
    ],
)
async def test_manifest_url_that_would_expose_a_token_is_refused(tmp_path: Path, url: str) -> None:
    configuration = ToolingConfiguration(use_tooling_manifest=True, manifest_path=_manifest(tmp_path, url))
    async with McpToolServerConfigurationService(configuration) as svc:
        with pytest.raises(ToolServerConfigurationError, match="MCP server 'mail'"):
            await svc.list_tool_servers(
                make_turn_context(), None, None, auth_token=make_jwt()
            )  # a valid token: this test is about the URL


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:9/mail/", "http://localhost:9/mail/", "http://[::1]:9/mail/"]
)
async def test_plain_http_to_loopback_is_allowed(tmp_path: Path, url: str) -> None:
    configuration = ToolingConfiguration(use_tooling_manifest=True, manifest_path=_manifest(tmp_path, url))
    async with McpToolServerConfigurationService(configuration) as svc:
        [server] = await svc.list_tool_servers(
            make_turn_context(), None, None, auth_token=make_jwt()
        )  # a valid token: this test is about the URL
    assert server.url == url


async def test_allow_insecure_http_permits_plain_http_for_development(tmp_path: Path) -> None:
    url = "http://mcp.contoso.example/mail/"
    configuration = ToolingConfiguration(
        use_tooling_manifest=True, manifest_path=_manifest(tmp_path, url), allow_insecure_http=True
    )
    async with McpToolServerConfigurationService(configuration) as svc:
        [server] = await svc.list_tool_servers(
            make_turn_context(), None, None, auth_token=make_jwt()
        )  # a valid token: this test is about the URL
    assert server.url == url
    # Other schemes stay refused even then.
    configuration = ToolingConfiguration(
        use_tooling_manifest=True, manifest_path=_manifest(tmp_path, "ftp://x/"), allow_insecure_http=True
    )
    async with McpToolServerConfigurationService(configuration) as svc:
        with pytest.raises(ToolServerConfigurationError):
            await svc.list_tool_servers(
                make_turn_context(), None, None, auth_token=make_jwt()
            )  # a valid token: this test is about the URL


@pytest.mark.parametrize(
    "url", ["ws://127.0.0.1/mcp", "file:///tmp/mcp", "http://example.com/mcp", "https://u:p@h/x"]
)
async def test_gateway_entry_with_a_token_unsafe_url_is_refused_before_any_mcp_request(
    emu: Emulator, guard: Guard, turn: TurnContext, url: str
) -> None:
    emu.faults.set("gateway", Fault(body={"mcpServers": [{"mcpServerName": "mail", "url": url}]}))
    async with McpToolServerConfigurationService(config(emu)) as svc:
        with guard.raises(ToolServerConfigurationError):
            await svc.list_tool_servers(turn, emu.authorization(), AUTH_HANDLER)
    assert emu.requests_for("mcp") == []


async def test_platform_endpoint_over_plain_http_to_a_remote_host_gets_no_token(
    turn: TurnContext, emulator: Emulator
) -> None:
    configuration = ToolingConfiguration(
        mcp_platform_endpoint="http://agent365.contoso.example", use_tooling_manifest=False
    )
    async with McpToolServerConfigurationService(configuration) as svc:
        with pytest.raises(
            ToolServerConfigurationError, match="tooling gateway: refusing to send a token over plain http"
        ):
            await svc.list_tool_servers(turn, emulator.authorization(), AUTH_HANDLER)


# -- names and headers -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "../admin",
        "mail/../../admin",
        "%2e%2e",
        "mail#fragment",
        "mail@evil.example",
        "evil.example:443",
        "http://evil.example",
        "mail\r\nX-Injected: 1",
        "ma\u0456l",  # Cyrillic i: looks like "mail"
        "",
    ],
)
async def test_server_names_that_could_change_the_url_are_refused(
    emu: Emulator, guard: Guard, turn: TurnContext, name: str
) -> None:
    emu.faults.set(
        "gateway", Fault(body={"mcpServers": [{"mcpServerName": "mail"}, {"mcpServerName": name}]})
    )
    async with McpToolServerConfigurationService(config(emu)) as svc:
        if not name.strip():  # no name at all: the entry is skipped (with a warning), not an error
            servers = await svc.list_tool_servers(turn, emu.authorization(), AUTH_HANDLER)
            assert [s.mcp_server_name for s in servers] == ["mail"]
            return
        with guard.raises(ToolServerConfigurationError) as caught:
            await svc.list_tool_servers(turn, emu.authorization(), AUTH_HANDLER)
    assert "invalid MCP server name" in str(caught[0])


async def test_agent_id_in_the_gateway_url_is_one_quoted_segment(emu: Emulator, guard: Guard) -> None:
    turn = make_turn_context(agentic_app_id="../../admin?x=1#y")
    async with McpToolServerConfigurationService(config(emu)) as svc:
        with guard.raises(Exception):
            await svc.list_tool_servers(turn, emu.authorization(), AUTH_HANDLER)
    [request] = emu.requests
    # Sent percent-encoded as one segment (the server decodes it): no query, no fragment, no ".." resolved.
    assert request.path == "/agents/v2/../../admin?x=1#y/mcpServers"
    assert request.query == ""


async def test_header_values_with_cr_or_lf_never_go_out(emu: Emulator, guard: Guard) -> None:
    evil = "\r\nX-Injected: yes\r\n"
    turn = make_turn_context(
        agentic_app_id=DEFAULT_AGENT_ID,
        channel_id=f"msteams:email{evil}",
        blueprint_id=f"blueprint{evil}",
        text=f"hello{evil}",
    )
    async with LangChainService(configuration=config(emu)) as lc:
        async with lc.mcp_tools(emu.authorization(), AUTH_HANDLER, turn, options=None) as toolset:
            tools = {t.name: t for t in toolset.tools()}
            await tools["list_emails"].ainvoke({})
        from agents_a365.tooling import ToolOptions

        result = await lc.send_chat_history_from_messages(
            turn, [], options=ToolOptions(orchestrator_name=f"LC{evil}")
        )
    assert result.succeeded
    routes = {r.route for r in emu.requests}
    assert {"gateway", "mcp", "rtp"} <= routes
    for request in emu.requests:
        assert "x-injected" not in request.headers
        for name, value in request.headers.items():
            assert "\r" not in value, (request.route, name)
            assert "\n" not in value, (request.route, name)
    assert emu.requests_for("rtp")[0].headers["x-ms-agentid"] == "blueprintX-Injected: yes"
