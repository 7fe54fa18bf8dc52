"""Host processes of the host benchmark: start them, read their CPU, memory and connections (``/proc``),
profile them, and the loopback OTLP collector."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from _common import BENCH_DIR, ROOT, EmulatorProcess, ms_python, proc_cpu
from aiohttp import web


@dataclass
class Host:
    """A host process serving ``/api/messages``."""

    label: str
    url: str
    process: subprocess.Popen[str]
    log: Path
    drained: bool = True  # its stdout read to the end (into ``log``) by a thread of ours

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def messages_url(self) -> str:
        return f"{self.url}/api/messages"

    def cpu(self) -> float:
        """CPU seconds (user + system) so far; 10 ms resolution."""
        return proc_cpu(self.pid) or 0.0

    def rss_mib(self) -> float:
        with open(f"/proc/{self.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def connections_to(self, port: int) -> int:
        """Established TCP connections of this process to ``port`` (the emulator)."""
        inodes = set()
        fd_dir = f"/proc/{self.pid}/fd"
        for fd in os.listdir(fd_dir):
            with contextlib.suppress(OSError):
                target = os.readlink(f"{fd_dir}/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        count = 0
        for table in ("tcp", "tcp6"):
            with contextlib.suppress(OSError), open(f"/proc/{self.pid}/net/{table}") as f:
                next(f)
                for line in f:
                    parts = line.split()
                    if (
                        parts[3] == "01"
                        and parts[9] in inodes
                        and int(parts[2].rsplit(":", 1)[1], 16) == port
                    ):
                        count += 1
        return count

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def turn_errors(self) -> int:
        """Turns the host's AgentApplication failed so far, as it logs them (ours and the floor): the
        channel still gets HTTP 2xx and the error text as a reply, so the load generator sees an answer."""
        return self.log.read_text(errors="replace").count("An error occurred in the AgentApplication")


def ms_host_python() -> Path:
    """The baseline venv's Python (``_common.ms_python``) with ``microsoft-agents-hosting-aiohttp`` added, at
    the version of the ``microsoft-agents-hosting-core`` that Microsoft's packages resolved."""
    python = ms_python()
    probe = [str(python), "-c", "import microsoft_agents.hosting.aiohttp"]
    if subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    version = subprocess.run(
        [
            str(python),
            "-c",
            "from importlib.metadata import version; print(version('microsoft-agents-hosting-core'))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    package = f"microsoft-agents-hosting-aiohttp=={version}"
    print(f"(adding {package} to the baseline venv)", flush=True)
    uv = os.environ.get("UV", "uv")
    subprocess.run([uv, "pip", "install", "-q", "--python", str(python), package], check=True)
    return python


def _env(emu: EmulatorProcess) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"OPENAI_API_KEY", "PYTHON_ENVIRONMENT"}}
    env.update(PYTHONUNBUFFERED="1")
    return env


