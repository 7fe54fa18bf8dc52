from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from agents_a365.emulator import (
    PLATFORM_AUDIENCE,
    PLATFORM_AUDIENCE_URI,
    Emulator,
    EmulatorConfig,
    ServerConfig,
    TokenIssuer,
)


async def test_gateway_lists_default_servers(
    emulator: Emulator, http: httpx.AsyncClient, platform_headers: dict[str, str]
) -> None:
    response = await http.get(emulator.gateway_url("any-agent"), headers=platform_headers)
    assert response.status_code == 200
    servers = response.json()["mcpServers"]
    assert [s["mcpServerName"] for s in servers] == ["mail", "calendar"]
    mail, calendar = servers
    assert mail == {
        "mcpServerName": "mail",
        "mcpServerUniqueName": "mcp_MailTools",
        "url": f"{emulator.base_url}/agents/servers/mail/",
        "audience": None,
        "scope": None,
        "publisher": "Microsoft",
    }
    assert calendar["audience"] == "api://a365-calendar"
    assert calendar["scope"] == "Calendars.ReadWrite"
    assert calendar["url"] == emulator.server_url("calendar")


async def test_gateway_accepts_api_uri_audience(emulator: Emulator, http: httpx.AsyncClient) -> None:
    token = emulator.issuer.mint(PLATFORM_AUDIENCE_URI, app_id="a")
    response = await http.get(emulator.gateway_url(), headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200


@pytest.mark.parametrize(
    ("make_header", "reason"),
    [
        (lambda emu: None, "missing_token"),
        (lambda emu: "Basic abc", "missing_token"),
        (lambda emu: "Bearer garbage", "malformed"),
        (
            lambda emu: (
                "Bearer "
                + TokenIssuer("another-secret-of-at-least-32-bytes").mint(PLATFORM_AUDIENCE, app_id="a")
            ),
            "bad_signature",
        ),
        (lambda emu: "Bearer " + emu.platform_token(expires_in=-1), "expired"),
        (lambda emu: "Bearer " + emu.issuer.mint("api://a365-calendar", app_id="a"), "wrong_audience"),
    ],
)
async def test_gateway_401(
    emulator: Emulator, http: httpx.AsyncClient, make_header: object, reason: str
) -> None:
    header = make_header(emulator)  # type: ignore[operator]
    headers = {"Authorization": header} if header else {}
    response = await http.get(emulator.gateway_url(), headers=headers)
    assert response.status_code == 401
    assert response.json()["reason"] == reason
    assert response.json()["message"]
    assert "bearer" in response.headers["www-authenticate"].lower()


async def test_gateway_list_shape_and_per_agent_config(http: httpx.AsyncClient) -> None:
    config = EmulatorConfig(
        servers=[
            ServerConfig(name="mail", kind="mail", publisher="Contoso"),
            ServerConfig(name="calendar", kind="calendar"),
            ServerConfig(name="notes_1", kind="notes"),
        ],
        agents={"agent-a": ["notes_1"], "agent-b": []},
        default_servers=["mail"],
        gateway_shape="list",
    )
    async with Emulator(config) as emu:
        headers = {"Authorization": f"Bearer {emu.platform_token()}"}
        a = (await http.get(emu.gateway_url("agent-a"), headers=headers)).json()
        b = (await http.get(emu.gateway_url("agent-b"), headers=headers)).json()
        other = (await http.get(emu.gateway_url("someone-else"), headers=headers)).json()
        assert isinstance(a, list)
        assert [s["mcpServerName"] for s in a] == ["notes_1"]
        assert a[0]["mcpServerUniqueName"] == "mcp_NotesTools_notes_1"
        assert b == []
        assert [(s["mcpServerName"], s["publisher"]) for s in other] == [("mail", "Contoso")]
        emu.config.gateway_shape = "wrapped"  # changeable at runtime
        wrapped = (await http.get(emu.gateway_url("agent-a"), headers=headers)).json()
        assert [s["mcpServerName"] for s in wrapped["mcpServers"]] == ["notes_1"]


def test_config_rejects_unknown_server_reference() -> None:
    with pytest.raises(ValueError, match="unknown servers"):
        EmulatorConfig(agents={"x": ["nope"]})


def test_config_from_file(tmp_path: Path) -> None:
    path = tmp_path / "emu.json"
    path.write_text(
        json.dumps(
            {
                "servers": [
                    {"name": "mail", "kind": "mail"},
                    {"name": "cal", "kind": "calendar", "audience": "api://my-cal", "scope": "Cal.Read"},
                    {"name": "notes", "kind": "notes", "publisher": "Me"},
                ],
                "gateway_shape": "list",
            }
        )
    )
    config = EmulatorConfig.from_file(path)
    assert [s.audience for s in config.servers] == [None, "api://my-cal", None]
    assert config.gateway_shape == "list"
