"""UI message stream tests: the real AI SDK client validates our SSE (``npm ci``: ``tests/support/installs.py``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import set_tracing_disabled

from node_tools import Node
from support.installs import ensure_npm
from support.ui_client import Validate

JS_DIR = Path(__file__).parent / "js"
EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples"
NODE_TIMEOUT = 120


# No OpenAI key in tests: the Agents SDK must not try to export traces.
set_tracing_disabled(True)


@pytest.fixture(scope="session")
def node_client(node: Node) -> Path:
    """Installs the pinned ``ai`` package from the npm registry (``npm ci``, lock file committed)."""
    return ensure_npm(node, "ui_stream") / "parse.mjs"


class _Client:
    """One Node process running the real client for a whole test run (a process a stream cost ~0.5 s of CPU
    each, mostly Node starting and loading ``ai``): a request a line, an answer a line, one at a time."""

    def __init__(self, node: Node, script: Path) -> None:
        self.node, self.script = node, script
        self.process: subprocess.Popen[bytes] | None = None
        self.lock = threading.Lock()

    def ask(self, line: bytes) -> bytes:
        with self.lock:
            if self.process is None or self.process.poll() is not None:
                self.close()  # a client that exited or was killed: its pipes closed, another started
                self.process = subprocess.Popen(
                    [self.node.node, str(self.script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    cwd=JS_DIR, env=self.node.env(),
                )  # fmt: skip
            assert self.process.stdin is not None
            assert self.process.stdout is not None
            self.process.stdin.write(line + b"\n")
            self.process.stdin.flush()
            return self.process.stdout.readline()

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()  # a hung client: the next request starts another

    def close(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        with contextlib.suppress(OSError):  # its end of the pipe may be gone already
            process.stdin.close()  # type: ignore[union-attr]
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()  # type: ignore[union-attr]


@pytest.fixture(scope="session")
def node_process(node: Node, node_client: Path) -> Iterator[_Client]:
    client = _Client(node, node_client)
    yield client
    client.close()


@pytest.fixture
def validate(node_process: _Client) -> Validate:
    """``await validate({"name": sse_text})`` -> what the real client made of each stream."""

    async def run(scenarios: dict[str, str]) -> dict[str, Any]:
        request = asyncio.to_thread(node_process.ask, json.dumps(scenarios).encode())
        try:
            answer = await asyncio.wait_for(request, timeout=NODE_TIMEOUT)
        except TimeoutError:
            node_process.kill()
            raise
        assert answer, "the Node client exited (its stderr is the test run's)"
        results: dict[str, Any] = json.loads(answer)
        for name, result in results.items():
            assert "fatal" not in result, f"{name}: {result.get('fatal')}"
        return results

    return run
