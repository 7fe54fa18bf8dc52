"""A user who installs only the OpenAI extension gets mcp 2.x, and the SDK works end to end with it.

The wheels are built from this tree; a fresh venv gets the OpenAI extension's wheel, the core
wheels from a local wheelhouse, and hosting-core (for a real TurnContext); everything else comes
from the index at the newest allowed versions. The emulator runs from the workspace venv (on
mcp 1.x) as its CLI, a separate process, exactly as a user would start it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agents_a365.emulator import DEFAULT_AGENT_ID
from release.release_support import ROOT, UV
from support.hostile_mcp import STRUCTURED_BREAKS
from support.shared import built_distributions, built_once

pytestmark = pytest.mark.slow  # started first on the parallel workers (tests/conftest.py)

PROBE = Path(__file__).with_name("mcp2_probe.py")
WHEELS = ("agents_a365_runtime", "agents_a365_tooling", "agents_a365_tooling_extensions_openai")


def run(*args: str | Path) -> str:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture
def emulator_process(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """``a365-emulator`` with one V1 mail server: (base url, platform token)."""
    config = tmp_path / "emulator.json"
    config.write_text(json.dumps({"servers": [{"name": "mail", "kind": "mail"}]}))
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agents_a365.emulator",
            "--port",
            "0",
            "--config",
            str(config),
            "--log-level",
            "warning",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        lines = []
        for line in process.stdout:  # the banner: url first, the token after "Platform token"
            lines.append(line.strip())
            if line.startswith("Press Ctrl-C"):
                break
        base_url = lines[0].rsplit(" ", 1)[1]
        token = lines[lines.index("Platform token (valid 24h):") + 1]
        yield base_url, token
    finally:
        process.terminate()
        process.communicate(timeout=30)


@pytest.fixture(scope="module")
def mcp2_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One fresh venv per run (the tests only run probes in it; the parallel workers share it): the wheels,
    mcp 2, hosting-core."""

    def build(tmp_path: Path) -> None:
        dist = built_distributions(tmp_path_factory)  # built once per run for every test that installs them
        run(UV, "venv", "--quiet", "--python", sys.executable, tmp_path / "venv")
        run(
            UV,
            "pip",
            "install",
            "--quiet",
            "--python",
            tmp_path / "venv" / "bin" / "python",
            *(next(dist.glob(f"{wheel}-*.whl")) for wheel in WHEELS),
            "microsoft-agents-hosting-core>=1.9.0",
            "opentelemetry-sdk",  # the probe records the tool call spans
        )

    python = built_once(tmp_path_factory, "mcp2", build) / "venv" / "bin" / "python"
    installed = run(UV, "pip", "freeze", "--python", python)
    assert "langchain" not in installed
    assert "agents-a365-emulator" not in installed
    return python


def test_openai_extension_alone_runs_on_mcp_2(mcp2_venv: Path, emulator_process: tuple[str, str]) -> None:
    """A cold turn, a warm one, and structured results checked: one probe process (one import of the stack)."""
    base_url, token = emulator_process
    report = json.loads(run_probe(mcp2_venv, base_url, token))
    assert report["mcp"].split(".")[0] == "2", report
    assert report["server"] == "mail"
    assert "search_emails" in report["tools"]
    assert not report["tool_error"]
    assert report["failed_tool_error"]
    assert report["tool_outcomes"] == {
        "execute_tool search_emails": "success",
        "execute_tool send_email": "tool_error",  # mcp 2's CallToolResult.is_error, read by the SDK
    }
    assert "report" in report["tool_text"].lower()
    assert report["history_sent"] is True
    recorded = httpx.get(f"{base_url}/_emulator/requests", timeout=10).json()
    assert "Agent365SDK/" in json.dumps(recorded)
    # The warm turn: the tool definitions from the tooling service's cache, then a call.
    assert report["warm_tools"] == report["tools"]
    assert report["warm_text"]

    # mcp 2's CallToolResult names its fields is_error and structured_content (the camelCase names only on the
    # wire): the pool's check once read mcp 1's names, an AttributeError on every call of such a tool.
    # The OpenAI server reads the schema from the definition by the installed mcp's field name (output_schema).
    for way in ("pool", "server"):
        outcomes = report["structured"][way]
        assert outcomes[0] == "ok", way
        for outcome, (_, expected) in zip(outcomes[1:], STRUCTURED_BREAKS, strict=True):
            assert expected in outcome, (way, outcome)


def probe_env(python: Path, **extra: str) -> dict[str, str]:
    """A probe's environment: bytecode cached in the venv's folder whatever PYTHONDONTWRITEBYTECODE says (the
    first probe compiles what it imports, the next ones read it); no PYTHONPATH of the workspace's."""
    skip = ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in skip}
    return {**env, "PYTHONPYCACHEPREFIX": str(python.parents[2] / "pycache"), **extra}


def run_probe(python: Path, base_url: str, token: str) -> str:
    env = probe_env(python, PYTHONPATH=str(ROOT / "tests"))  # the structured checks' hostile MCP server
    done = subprocess.run(
        [str(python), str(PROBE), base_url, token, DEFAULT_AGENT_ID],
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
        env=env,
        cwd=PROBE.parent,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.strip().splitlines()[-1]
