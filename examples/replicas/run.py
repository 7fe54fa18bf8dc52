"""Several replicas of the hosted agent sharing one encrypted cache in Redis, behind a round-robin balancer, all
on loopback: ``uv run --frozen python examples/replicas/run.py [--replicas 3] [--users 3]``.

Starts the platform emulator, a ``redis-server`` (Debian: ``apt-get install redis-server``), N processes of
``examples/hosted_agent/agent.py`` (each with ``A365_CACHE_REDIS_URL`` and ``A365_CACHE_KEYS``: that is all a
host configures) and the balancer; sends each user's turns through the balancer (so to a different replica each
time) and prints what reached the gateway and what Redis holds. Stops everything on the way out.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import redis
from aiohttp import web

from agents_a365.emulator import channel_activity

sys.path.insert(0, str(Path(__file__).resolve().parent))
from balancer import balancer

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "examples" / "hosted_agent" / "agent.py"
Spawn = Callable[..., subprocess.Popen[Any]]
"""How a process starts: ``subprocess.Popen`` (the replicas benchmark passes a fork server's, which is faster)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def wait_until_listening(
    port: int, process: subprocess.Popen[bytes], what: str, timeout: float = 300
) -> None:
    async with asyncio.timeout(timeout):
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{what} exited with {process.returncode}")
            with contextlib.suppress(OSError):
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                return
            await asyncio.sleep(0.05)


@contextlib.contextmanager
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes started into the list are stopped (SIGTERM, then SIGKILL) on the way out."""
    started: list[subprocess.Popen[bytes]] = []
    try:
        yield started
    finally:
        for process in started:
            process.terminate()
        for process in started:
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def start(
    started: list[subprocess.Popen[bytes]],
    command: list[str],
    what: str,
    port: int,
    env: Mapping[str, str] | None = None,
    log: Path | None = None,
    spawn: Spawn = subprocess.Popen,
) -> None:
    """Start ``command`` into ``started`` and wait until it listens on ``port``; its output to ``log``."""
    with open(log or os.devnull, "ab") as output:  # noqa: ASYNC230 (opening a local file)
        process = spawn(  # fork + exec of our own commands
            command, env={**os.environ, **(env or {})}, cwd=ROOT, stdout=output, stderr=output
        )
    started.append(process)
    await wait_until_listening(port, process, what)


async def start_platform(started: list[subprocess.Popen[bytes]], config: Path | None = None) -> str:
    port = free_port()
    args = ["--config", str(config)] if config else []
    await start(
        started,
        [sys.executable, "-m", "agents_a365.emulator", "--port", str(port), "--log-level", "error", *args],
        "emulator",
        port,
    )
    return f"http://127.0.0.1:{port}"


async def start_redis(started: list[subprocess.Popen[bytes]]) -> int:
    executable = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not Path(executable).exists():  # noqa: ASYNC240 (one stat)
        sys.exit("redis-server is not installed (Debian: apt-get install redis-server)")
    port = free_port()
    await start(
        started,
        [executable, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        "redis-server",
        port,
    )
    return port


async def start_replicas(
    started: list[subprocess.Popen[bytes]],
    count: int,
    platform: str,
    env: Mapping[str, str],
    logs: Path | None = None,
    spawn: Spawn = subprocess.Popen,
) -> list[str]:
    """``count`` processes of the hosted agent (their URLs), with ``env`` (the second level's settings)."""
    ports = [free_port() for _ in range(count)]
    await asyncio.gather(
        *(
            start(
                started,
                [sys.executable, str(AGENT), "--port", str(port)],
                f"replica {i}",
                port,
                {"MCP_PLATFORM_ENDPOINT": platform, **env},
                logs / f"replica-{i}.log" if logs else None,
                spawn,
            )
            for i, port in enumerate(ports)
        )
    )
    return [f"http://127.0.0.1:{port}" for port in ports]


@contextlib.asynccontextmanager
async def serve(app: web.Application) -> AsyncIterator[str]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port, backlog=4096).start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


def cache_env(redis_port: int) -> dict[str, str]:
    """A host's settings of the second level: where Redis is, and the key that seals what is stored."""
    key = base64.b64encode(
        os.urandom(32)
    ).decode()  # in production: from your secret store, the same everywhere
    return {"A365_CACHE_REDIS_URL": f"redis://127.0.0.1:{redis_port}/0", "A365_CACHE_KEYS": f"k1:{key}"}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--users", type=int, default=3)
    args = parser.parse_args()
    with processes() as started:
        platform = await start_platform(started)
        redis_port = await start_redis(started)
        replicas = await start_replicas(started, args.replicas, platform, cache_env(redis_port))
        async with serve(balancer(replicas)) as front, httpx.AsyncClient(timeout=60) as http:
            for user in (f"user-{n}" for n in range(args.users)):
                for turn in range(args.replicas):  # one turn on each replica
                    activity = channel_activity(
                        f"What are my notes? ({turn})",
                        service_url=platform,
                        user_id=user,
                        conversation_id=f"c-{user}",
                    )
                    response = await http.post(f"{front}/api/messages", json=activity)
                    response.raise_for_status()
            recorded = (await http.get(f"{platform}/_emulator/requests")).json()
        gateway = [r for r in recorded if r.get("route") == "gateway"]
        with redis.Redis(port=redis_port) as store:
            kinds = sorted({key.split(b":")[1].decode() for key in store.scan_iter()})
            held = store.dbsize()
        print(f"{args.users} users x {args.replicas} turns, one on each of {args.replicas} replicas")  # noqa: T201
        print(f"gateway requests: {len(gateway)} (one per user: the other replicas read Redis)")  # noqa: T201
        print(f"Redis holds {held} sealed entries ({', '.join(kinds)}); keys are SHA-256 digests")  # noqa: T201


if __name__ == "__main__":
    asyncio.run(main())
