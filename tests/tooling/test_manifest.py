"""Development discovery from ToolingManifest.json with tokens from the environment."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from agents_a365.tooling import (
    McpToolServerConfigurationService,
    ToolingConfiguration,
    ToolServerDiscoveryError,
)
from support.turns import make_turn_context


def dev_config(path: Path) -> ToolingConfiguration:
    return ToolingConfiguration(
        use_tooling_manifest=True, manifest_path=path, mcp_platform_endpoint="https://platform.test/"
    )


@pytest.fixture(autouse=True)
def _no_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BEARER_TOKEN", "BEARER_TOKEN_MAILTOOLS", "BEARER_TOKEN_CALENDAR"):
        monkeypatch.delenv(name, raising=False)


async def test_manifest_entries_with_default_urls_and_env_tokens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    manifest = tmp_path / "ToolingManifest.json"
    manifest.write_text(
        json.dumps(
            {
                "mcpServers": [
                    {"mcpServerName": "mailTools", "mcpServerUniqueName": "mcp_MailTools"},
                    {
                        "mcpServerUniqueName": "calendar",
                        "audience": "api://cal",
                        "scope": "Calendars.Read",
                        "publisher": "Contoso",
                        "url": "https://cal.test/mcp",
                    },
                    {"publisher": "no name: skipped"},
                ]
            }
        )
    )
    monkeypatch.setenv("BEARER_TOKEN", "shared-token")
    monkeypatch.setenv("BEARER_TOKEN_MAILTOOLS", "Bearer mail-token")
    async with McpToolServerConfigurationService(dev_config(manifest)) as svc:
        with caplog.at_level(logging.WARNING):
            servers = await svc.list_tool_servers(make_turn_context(), None, None)
    mail, calendar = servers
    assert mail.mcp_server_name == "mailTools"
    assert mail.mcp_server_unique_name == "mcp_MailTools"
    assert mail.url == "https://platform.test/agents/servers/mailTools/"
    assert mail.headers["Authorization"] == "Bearer mail-token"
    assert calendar.url == "https://cal.test/mcp"
    assert (calendar.audience, calendar.scope, calendar.publisher) == (
        "api://cal",
        "Calendars.Read",
        "Contoso",
    )
    assert calendar.mcp_server_unique_name == calendar.mcp_server_name == "calendar"
    assert calendar.headers["Authorization"] == "Bearer shared-token"
    assert "BEARER_TOKEN_CALENDAR is not set" in caplog.text
    assert "shared-token" not in caplog.text


async def test_bare_list_manifest_without_tokens(tmp_path: Path) -> None:
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps([{"mcpServerName": "notes"}]))
    async with McpToolServerConfigurationService(dev_config(manifest)) as svc:
        [server] = await svc.list_tool_servers(make_turn_context(), None, None)
    assert "Authorization" not in server.headers
    assert server.headers["x-ms-channel-id"] == "msteams"


async def test_missing_manifest_means_no_servers_and_one_loud_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    absent = tmp_path / "absent.json"
    with caplog.at_level(logging.DEBUG, logger="agents_a365.tooling"):
        async with McpToolServerConfigurationService(dev_config(absent)) as svc:
            assert await svc.list_tool_servers(make_turn_context(), None, None) == []
            assert await svc.list_tool_servers(make_turn_context(), None, None) == []  # the next turn
    [warning] = [r for r in caplog.records if r.levelno == logging.WARNING]
    message = warning.getMessage()
    assert str(absent.resolve()) in message  # the file looked for
    assert "NO MCP tools" in message
    assert "A365_USE_TOOLING_MANIFEST=false" in message  # how to use the gateway instead
    assert "A365_REQUIRE_TOOLING_MANIFEST=true" in message  # how to make it an error


async def test_a_required_manifest_that_is_missing_is_an_error(tmp_path: Path) -> None:
    config = ToolingConfiguration(
        use_tooling_manifest=True, manifest_path=tmp_path / "absent.json", require_tooling_manifest=True
    )
    async with McpToolServerConfigurationService(config) as svc:
        with pytest.raises(ToolServerDiscoveryError, match=r"no tooling manifest at .*absent\.json"):
            await svc.list_tool_servers(make_turn_context(), None, None)


@pytest.mark.parametrize("content", ["{not json", '{"servers": []}', '"text"'])
async def test_unreadable_manifest_is_a_clear_error(tmp_path: Path, content: str) -> None:
    manifest = tmp_path / "ToolingManifest.json"
    manifest.write_text(content)
    async with McpToolServerConfigurationService(dev_config(manifest)) as svc:
        with pytest.raises(ToolServerDiscoveryError, match=r"ToolingManifest\.json"):
            await svc.list_tool_servers(make_turn_context(), None, None)


async def test_without_a_turn_development_servers_carry_the_given_opaque_token_and_no_identity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Microsoft's samples: list_tool_servers(agentic_app_id=..., auth_token=...) with no turn; a development
    # token that is not a JWT is sent as given (no expiry known, said at DEBUG).
    manifest = tmp_path / "ToolingManifest.json"
    manifest.write_text(json.dumps({"mcpServers": [{"mcpServerName": "mail"}]}))
    monkeypatch.delenv("BEARER_TOKEN", raising=False)
    async with McpToolServerConfigurationService(dev_config(manifest)) as svc:
        with caplog.at_level(logging.DEBUG, logger="agents_a365.tooling.service"):
            [server] = await svc.list_tool_servers(agentic_app_id="my-agent", auth_token="opaque-dev-token")
        assert server.headers["Authorization"] == "Bearer opaque-dev-token"
        assert server.identity is None
        assert "not a JWT" in caplog.text
        assert "opaque-dev-token" not in caplog.text
        [server] = await svc.list_tool_servers(None, None, None)  # type: ignore[arg-type]
        assert "Authorization" not in server.headers  # no token anywhere: none sent
