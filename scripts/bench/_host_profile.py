"""Where a host process spends its CPU (``host.py --profile``): py-spy from outside when installed, else cProfile
inside the host (``cprofile_routes``, ``POST /_bench/profile/start|stop``)."""

from __future__ import annotations

import asyncio
import cProfile
import os
import pstats
import shutil
import signal
import subprocess
import tempfile
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp
from aiohttp import web

if TYPE_CHECKING:
    from _host_procs import Host


@dataclass
class Profile:
    """Shares of a host's samples: by function (self), by function anywhere on the stack (inclusive, without the
    plumbing every turn has on its stack), and under an ``agents_a365`` frame (py-spy only)."""

    tool: str
    self_functions: list[tuple[str, float]]
    inclusive: list[tuple[str, float]]
    under_sdk: float | None = None
    raw: str = ""


async def profile(
    host: Host, http: aiohttp.ClientSession, load: Callable[[], Awaitable[Any]], how: str
) -> Profile:
    """Where ``host`` spends its CPU during ``load()``: py-spy when installed (unless ``how`` is ``cprofile``),
    else cProfile inside the host (``POST /_bench/profile/start|stop``)."""
    local = Path.home() / ".local" / "bin" / "py-spy"
    spy = (shutil.which("py-spy") or (str(local) if local.exists() else None)) if how != "cprofile" else None
    out = Path(tempfile.mkstemp(prefix=f"profile-{host.label}-", suffix=".txt" if spy else ".pstats")[1])
    if spy:
        # --gil: samples of the thread holding the GIL only. Without it a thread waiting for the GIL (the loop's
        # thread while a worker thread runs SQLite) is sampled as busy, in whatever frame it waits.
        flags = f"record --pid {host.pid} --duration 600 --rate 250 --gil --format raw --nonblocking --full-filenames"
        command = [spy, *flags.split(), "--function", "-o", str(out)]
        recorder = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: ASYNC220
        await asyncio.sleep(1.0)  # py-spy attaches
        await load()
        recorder.send_signal(signal.SIGINT)
        await asyncio.to_thread(recorder.wait, 30)
        print(f"  py-spy's collapsed stacks: {out}")
        return summarize_py_spy(out)
    async with http.post(f"{host.url}/_bench/profile/start") as response:
        response.raise_for_status()
    await load()
    async with http.post(f"{host.url}/_bench/profile/stop", params={"path": str(out)}) as response:
        response.raise_for_status()
    entries = pstats.Stats(str(out)).stats  # type: ignore[attr-defined]
    os.unlink(out)
    total = sum(v[2] for v in entries.values()) or 1.0

    def top(column: int, n: int) -> list[tuple[str, float]]:
        ranked = sorted(entries.items(), key=lambda kv: kv[1][column], reverse=True)[:n]
        return [(f"{fn} ({Path(file).name}:{line})", v[column] / total) for (file, line, fn), v in ranked]

    return Profile("cProfile", top(2, 15), top(3, 25))


# The event loop's, the server's and hosting-core's pipeline down to the handler: on every turn's stack.
_PIPELINE = {
    "process", "process_request", "process_activity", "run_pipeline", "_receive_activity_internal",
    "receive_activity_with_status", "on_turn", "_on_turn", "_on_activity", "_start_long_running_call",
    "start_agent_process", "_jwt_authorization_middleware", "create_web_app.<locals>.messages",
    "create_agent_app.<locals>.on_message", "floor_app.<locals>.on_message", "main", "<module>", "serve",
}  # fmt: skip


def frame_package(frame: str) -> str:
    """``func (path/to/file.py:12)`` -> the top-level package of the file."""
    path = frame.rsplit("(", 1)[-1].replace("\\", "/")
    if "agents_a365" in path:
        return "agents_a365"
    if "/site-packages/" in path:
        return path.split("/site-packages/", 1)[1].split("/")[0].split(".")[0].split(":")[0]
    return "bench host" if "scripts/bench" in path or "hosted_agent" in path else "python stdlib/other"


def summarize_py_spy(raw: Path, top: int = 30) -> Profile:
    def function(frame: str) -> str:
        name, _, where = frame.partition(" (")
        return f"{name} ({frame_package(frame)}: {Path(where.rstrip(')').rsplit(':', 1)[0]).name})"

    by_function, inclusive, under_sdk, total = Counter[str](), Counter[str](), 0, 0
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        frames = [f for f in stack.split(";") if " (" in f and not f.startswith(("process ", "thread "))]
        if not frames or not count_text.isdigit():
            continue
        total += (count := int(count_text))
        by_function[function(frames[-1])] += count
        for name in {function(f) for f in frames}:
            inclusive[name] += count
        under_sdk += count if any(frame_package(f) == "agents_a365" for f in frames) else 0
    total = total or 1
    plumbing = {"aiohttp", "anyio", "python stdlib/other"}
    informative = [
        (n, c / total)
        for n, c in inclusive.most_common()
        if n.partition(" (")[0] not in _PIPELINE and n.partition(" (")[2].split(":")[0] not in plumbing
    ]
    self_functions = [(n, c / total) for n, c in by_function.most_common(top)]
    return Profile("py-spy", self_functions, informative[:top], under_sdk / total, str(raw))


def cprofile_routes(web_app: web.Application) -> None:
    """``POST /_bench/profile/start|stop?path=`` on a host: cProfile on its event loop's thread."""
    profiler: list[cProfile.Profile] = []

    async def start(request: web.Request) -> web.Response:
        profiler[:] = [cProfile.Profile()]
        profiler[0].enable()
        return web.Response(text="started")

    async def stop(request: web.Request) -> web.Response:
        if profiler:
            profiler[0].disable()
            profiler.pop().dump_stats(request.query["path"])
        return web.Response(text="stopped")

    web_app.router.add_post("/_bench/profile/start", start)
    web_app.router.add_post("/_bench/profile/stop", stop)
