"""Shared plumbing of the benchmarks: the emulator process, Microsoft's baseline worker, turns, stats.

The emulator runs in its own process (``python -m agents_a365.emulator``) so that neither side pays for
the server's CPU on its own event loop, and both our code and Microsoft's (another process, its own
venv) talk to the same emulator over real HTTP. Latency is the emulator's fault injection
(``Fault(latency_ms=...)`` on the ``gateway``, ``mcp`` and ``rtp`` routes).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import EmulatorAuthorization, EmulatorConfig, ServerConfig, TokenIssuer
from agents_a365.emulator.turns import make_turn_context

ROOT = Path(__file__).resolve().parents[2]
BENCH_DIR = Path(__file__).resolve().parent
MS_VENV = ROOT / ".bench-venv" / "ms"
MS_PACKAGES = (
    "microsoft-agents-a365-tooling-extensions-openai==2.0.0",
    "microsoft-agents-a365-runtime==2.0.0",
)
LATENCY_MS = 20.0
SERVER_COUNTS = (1, 4, 8, 16, 32)


def proc_cpu(pid: int) -> float | None:
    """CPU seconds (user + system) of process ``pid`` so far, from ``/proc`` (10 ms ticks; ``None`` off Linux)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def agent_id_for(n: int) -> str:
    """The agentic app id the emulator maps to ``n`` notes servers."""
    return f"00000000-0000-4000-8000-{n:012d}"


# -- stats and reporting ------------------------------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def machine_load() -> str:
    one, five, _ = os.getloadavg()
    return f"{os.cpu_count()} cores, load average {one:.2f} (1 min) / {five:.2f} (5 min)"


def header(title: str, command: str) -> None:
    print(f"# {title}")
    print(f"date {date.today().isoformat()}  |  {machine_load()}  |  python {sys.version.split()[0]}")
    print(f"command: {command}")
    print()


def table(rows: list[list[str]], head: list[str]) -> None:
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)) + " |"
    print(line)
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) + " |")
    print()


@dataclass
class Samples:
    values: dict[str, list[float]] = field(default_factory=dict)

    def add(self, key: str, value: float) -> None:
        self.values.setdefault(key, []).append(value)

    def med(self, key: str) -> float:
        return median(self.values.get(key, []))


# -- turns ---------------------------------------------------------------------------------------------------


def make_turn(agent_id: str, user: str = "user-1", text: str = "What is on my calendar?") -> TurnContext:
    """A real hosting-core turn for an agentic recipient (the emulator's helper, as the tests use)."""
    return make_turn_context(agentic_app_id=agent_id, user_id=user, text=text)


# -- the emulator process ------------------------------------------------------------------------------------


@dataclass
class EmulatorProcess:
    base_url: str
    secret: str
    process: subprocess.Popen[str]

    @property
    def issuer(self) -> TokenIssuer:
        return TokenIssuer(self.secret)

    def authorization(self) -> EmulatorAuthorization:
        """The emulator's own hosting-core-shaped authorization, minting tokens it accepts."""
        return EmulatorAuthorization(self.issuer)

    def control(self, method: str, path: str, body: Any = None) -> Any:
        import httpx

        response = httpx.request(method, f"{self.base_url}/_emulator{path}", json=body, timeout=30)
        response.raise_for_status()
        return response.json() if response.content else None

    def set_latency(self, latency_ms: float, routes: Sequence[str] = ("gateway", "mcp", "rtp")) -> None:
        for route in routes:
            if latency_ms:
                self.control("PUT", f"/faults/{route}", {"latency_ms": latency_ms})
            else:
                self.control("DELETE", f"/faults/{route}")

    @property
    def port(self) -> int:
        return int(self.base_url.rsplit(":", 1)[1])


