"""Host processes of the host benchmarks: start and stop them, read their CPU, memory, sockets and failed turns
(``/proc``, their log), dump their tasks, profile them; and the loopback OTLP collector."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import _forkserver as forkserver
from _common import BENCH_DIR, ROOT, EmulatorProcess, end, ms_env, ms_python, proc_cpu
from aiohttp import web

PRELOAD = (*forkserver.HOSTED, "_host_floor", "_host_models", "_host_profile")  # what a host process imports
FAILED_TURN = b"An error occurred in the AgentApplication"  # the hosted example's log line of a failed turn
_STATES = {"01": "ESTABLISHED", "02": "SYN_SENT", "06": "TIME_WAIT", "08": "CLOSE_WAIT", "0A": "LISTEN"}


def now() -> float:
    return time.perf_counter()


@dataclass
class Host:
    """A host process serving ``/api/messages``; its stderr and stdout go to ``log``."""

    label: str
    url: str
    process: subprocess.Popen[str]
    log: Path
    failed: bool = False  # a turn failed: its log is kept (the load generator sets it)
    _read: int = 0
    _errors: int = 0

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
            return next((int(line.split()[1]) / 1024 for line in status if line.startswith("VmRSS:")), 0.0)

    def sockets(self) -> Counter[tuple[int | str, str]]:
        """Its TCP sockets by (peer, state): the peer's port, or ``inbound`` (to its own port)."""
        inodes = set()
        for fd in os.listdir(f"/proc/{self.pid}/fd"):
            with contextlib.suppress(OSError):
                if (target := os.readlink(f"/proc/{self.pid}/fd/{fd}")).startswith("socket:["):
                    inodes.add(target[8:-1])
        own, counts = int(self.url.rsplit(":", 1)[1]), Counter[tuple[int | str, str]]()
        for table in ("tcp", "tcp6"):
            with contextlib.suppress(OSError), open(f"/proc/{self.pid}/net/{table}") as lines:
                for line in list(lines)[1:]:
                    fields = line.split()
                    if fields[9] in inodes:
                        local, remote = (int(fields[i].rsplit(":", 1)[1], 16) for i in (1, 2))
                        counts["inbound" if local == own else remote, _STATES.get(fields[3], fields[3])] += 1
        return counts

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def turn_errors(self) -> int:
        """Turns its AgentApplication failed so far, as its log says (the channel still gets HTTP 2xx and an error
        reply, so the load generator sees an answer). Reads only what the log gained."""
        with open(self.log, "rb") as log:
            log.seek(self._read)
            new = log.read()
        cut = new.rfind(b"\n") + 1  # whole lines only: a line being written is counted next time
        self._errors, self._read = self._errors + new[:cut].count(FAILED_TURN), self._read + cut
        return self._errors


async def start_host(
    emu: EmulatorProcess,
    label: str,
    mode: str,
    orchestrator: str,
    otel: str | None = None,
    scope: str = "global",
) -> Host:
    """``mode``: ``ours``, ``floor`` (``_host_server.py``) or ``ms`` (``_ms.py host``: Microsoft's SDK in its venv;
    OpenAI only). ``otel``: a collector's URL, the host's providers ``global`` or this SDK's only (``sdk``)."""
    log = Path(tempfile.mkstemp(prefix=f"host-{label}-", suffix=".log")[1])
    if mode == "ms":
        env, command = (
            ms_env(emu),
            [str(await asyncio.to_thread(ms_python)), str(BENCH_DIR / "_ms.py"), "host"],
        )
    else:
        env = {k: v for k, v in os.environ.items() if k not in {"OPENAI_API_KEY", "PYTHON_ENVIRONMENT"}}
        env["PYTHONUNBUFFERED"] = "1"
        flags = f"--mode {mode} --orchestrator {orchestrator} --emulator {emu.base_url}"
        flags += f" --otel-endpoint {otel} --otel-scope {scope}" if otel else ""
        # --secret=: one argument, as a secret may start with "-"
        command = [
            sys.executable,
            str(BENCH_DIR / "_host_server.py"),
            *flags.split(),
            f"--secret={emu.secret}",
        ]
    # Popen on this (the main) thread: a host's PR_SET_PDEATHSIG follows the thread that forked it.
    # O_APPEND: the host's stderr and our copy of its stdout share the file without overwriting each other.
    with open(log, "a") as err:  # noqa: ASYNC230 (a local temp file)
        pipe = subprocess.PIPE
        process = forkserver.popen(  # a fork (or fork + exec): milliseconds; the first also preloads
            command, preload=PRELOAD, stdin=pipe, stdout=pipe, stderr=err, text=True, env=env, cwd=ROOT
        )
    assert process.stdout is not None
    line = await asyncio.to_thread(process.stdout.readline)  # the host prints its URL once serving, or exits
    if not line.startswith("ready "):
        end(process)
        raise RuntimeError(f"host {label} did not start:\n{log.read_text(errors='replace')[-3000:]}")  # noqa: ASYNC240
    # Read the host's stdout to its end: hosting-core's default on_turn_error print()s each failed turn's
    # traceback there, and once an unread pipe holds 64 KiB that print blocks the host's event loop for good.
    threading.Thread(target=_drain, args=(process.stdout, log), name=f"drain-{label}", daemon=True).start()
    return Host(label, line.split()[1], process, log)


def _drain(stdout: IO[str], log: Path) -> None:
    with contextlib.suppress(OSError, ValueError), stdout, open(log, "a") as sink:
        for line in stdout:  # until the host exits
            sink.write(line)
            sink.flush()


def stop_host(host: Host, keep_log: bool | None = None) -> None:
    """Close its stdin (its signal to stop), then terminate/kill it if it does not; its log is kept if
    ``keep_log``, by default if a turn failed."""
    with contextlib.suppress(OSError):
        assert host.process.stdin is not None
        host.process.stdin.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        host.process.wait(10)
    end(host.process, 5, close_stdout=False)  # the draining thread closes it at its end
    if keep_log or (keep_log is None and (host.failed or host.turn_errors())):
        print(f"  host {host.label}'s log: {host.log}")
    else:
        host.log.unlink(missing_ok=True)


@contextlib.asynccontextmanager
async def running(*starts: Awaitable[Host]) -> AsyncIterator[list[Host]]:
    """The hosts of ``start_host(...)`` calls, started at once and stopped at the end (or when one fails to start)."""
    started = await asyncio.gather(*starts, return_exceptions=True)
    try:
        if failed := next((s for s in started if isinstance(s, BaseException)), None):
            raise failed
        yield [h for h in started if isinstance(h, Host)]
    finally:
        # All at once and off the event loop: an OTel host's last export goes to a collector on this loop (waiting
        # here for the host to exit, the collector could not answer it: the host waited out its exporter's timeout).
        await asyncio.gather(*(asyncio.to_thread(stop_host, h) for h in started if isinstance(h, Host)))


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
