"""The examples run as their READMEs say: the documented commands, as subprocesses, on free ports.

The commands are read from the READMEs (so the test follows them when they change), run in this
environment (``uv run`` runs a command in the project's environment: that is where the test runs), with
the documented ports swapped for free ones. Then a channel's Activity goes to the hosted agent's
/api/messages, and a useChat body to the UI stream app: a tool is called, and for the hosted agent the
record reaches threat protection and the reply reaches the connector.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agents_a365.emulator import channel_activity, post_activity

pytestmark = pytest.mark.slow  # started first on the parallel workers (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
STARTUP = 120.0  # seconds for a process to come up (imports of LangChain / the Agents SDK on a busy machine)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def documented_commands(readme: Path, heading: str | None = None) -> list[str]:
    """Command lines of the README's shell blocks (indented or fenced), under ``heading`` when given."""
    text = readme.read_text(encoding="utf-8")
    if heading is not None:
        text = text.split(heading, 1)[1].split("\n## ", 1)[0]
    lines = re.findall(r"^    (\S.*)$", text, re.MULTILINE)
    for block in re.findall(r"```bash\n(.*?)```", text, re.DOTALL):
        lines += block.splitlines()
    return [line.split("  #", 1)[0].strip() for line in lines if line.strip() and not line.startswith("#")]


def as_process(command: str, ports: dict[str, str]) -> tuple[list[str], dict[str, str], Path]:
    """``[cd DIR &&] [VAR=value ...] uv run [--frozen] program args [&]`` as argv, environment and folder."""
    for documented, free in ports.items():
        command = command.replace(documented, free)
    folder = ROOT
    if command.startswith("cd "):
        where, command = command[3:].split("&&", 1)
        folder = ROOT / where.strip()
    words = shlex.split(command.rstrip("&").strip())
    env = {**os.environ}
    while "=" in words[0]:
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    assert words[:2] == ["uv", "run"], command
    words = [w for w in words[2:] if w not in ("--frozen", "-q")]
    program = sys.executable if words[0] == "python" else str(BIN / words[0])
    return [program, *words[1:]], env, folder


@contextlib.contextmanager
def started(argv: list[str], env: dict[str, str], folder: Path, log: Path) -> Iterator[subprocess.Popen[str]]:
    """The process, its output in ``log`` (a pipe nobody reads would fill up and block it)."""
    with log.open("w") as out:
        process = subprocess.Popen(argv, cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT, text=True)
    process.log = log  # type: ignore[attr-defined]
    try:
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def until_listening(port: int, process: subprocess.Popen[str]) -> None:
    async with asyncio.timeout(STARTUP):
        while True:
            assert process.poll() is None, f"exited with {process.returncode}: {output_of(process)}"
            with contextlib.suppress(OSError):
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                await writer.wait_closed()
                return
            await asyncio.sleep(0.2)


def output_of(process: subprocess.Popen[str]) -> str:
    return Path(process.log).read_text(encoding="utf-8", errors="replace")  # type: ignore[attr-defined]


@pytest.mark.parametrize("orchestrator", ["langchain", "openai"])
async def test_hosted_agent_against_the_emulator_as_the_readme_runs_it(
    orchestrator: str, tmp_path: Path
) -> None:
    emulator_command, agent_command = documented_commands(
        ROOT / "examples" / "hosted_agent" / "README.md", "## Against the emulator (development mode)"
    )
    emulator_port, agent_port = free_port(), free_port()
    ports = {"8765": str(emulator_port), "--orchestrator langchain": f"--orchestrator {orchestrator}"}
    emulator_argv, emulator_env, folder = as_process(emulator_command, ports)
    agent_argv, agent_env, folder = as_process(agent_command, ports)
    agent_argv += ["--port", str(agent_port)]  # the documented default, 3978, may be taken on this machine
    base = f"http://127.0.0.1:{emulator_port}"
    with started(emulator_argv, emulator_env, folder, tmp_path / "emulator.log") as emulator:
        await until_listening(emulator_port, emulator)
        with started(agent_argv, agent_env, folder, tmp_path / "agent.log") as agent:
            await until_listening(agent_port, agent)
            text = (
                "When am I free tomorrow?" if orchestrator == "langchain" else "Email Ada that we meet at 10."
            )
            activity = channel_activity(text, service_url=f"{base}/")
            response = await post_activity(
                f"http://127.0.0.1:{agent_port}/api/messages", activity, timeout=60
            )
            assert response.status_code in (200, 202)
            async with httpx.AsyncClient(base_url=base, timeout=10) as control:
                calls = (await control.get("/_emulator/requests", params={"route": "mcp"})).json()
                records = (await control.get("/_emulator/chat-messages")).json()
                replies = (await control.get("/_emulator/requests", params={"route": "connector"})).json()
                assert any(c["jsonrpcMethod"] == "tools/call" for c in calls), output_of(agent)
                [record] = [r for r in records if r["conversationId"] == activity["conversation"]["id"]]
                assert record["userMessage"] == text
                assert any(r["json"].get("type") == "message" for r in replies)

                # Shut down while a turn's record is on its way to a slow threat protection: it still arrives.
                await control.put("/_emulator/faults/rtp", json={"latency_ms": 1500, "times": 1})
                late = channel_activity(text, service_url=f"{base}/")
                posting = asyncio.ensure_future(
                    post_activity(f"http://127.0.0.1:{agent_port}/api/messages", late, timeout=60)
                )
                async with asyncio.timeout(60):
                    while not (await control.get("/_emulator/requests", params={"route": "rtp"})).json()[1:]:  # noqa: ASYNC110 - another process: polled
                        await asyncio.sleep(0.1)
                agent.send_signal(signal.SIGINT)
                await posting
                assert await asyncio.to_thread(agent.wait, 30) == 0
                rtp: list[dict[str, Any]] = (
                    await control.get("/_emulator/requests", params={"route": "rtp"})
                ).json()
                assert [r["status"] for r in rtp] == [200, 200]
            out = output_of(agent)
            assert "Exception caught" not in out, out
            assert "Traceback" not in out, out


async def test_ui_stream_app_as_the_readme_runs_it(tmp_path: Path) -> None:
    [command] = [
        c
        for c in documented_commands(ROOT / "examples" / "ui_stream_app" / "README.md")
        if "python -m ui_stream_app" in c
    ]
    port = free_port()
    argv, env, folder = as_process(command, {})
    env["PORT"] = str(port)
    env.pop("OPENAI_API_KEY", None)
    with started(argv, env, folder, tmp_path / "app.log") as app:
        await until_listening(port, app)
        body = {
            "id": "chat-1",
            "messages": [
                {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Weather in Paris?"}]}
            ],
            "trigger": "submit-message",
        }
        async with httpx.AsyncClient(timeout=60) as client:
            response = await client.post(f"http://127.0.0.1:{port}/agent/stream", json=body)
        assert response.status_code == 200
        assert '"type":"tool-output-available"' in response.text
        assert "data: [DONE]" in response.text
