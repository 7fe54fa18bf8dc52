"""Microsoft's own client drives the hosted agent: the Microsoft 365 Agents Playground (npm, pinned here).

The Playground (``@microsoft/m365agentsplayground``, installed by the test with ``npm ci``) runs headless with
telemetry off; it serves a mocked connector and posts Activities to the hosted example agent on channel
``msteams`` or ``agents``. The test talks to it the way its web UI does: a message through its HTTP API
(``POST /_conversation/v1/conversations/{id}/messages``), the replies over its WebSocket. The agent gets its
tools from the emulator and sends the turn to the emulator's threat protection.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType
from typing import Any

import aiohttp
import pytest

from agents_a365.emulator import Emulator
from node_tools import Node
from support.hosted import load_hosted_agent, serve_hosted_agent
from support.installs import ensure_npm

ROOT = Path(__file__).resolve().parents[2]
PLAYGROUND_DIR = Path(__file__).parent / "playground"
CLI = PLAYGROUND_DIR / "node_modules" / "@microsoft" / "m365agentsplayground" / "cli.js"
START_TIMEOUT = 60.0
REPLY_TIMEOUT = 60.0
CONVERSATION_ID = "conv-playground-1"
USER_ID = "user-id-0"  # the Playground's current user (its /_internal/v1/config)


@pytest.fixture(scope="module")
def playground(node: Node) -> Path:
    """The pinned Playground CLI (``npm ci`` against the committed lock file, once)."""
    ensure_npm(node, "playground")
    return CLI


@pytest.fixture(scope="module")
def hosted() -> ModuleType:
    return load_hosted_agent()


@contextlib.asynccontextmanager
async def run_playground(node: Node, cli: Path, endpoint: str, channel: str, cwd: Path) -> AsyncIterator[int]:
    """The Playground headless (``TEAMSAPPTESTER_BROWSER=none``), telemetry off; yields its port."""
    env = {**node.env(), "TEAMSAPPTESTER_BROWSER": "none"}
    process = await asyncio.create_subprocess_exec(
        node.node,
        str(cli),
        "--app-endpoint",
        endpoint,
        "--channel-id",
        channel,
        "--port",
        "0",
        "--disable-telemetry",
        "--conversation-id",
        CONVERSATION_ID,
        cwd=cwd,  # it writes a devTools/ folder where it runs
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    assert process.stdout is not None
    seen: list[str] = []
    try:
        async with asyncio.timeout(START_TIMEOUT):
            while True:
                raw = await process.stdout.readline()
                if not raw:
                    pytest.fail(f"the Playground exited before listening: {''.join(seen)[-2000:]}")
                seen.append(raw.decode(errors="replace"))
                match = re.search(r"Listening on (\d+)", seen[-1])
                if match:
                    break
        yield int(match.group(1))
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            async with asyncio.timeout(10):
                await process.wait()
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()


async def send_through_playground(port: int, text: str) -> tuple[list[dict[str, Any]], int]:
    """Post ``text`` as the Playground's user and collect its WebSocket events until the agent's message."""
    events: list[dict[str, Any]] = []
    base = f"http://127.0.0.1:{port}"
    body = {"type": "text", "text": text, "textFormat": "plain", "from": {"id": USER_ID}}
    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=REPLY_TIMEOUT)) as session,
        session.ws_connect(f"ws://127.0.0.1:{port}/_ws_conversation/v1/conversations/stream") as ws,
    ):
        post = f"{base}/_conversation/v1/conversations/{CONVERSATION_ID}/messages"
        async with session.post(post, json=body) as response:
            status = response.status
        async with asyncio.timeout(REPLY_TIMEOUT):
            async for frame in ws:
                if frame.type != aiohttp.WSMsgType.TEXT:
                    continue
                events.append(json.loads(frame.data))
                if events[-1].get("action") == "createMessage":
                    break
    return events, status


@pytest.mark.parametrize(
    ("channel", "orchestrator", "text", "tool_result"),
    [
        ("msteams", "langchain", "When am I free tomorrow, and what is my latest email?", "Quarterly report"),
        ("agents", "openai", "Email Ada that the meeting is tomorrow at 10.", "sent-1"),
    ],
)
async def test_the_playground_drives_the_hosted_agent(
    node: Node,
    playground: Path,
    hosted: ModuleType,
    emulator: Emulator,
    tmp_path: Path,
    channel: str,
    orchestrator: str,
    text: str,
    tool_result: str,
) -> None:
    async with (
        serve_hosted_agent(hosted, orchestrator, emulator) as endpoint,
        run_playground(node, playground, endpoint, channel, tmp_path) as port,
    ):
        events, status = await send_through_playground(port, text)
    assert status == 200
    # The Playground got the typing indicator, then the reply with the MCP tool's result.
    actions = [e.get("action") for e in events]
    assert actions[0] == "typing"
    reply = events[-1]
    assert reply["action"] == "createMessage"
    assert reply["actionConversationId"] == CONVERSATION_ID
    assert tool_result in reply["message"]["text"]
    # The tool really ran on the emulator's MCP server, for this user's turn.
    assert [r for r in emulator.requests_for("mcp") if r.jsonrpc_method == "tools/call"]
    # Threat protection got the Playground's conversation, with the headers of its channel.
    [record] = [r for r in emulator.requests_for("rtp") if r.json["conversationId"] == CONVERSATION_ID]
    assert record.json["userMessage"] == text
    assert record.headers["x-ms-channel-id"] == channel
    assert any(m["role"] == "tool" and tool_result in m["content"] for m in record.json["chatHistory"])
