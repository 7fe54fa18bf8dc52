from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from agents_a365.emulator.__main__ import main


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_banner(process: subprocess.Popen[str], deadline: float) -> list[str]:
    assert process.stdout is not None
    lines: list[str] = []
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if line.startswith("Press Ctrl-C"):
            return lines
    raise AssertionError(f"CLI did not print its banner; got {lines!r}")


@pytest.mark.parametrize("use_module", [False, True])
def test_cli_serves_and_stops_on_sigint(tmp_path: Path, use_module: bool) -> None:
    config = tmp_path / "emulator.json"
    config.write_text(
        json.dumps({"servers": [{"name": "mail", "kind": "mail"}, {"name": "notes_1", "kind": "notes"}]})
    )
    port = _free_port()
    if use_module:
        command = [sys.executable, "-m", "agents_a365.emulator"]
    else:
        command = [str(Path(sys.executable).parent / "a365-emulator")]
    command += ["--host", "127.0.0.1", "--port", str(port), "--config", str(config), "--log-level", "warning"]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        lines = _wait_for_banner(process, time.monotonic() + 20)
        base_url = f"http://127.0.0.1:{port}"
        assert lines[0] == f"Agent 365 emulator running at {base_url}"
        assert any("notes_1" in line for line in lines)
        token = next(line.split("=", 1)[1] for line in lines if line.startswith("export BEARER_TOKEN="))
        response = httpx.get(
            f"{base_url}/agents/v2/any/mcpServers", headers={"Authorization": f"Bearer {token}"}, timeout=5
        )
        assert response.status_code == 200
        assert [s["mcpServerName"] for s in response.json()["mcpServers"]] == ["mail", "notes_1"]
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def test_cli_rejects_bad_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "bad.json"
    config.write_text(json.dumps({"servers": [{"name": "x", "kind": "unknown"}]}))
    assert main(["--config", str(config)]) == 2
    assert "invalid config" in capsys.readouterr().err


async def test_printed_dev_environment_serves_the_manifest_path_for_every_audience(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What a user pastes from the banner is enough for the manifest path, V2 (own audience) servers included.
    from agents_a365.emulator import Emulator
    from agents_a365.emulator.__main__ import dev_environment
    from agents_a365.tooling import McpServerConnectionError, McpToolServerConfigurationService
    from support.turns import make_turn_context

    async with Emulator() as emu:
        exported = dict(
            line.removeprefix("export ").split("=", 1)
            for line in dev_environment(emu)
            if line.startswith("export ")
        )
        assert set(exported) == {
            "MCP_PLATFORM_ENDPOINT",
            "A365_ALLOW_INSECURE_HTTP",
            "BEARER_TOKEN",
            "BEARER_TOKEN_CALENDAR",
        }
        (tmp_path / "ToolingManifest.json").write_text(
            json.dumps(
                {
                    "mcpServers": [
                        {"mcpServerName": name, "audience": server.config.audience}
                        for name, server in emu.servers.items()
                    ]
                }
            )
        )
        monkeypatch.chdir(tmp_path)
        monkeypatch.delenv("A365_TOOLING_MANIFEST", raising=False)
        monkeypatch.setenv("ENVIRONMENT", "Development")
        for name, value in exported.items():
            monkeypatch.setenv(name, value)
        turn = make_turn_context()

        async with McpToolServerConfigurationService() as service:
            servers = await service.list_tool_servers(turn, None, None)
            tools = {
                s.mcp_server_name: await service.get_mcp_client_tools(s.mcp_server_name, s) for s in servers
            }
            assert set(tools) == {"mail", "calendar"}
            assert all(tools.values())

        monkeypatch.delenv("BEARER_TOKEN_CALENDAR")  # without its own token the V2 server refuses the call
        async with McpToolServerConfigurationService() as service:
            calendar = next(
                s
                for s in await service.list_tool_servers(turn, None, None)
                if s.mcp_server_name == "calendar"
            )
            with pytest.raises(McpServerConnectionError):
                await service.get_mcp_client_tools("calendar", calendar)
