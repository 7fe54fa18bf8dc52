"""A real ``redis-server`` (Debian's package) on a free 127.0.0.1 port, for the tests and the replicas bench.

The package is installed when missing (``apt-get``, as root on Debian: ``tests/support/installs.py``), once
for parallel pytest-xdist workers. Each server runs with no persistence and is stopped by its owner (a session
fixture, the bench).
"""

from __future__ import annotations

import socket
import subprocess
import time

import redis

START_TIMEOUT = 10.0


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
