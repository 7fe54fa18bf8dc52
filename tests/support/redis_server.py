"""A real ``redis-server`` (Debian's package) on a free 127.0.0.1 port, for the tests and the replicas bench.

The package is installed when missing, as the browser tests install Chromium (``apt-get``, as root on
Debian), under a file lock so that parallel pytest-xdist workers install it once. Each server runs with no
persistence and is stopped by its owner (a session fixture, the bench).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import redis

APT_TIMEOUT = 600
LOCK = Path(tempfile.gettempdir()) / "a365-apt-redis.lock"
START_TIMEOUT = 10.0


def _which() -> str | None:
    return (
        os.environ.get("A365_REDIS_SERVER")
        or shutil.which("redis-server")
        or ("/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None)
    )


def find_redis_server() -> tuple[str | None, str]:
    """``(path, '')``, installing Debian's ``redis-server`` when possible, else ``(None, why not)``."""
    if found := _which():
        return found, ""
    if shutil.which("apt-get") is None:
        return None, "no redis-server and no apt-get on this machine"
    if os.geteuid() != 0:
        return None, "no redis-server and not root (run: sudo apt-get install -y redis-server)"
    # policy-rc.d's 101 would stop the package's own service starting, but it is the machine's file: the
    # package's service is stopped after the install instead (the tests run their own servers).
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    with LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be installing it: wait, then look again
        if found := _which():
            return found, ""
        for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "redis-server"]):
            try:
                done = subprocess.run(command, capture_output=True, text=True, timeout=APT_TIMEOUT, env=env)
            except subprocess.TimeoutExpired:
                return None, f"{' '.join(command)} did not finish within {APT_TIMEOUT} s"
            if done.returncode != 0:
                return None, f"{' '.join(command)} failed: {done.stderr[-500:]}"
        with contextlib.suppress(
            OSError, subprocess.SubprocessError
        ):  # its init script, where it started one
            subprocess.run(["service", "redis-server", "stop"], capture_output=True, timeout=30)
    found = _which()
    return found, "" if found else "apt-get installed no redis-server"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """One ``redis-server`` process on 127.0.0.1; :meth:`stop` and :meth:`start` again keep its port."""

    def __init__(self, executable: str, port: int | None = None) -> None:
        self.executable = executable
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        args = ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        args += ["--daemonize", "no", "--logfile", ""]
        self.process = subprocess.Popen(
            [self.executable, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                with redis.Redis(port=self.port, socket_timeout=1) as client:
                    client.ping()
                    return
            except redis.ConnectionError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"redis-server did not start on port {self.port}") from None
                time.sleep(0.02)  # waiting for a process to listen, not for time to pass

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=5)

    def contents(self) -> dict[bytes, bytes]:
        """Every key and its value (all are strings here)."""
        with self.client() as client:
            return {key: client.get(key) or b"" for key in client.scan_iter(count=1000)}

    def flush(self) -> None:
        with self.client() as client:
            client.flushall()
