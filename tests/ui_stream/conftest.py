"""UI message stream tests: the real AI SDK client validates our SSE (``npm ci``: ``tests/support/installs.py``)."""

from __future__ import annotations

import asyncio
import json
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


@pytest.fixture
def validate(node: Node, node_client: Path) -> Validate:
    """``await validate({"name": sse_text})`` -> what the real client made of each stream."""

    async def run(scenarios: dict[str, str]) -> dict[str, Any]:
        process = await asyncio.create_subprocess_exec(
            node.node,
            str(node_client),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=JS_DIR,
            env=node.env(),
        )
        try:
            stdout, stderr = await asyncio.wait_for(
                process.communicate(json.dumps(scenarios).encode()), timeout=NODE_TIMEOUT
            )
        except TimeoutError:
            process.kill()
            await process.wait()
            raise
        assert process.returncode == 0, stderr.decode()
        results: dict[str, Any] = json.loads(stdout)
        for name, result in results.items():
            assert "fatal" not in result, f"{name}: {result.get('fatal')}"
        return results

    return run