async def start_host(
    label: str,
    emu: EmulatorProcess,
    mode: str,
    orchestrator: str,
    otel_endpoint: str | None = None,
    *,
    otel_scope: str = "global",
    drain_stdout: bool = True,
) -> Host:
    """``mode``: ``ours``, ``floor`` or ``ms`` (Microsoft's SDK in its venv; OpenAI only). ``otel_scope``:
    ``global`` providers, or ``sdk`` (this SDK's ``configure_telemetry`` only). ``drain_stdout``
    False leaves the host's stdout unread after its ready line (``host_stall.py --undrained-stdout``)."""
    log = Path(tempfile.mkstemp(prefix=f"host-{label}-", suffix=".log")[1])
    if mode == "ms":
        env = _env(emu)
        env.update(
            MCP_PLATFORM_ENDPOINT=emu.base_url,
            ENVIRONMENT="Production",
            BENCH_TOKEN_SECRET=emu.secret,
            PYTHONPATH="",
        )
        command = [str(await asyncio.to_thread(ms_host_python)), str(BENCH_DIR / "_ms_host.py")]
    else:
        env = _env(emu)
        command = [
            sys.executable,
            str(BENCH_DIR / "_host_server.py"),
            "--mode",
            mode,
            "--orchestrator",
            orchestrator,
            "--emulator",
            emu.base_url,
            f"--secret={emu.secret}",  # one argument: a random secret may start with "-"
            *(["--otel-endpoint", otel_endpoint, "--otel-scope", otel_scope] if otel_endpoint else []),
        ]
    # Popen on this (the main) thread: a host's PR_SET_PDEATHSIG follows the thread that forked it.
    # O_APPEND: the host's stderr and our copy of its stdout share the file without overwriting each other.
    with open(log, "a") as err:  # noqa: ASYNC230 (a local temp file)
        process = subprocess.Popen(  # noqa: ASYNC220 (fork + exec, milliseconds)
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True, env=env, cwd=ROOT
        )
    assert process.stdout is not None
    line = await asyncio.to_thread(process.stdout.readline)  # the host prints its URL once serving, or exits
    if not line.startswith("ready "):
        process.kill()
        process.wait()
        raise RuntimeError(f"host {label} did not start:\n{log.read_text(errors='replace')[-3000:]}")  # noqa: ASYNC240
    # Read the host's stdout to its end: hosting-core's default on_turn_error print()s each failed turn's
    # traceback there, and once an unread pipe holds 64 KiB that print blocks the host's event loop for good.
    if drain_stdout:
        threading.Thread(
            target=_drain, args=(process.stdout, log), name=f"drain-{label}", daemon=True
        ).start()
    return Host(label, line.split()[1], process, log, drain_stdout)


def _drain(stdout: IO[str], log: Path) -> None:
    with contextlib.suppress(OSError, ValueError), stdout, open(log, "a") as sink:
        for line in stdout:  # until the host exits
            sink.write(line)
            sink.flush()


def stop_host(host: Host, keep_log: bool = False) -> None:
    """Close the host's stdin (its signal to stop), then terminate/kill if it does not; its stderr log is
    deleted unless ``keep_log``."""
    with contextlib.suppress(Exception):
        assert host.process.stdin is not None
        host.process.stdin.close()  # the host's signal to shut down
    try:
        host.process.wait(10)
    except subprocess.TimeoutExpired:
        host.process.terminate()
        try:
            host.process.wait(5)
        except subprocess.TimeoutExpired:
            host.process.kill()
            host.process.wait()
    if not host.drained and host.process.stdout is not None:
        host.process.stdout.close()  # else the draining thread closes it at its end
    if keep_log:
        print(f"  host {host.label}'s log: {host.log}")
    else:
        with contextlib.suppress(OSError):
            host.log.unlink()


# -- profiling ---------------------------------------------------------------------------------------------


def py_spy() -> str | None:
    found = shutil.which("py-spy")
    local = Path.home() / ".local" / "bin" / "py-spy"
    return found or (str(local) if local.exists() else None)


def start_py_spy(host: Host, duration: float, out: Path) -> subprocess.Popen[bytes] | None:
    tool = py_spy()
    if tool is None:
        return None
    command = [tool, "record", "--pid", str(host.pid), "--duration", str(max(1, int(duration)))]
    command += [
        "--rate",
        "250",
        "--format",
        "raw",
        "--nonblocking",
        "--full-filenames",
        "--function",
        "-o",
        str(out),
    ]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


PACKAGES = (
    "agents_a365",
    "langgraph",
    "langchain_core",
    "langchain_mcp_adapters",
    "langchain",
    "agents",
    "openai",
    "mcp",
    "httpx_aiohttp",
    "httpx",
    "httpcore",
    "aiohttp",
    "microsoft_agents",
    "pydantic",
    "pydantic_core",
    "opentelemetry",
    "anyio",
    "sqlite3",
    "asyncio",
    "json",
    "uuid",
    "copy",
    "typing",
    "inspect",
    "logging",
)


