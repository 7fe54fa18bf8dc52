"""Shared plumbing of the benchmarks: the command line and the report, the emulator process, Microsoft's
baseline worker, turns, CPU from ``/proc`` (scripts/bench/README.md)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import re
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import _forkserver as forkserver
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import EmulatorAuthorization, EmulatorConfig, ServerConfig, TokenIssuer
from agents_a365.emulator.turns import make_turn_context

ROOT = Path(__file__).resolve().parents[2]
BENCH_DIR = Path(__file__).resolve().parent
MS_VENV = ROOT / ".bench-venv" / "ms"
MS_PACKAGES = (
    "microsoft-agents-a365-tooling-extensions-openai==2.0.0",
    "microsoft-agents-a365-runtime==2.0.0",
    "microsoft-agents-hosting-aiohttp",  # Microsoft's host (_ms.py host); resolved with their hosting-core
)
LATENCY_MS = 20.0
SERVER_COUNTS = (1, 4, 8, 16, 32)
ROUTES = ("gateway", "mcp", "rtp")


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


def make_turn(agent_id: str, user: str = "user-1", text: str = "What is on my calendar?") -> TurnContext:
    """A real hosting-core turn for an agentic recipient (the emulator's helper, as the tests use)."""
    return make_turn_context(agentic_app_id=agent_id, user_id=user, text=text)


# -- the command line and the report -------------------------------------------------------------------------


def start(
    title: str, argv: Sequence[str] | None = None, helps: Mapping[str, str] | None = None, **options: Any
) -> argparse.Namespace:
    """A bench's flags, its log level and the report's header. Each option is ``--name`` (``_`` -> ``-``), typed
    by its default (shown by ``--help``): a bool is a switch, a list repeatable, a tuple its choices (the first the
    default), ``None`` a string; ``helps``: the flags' help texts, by name."""
    parser = argparse.ArgumentParser(
        description=sys.modules["__main__"].__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    helps = helps or {}
    for name, default in options.items():
        shown = "" if default is None or isinstance(default, bool | list) else " (default: %(default)s)"
        flag, described = "--" + name.replace("_", "-"), {"help": (helps.get(name, "") + shown).strip()}
        if isinstance(default, bool):
            parser.add_argument(flag, action="store_true", **described)
        elif isinstance(default, list):
            parser.add_argument(flag, action="append", default=[], **described)
        elif isinstance(default, tuple):
            parser.add_argument(flag, choices=default, default=default[0], **described)
        else:
            kind = str if default is None else type(default)
            parser.add_argument(flag, type=kind, default=default, **described)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    one, five, _ = os.getloadavg()
    script = Path(sys.argv[0]).resolve()
    where = script.relative_to(ROOT) if script.is_relative_to(ROOT) else script
    load = f"{os.cpu_count()} cores, load average {one:.2f} (1 min) / {five:.2f} (5 min)"
    print(f"# {title}\ndate {date.today().isoformat()}  |  {load}  |  python {sys.version.split()[0]}")
    print(f"command: uv run python {where} {' '.join(sys.argv[1:])}".rstrip() + "\n")
    return args


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def table(rows: Sequence[Sequence[Any]], head: Sequence[str]) -> None:
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) + " |")
    print()


def check(
    target: str, what: str, value: float, limit: float | None = None, at_least: bool = False
) -> list[str]:
    """A row of :func:`checks`: ``value`` against ``limit`` (at most, or ``at_least``); no limit = information."""
    if limit is None:
        return [target, what, f"{value:.2f}", "(info)", ""]
    ok = value >= limit if at_least else value <= limit
    return [target, what, f"{value:.2f}", f"{'>=' if at_least else '<='} {limit:g}", verdict(ok)]


def checks(rows: Sequence[Sequence[Any]]) -> None:
    table(rows, ["target", "measure (same run)", "value", "target", ""])


@dataclass
class Samples:
    values: dict[str, list[float]] = field(default_factory=dict)

    def add(self, key: str, value: float) -> None:
        self.values.setdefault(key, []).append(value)

    def med(self, key: str) -> float:
        return median(self.values.get(key, []))


# -- the emulator process ------------------------------------------------------------------------------------


@dataclass
class EmulatorProcess:
    base_url: str
    secret: str
    process: subprocess.Popen[str]

    @property
    def port(self) -> int:
        return int(self.base_url.rsplit(":", 1)[1])

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

    @contextlib.contextmanager
    def stopped(self) -> Iterator[None]:
        """The emulator stopped (SIGSTOP: its kernel still accepts connections, nothing answers) until the
        block ends; continued (SIGCONT) however it ends."""
        os.kill(self.process.pid, signal.SIGSTOP)
        try:
            yield
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.process.pid, signal.SIGCONT)

    @contextlib.contextmanager
    def faulted(self, route: str, **fault: Any) -> Iterator[None]:
        """A fault on ``route`` (e.g. ``mcp:notes_8``, ``latency_ms=3_600_000``: a server that stops answering)
        until the block ends."""
        self.control("PUT", f"/faults/{route}", fault)
        try:
            yield
        finally:
            self.control("DELETE", f"/faults/{route}")


