from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import httpx
import pytest
from mcp import ClientSession

from agents_a365.emulator import Emulator
from agents_a365.emulator.__main__ import _banner, env_token_name, main


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
        token = lines[lines.index("Platform token (valid 24h):") + 1]
        assert _exports(lines)["BEARER_TOKEN_NOTES_1"]
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


def _exports(lines: list[str]) -> dict[str, str]:
    pairs = (line.removeprefix("export ").split("=", 1) for line in lines if line.startswith("export "))
    return {key: value for key, value in pairs}


async def test_banner_gives_each_server_a_token_for_its_own_audience(
    emulator: Emulator, mcp_session: Callable[..., AbstractAsyncContextManager[ClientSession]]
) -> None:
    """Following the manifest path with the printed block reaches every server, V2 included."""
    env = _exports(_banner(emulator).splitlines())
    assert env["MCP_PLATFORM_ENDPOINT"] == emulator.base_url
    assert set(env) == {"MCP_PLATFORM_ENDPOINT", "BEARER_TOKEN", "BEARER_TOKEN_MAIL", "BEARER_TOKEN_CALENDAR"}
    for name in emulator.servers:
        async with mcp_session(emulator.server_url(name), env[env_token_name(name)]) as session:
            assert (await session.list_tools()).tools
    # Why the block is needed: the shared platform token is refused by the V2 calendar server.
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.post(
            emulator.server_url("calendar"),
            headers={"Authorization": f"Bearer {env['BEARER_TOKEN']}"},
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        )
    assert response.status_code == 401


def test_token_variable_names_follow_the_tooling_rule() -> None:
    assert env_token_name("calendar") == "BEARER_TOKEN_CALENDAR"
    assert env_token_name("notes-1.v2") == "BEARER_TOKEN_NOTES_1_V2"