def frame_package(frame: str) -> str:
    """``func (path/to/file.py:12)`` -> the top-level package of the file (or ``other``)."""
    path = frame.rsplit("(", 1)[-1]
    parts = path.replace("\\", "/").split("/")
    for i, part in enumerate(parts):
        if part == "site-packages" and i + 1 < len(parts):
            name = parts[i + 1].split(".")[0].split(":")[0]
            return "agents_a365" if name == "agents_a365" else name
    for package in PACKAGES:
        if f"/{package}/" in path or f"/{package}.py" in path or path.startswith(f"{package}/"):
            return package
    if "/src/agents_a365/" in path or "agents_a365" in path:
        return "agents_a365"
    if "scripts/bench" in path or "hosted_agent" in path:
        return "bench host"
    return "python stdlib/other"


@dataclass
class Profile:
    """Shares of a host's samples: by package of the running frame, by function (self), by function
    anywhere on the stack (inclusive), and the share under an ``agents_a365`` frame."""

    packages: list[tuple[str, float]]
    self_functions: list[tuple[str, float]]
    inclusive: list[tuple[str, float]]
    under_sdk: float


_PIPELINE = {
    "process",
    "process_request",
    "process_activity",
    "run_pipeline",
    "_receive_activity_internal",
    "receive_activity_with_status",
    "on_turn",
    "_on_turn",
    "_on_activity",
    "_start_long_running_call",
    "start_agent_process",
    "_jwt_authorization_middleware",
    "create_web_app.<locals>.messages",
    "create_agent_app.<locals>.on_message",
    "floor_app.<locals>.on_message",
    "main",
    "<module>",
    "serve",
}


def _plumbing(function: str) -> bool:
    name, _, rest = function.partition(" (")
    package = rest.split(":")[0]
    return package in {"asyncio", "aiohttp", "anyio", "python stdlib/other"} or name in _PIPELINE


def _function(frame: str) -> str:
    name, _, where = frame.partition(" (")
    path = where.rstrip(")").rsplit(":", 1)[0]
    return f"{name} ({frame_package(frame)}: {Path(path).name})"


def summarize_py_spy(raw: Path, top: int = 30) -> Profile:
    by_package: Counter[str] = Counter()
    by_function: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    under_sdk = 0
    total = 0
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = stack.split(";")[1:] if stack.startswith(("process ", "thread ")) else stack.split(";")
        frames = [f for f in frames if " (" in f]
        if not frames:
            continue
        total += count
        by_package[frame_package(frames[-1])] += count
        by_function[_function(frames[-1])] += count
        for name in {_function(f) for f in frames}:
            inclusive[name] += count
        if any(frame_package(f) == "agents_a365" for f in frames):
            under_sdk += count
    if not total:
        return Profile([], [], [], 0.0)
    # The event loop, the server and hosting-core's pipeline down to the handler are on every turn's stack.
    informative = [(n, c / total) for n, c in inclusive.most_common() if not _plumbing(n)]
    return Profile(
        [(name, n / total) for name, n in by_package.most_common(top)],
        [(name, n / total) for name, n in by_function.most_common(top)],
        informative[:top],
        under_sdk / total,
    )


# -- the loopback OTLP collector ----------------------------------------------------------------------------


@dataclass
class Collector:
    url: str
    received: Counter[str]


@contextlib.asynccontextmanager
async def otlp_collector() -> AsyncIterator[Collector]:
    """Accepts OTLP/HTTP ``/v1/traces`` and ``/v1/metrics`` (protobuf), counts bytes, answers empty."""
    received: Counter[str] = Counter()

    async def accept(request: web.Request) -> web.Response:
        try:
            received[request.path] += len(await request.read())
        except ConnectionResetError:  # a host stopped in the middle of an export: nothing to count
            received[request.path + " cut off"] += 1
            raise web.HTTPBadRequest() from None
        received[request.path + " requests"] += 1
        return web.Response(body=b"", content_type="application/x-protobuf")

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/v1/traces", accept)
    app.router.add_post("/v1/metrics", accept)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        yield Collector(f"http://127.0.0.1:{runner.addresses[0][1]}", received)
    finally:
        await runner.cleanup()


def now() -> float:
    return time.perf_counter()