@contextlib.contextmanager
def emulator_process(
    notes_servers: int = max(SERVER_COUNTS),
    latency_ms: float = LATENCY_MS,
    counts: Sequence[int] = SERVER_COUNTS,
) -> Iterator[EmulatorProcess]:
    """The emulator CLI in a child process: ``notes_1..notes_<n>`` (each agent id of :func:`agent_id_for` mapped
    to the first ``n`` of them; ``notes_servers=0``: the emulator's default servers and agent), ``latency_ms`` on
    gateway, MCP and RTP."""
    secret = secrets.token_urlsafe(32)
    config = EmulatorConfig(token_secret=secret, max_recorded_requests=1000)
    if notes_servers:
        config.servers = [ServerConfig(name=f"notes_{i}", kind="notes") for i in range(1, notes_servers + 1)]
        config.agents = {agent_id_for(n): [f"notes_{i}" for i in range(1, n + 1)] for n in counts}
    data = config.model_dump(mode="json")
    data["faults"] = {route: {"latency_ms": latency_ms} for route in ROUTES} if latency_ms else {}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(data, f)
    command = [sys.executable, "-m", "agents_a365.emulator", "--port", "0", "--config", f.name]
    process = forkserver.popen(
        [*command, "--log-level", "error"],
        preload=forkserver.EMULATOR,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        deadline, base_url = time.monotonic() + 30, None
        while base_url is None and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError("the emulator exited before printing its URL")
            base_url = (match := re.search(r"running at (http://\S+)", line)) and match.group(1)
        if base_url is None:
            raise RuntimeError("the emulator did not start")
        yield EmulatorProcess(base_url, secret, process)
    finally:
        end(process)
        os.unlink(f.name)


def end(process: subprocess.Popen[Any], grace: float = 10, close_stdout: bool = True) -> None:
    """Terminate ``process`` (kill it after ``grace`` seconds) and close its pipes (not its stdout if a thread
    of ours reads it to the end)."""
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    for pipe in (process.stdin, process.stdout if close_stdout else None):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


# -- Microsoft's baseline ------------------------------------------------------------------------------------


def ms_python() -> Path:
    """The baseline venv's python, created on first use with ``uv`` (PyPI)."""
    python = MS_VENV / "bin" / "python"
    imports = "import microsoft_agents_a365.tooling.extensions.openai, microsoft_agents.hosting.aiohttp, jwt"
    if python.exists() and subprocess.run([str(python), "-c", imports], capture_output=True).returncode == 0:
        return python
    print(f"(creating the baseline venv {MS_VENV.relative_to(ROOT)}: {', '.join(MS_PACKAGES)})", flush=True)
    uv = os.environ.get("UV", "uv")
    if not python.exists():
        subprocess.run([uv, "venv", "-q", "--python", "3.11", str(MS_VENV)], check=True)
    subprocess.run([uv, "pip", "install", "-q", "--python", str(python), *MS_PACKAGES], check=True)
    return python


def ms_env(emulator: EmulatorProcess) -> dict[str, str]:
    """The environment of a process of Microsoft's SDK against ``emulator`` (``_ms.py``)."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHON_ENVIRONMENT", "OPENAI_API_KEY"}}
    env.update(MCP_PLATFORM_ENDPOINT=emulator.base_url, ENVIRONMENT="Production", PYTHONPATH="")
    return env | {"BENCH_TOKEN_SECRET": emulator.secret, "PYTHONUNBUFFERED": "1"}


@contextlib.asynccontextmanager
async def ms_worker(emulator: EmulatorProcess) -> AsyncIterator[Callable[..., Awaitable[dict[str, Any]]]]:
    """Microsoft's SDK in a subprocess (``_ms.py worker``): ``await worker(op, **args)`` runs one command; the
    caller's event loop is idle meanwhile (nothing else is measured)."""
    command = [str(await asyncio.to_thread(ms_python)), str(BENCH_DIR / "_ms.py"), "worker"]
    pipe = subprocess.PIPE
    process = subprocess.Popen(command, stdin=pipe, stdout=pipe, env=ms_env(emulator), text=True)  # noqa: ASYNC220
    stdin, stdout = process.stdin, process.stdout
    assert stdin is not None
    assert stdout is not None

    async def call(op: str | None = None, **args: Any) -> dict[str, Any]:
        if op is not None:
            stdin.write(json.dumps({"op": op, **args}) + "\n")
            stdin.flush()
        line = await asyncio.to_thread(stdout.readline)
        result: dict[str, Any] = json.loads(line) if line else {"error": "the worker exited"}
        if "error" in result:
            raise RuntimeError(f"baseline {op or 'start'} failed: {result['error']}")
        return result

    try:
        await call()  # its ready line
        yield call
    finally:
        await asyncio.to_thread(end, process)