@contextlib.contextmanager
def emulator_process(
    notes_servers: int = max(SERVER_COUNTS),
    latency_ms: float = LATENCY_MS,
    counts: Sequence[int] = SERVER_COUNTS,
) -> Iterator[EmulatorProcess]:
    """The emulator CLI in a child process: ``notes_1..notes_<n>`` (V1), each agent id of
    :func:`agent_id_for` mapped to the first ``n`` of them, ``latency_ms`` on gateway, MCP and RTP."""
    secret = secrets.token_urlsafe(32)
    config = EmulatorConfig(
        servers=[ServerConfig(name=f"notes_{i}", kind="notes") for i in range(1, notes_servers + 1)],
        agents={agent_id_for(n): [f"notes_{i}" for i in range(1, n + 1)] for n in counts},
        token_secret=secret,
        max_recorded_requests=1000,
    )
    data = config.model_dump(mode="json")
    if latency_ms:
        data["faults"] = {route: {"latency_ms": latency_ms} for route in ("gateway", "mcp", "rtp")}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(data, f)
        path = f.name
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agents_a365.emulator",
            "--port",
            "0",
            "--config",
            path,
            "--log-level",
            "error",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        base_url = None
        deadline = time.monotonic() + 30
        while base_url is None and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError("the emulator exited before printing its URL")
            match = re.search(r"running at (http://\S+)", line)
            if match:
                base_url = match.group(1)
        if base_url is None:
            raise RuntimeError("the emulator did not start")
        yield EmulatorProcess(base_url, secret, process)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
        os.unlink(path)


# -- Microsoft's baseline ------------------------------------------------------------------------------------


def ms_python() -> Path:
    """The baseline venv's python, created on first use with ``uv`` (PyPI)."""
    python = MS_VENV / "bin" / "python"
    probe = [str(python), "-c", "import microsoft_agents_a365.tooling.extensions.openai, jwt"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    print(
        f"(creating the baseline venv {MS_VENV.relative_to(ROOT)} with {', '.join(MS_PACKAGES)})", flush=True
    )
    subprocess.run([os.environ.get("UV", "uv"), "venv", "-q", "--python", "3.11", str(MS_VENV)], check=True)
    subprocess.run(
        [os.environ.get("UV", "uv"), "pip", "install", "-q", "--python", str(python), *MS_PACKAGES],
        check=True,
    )
    return python


class MsWorker:
    """Microsoft's SDK in a subprocess, driven one JSON command at a time (see ``_ms_worker.py``)."""

    def __init__(self, emulator: EmulatorProcess) -> None:
        env = {
            k: v for k, v in os.environ.items() if k not in {"PYTHON_ENVIRONMENT", "ASPNETCORE_ENVIRONMENT"}
        }
        env.update(
            MCP_PLATFORM_ENDPOINT=emulator.base_url,
            ENVIRONMENT="Production",
            BENCH_TOKEN_SECRET=emulator.secret,
            PYTHONPATH="",
        )
        self.process = subprocess.Popen(
            [str(ms_python()), str(BENCH_DIR / "_ms_worker.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        ready = self._read()
        if not ready.get("ready"):
            raise RuntimeError(f"baseline worker failed to start: {ready}")

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("baseline worker exited")
        result: dict[str, Any] = json.loads(line)
        return result

    async def call(self, op: str, **args: Any) -> dict[str, Any]:
        """Run one command; the caller's event loop is idle meanwhile (nothing else is measured)."""
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.process.stdin.flush()
        result = await asyncio.to_thread(self._read)
        if "error" in result:
            raise RuntimeError(f"baseline {op} failed: {result['error']}")
        return result

    def close(self) -> None:
        with contextlib.suppress(Exception):
            assert self.process.stdin is not None
            self.process.stdin.write(json.dumps({"op": "quit"}) + "\n")
            self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


@contextlib.asynccontextmanager
async def ms_worker(emulator: EmulatorProcess) -> AsyncIterator[MsWorker]:
    worker = await asyncio.to_thread(MsWorker, emulator)
    try:
        yield worker
    finally:
        await asyncio.to_thread(worker.close)


# -- TCP connection counting ---------------------------------------------------------------------------------

_connects = 0
_hooked = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    global _connects
    if event == "socket.connect" and isinstance(args[0], socket.socket) and args[0].family == socket.AF_INET:
        _connects += 1


def tcp_connects() -> Callable[[], int]:
    """A counter of the TCP connections this process opens (``socket.connect`` audit events)."""
    global _hooked
    if not _hooked:
        sys.addaudithook(_audit)
        _hooked = True
    start = _connects
    return lambda: _connects - start
