"""The hosted example agent over real HTTP: a channel posts to /api/messages, replies reach the connector."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType

import pytest
from aiohttp import web

from agents_a365.emulator import Emulator, channel_activity, post_activity
from agents_a365.tooling import McpToolServerConfigurationService, ToolingConfiguration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "hosted_agent" / "agent.py"


def _load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hosted_agent_example", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def example() -> ModuleType:
    return _load_example()


async def _serve(web_app: web.Application) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(web_app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}/api/messages"


@pytest.fixture
async def tooling(emulator: Emulator) -> AsyncIterator[McpToolServerConfigurationService]:
    config = ToolingConfiguration(mcp_platform_endpoint=emulator.base_url, use_tooling_manifest=False)
    async with McpToolServerConfigurationService(config) as service:
        yield service


@pytest.mark.parametrize(
    ("orchestrator", "channel", "text", "tool_fragment"),
    [
        ("langchain", "msteams", "When am I free tomorrow, and what is my latest email?", "Quarterly report"),
        ("openai", "agents:email", "Email Ada that the meeting is tomorrow at 10.", "sent-1"),
    ],
)
async def test_hosted_agent_answers_a_channel_over_http(
    example: ModuleType,
    emulator: Emulator,
    tooling: McpToolServerConfigurationService,
    orchestrator: str,
    channel: str,
    text: str,
    tool_fragment: str,
) -> None:
    app, adapter = example.create_agent_app(
        orchestrator, tooling, tool_authorization=emulator.authorization()
    )
    runner, url = await _serve(example.create_web_app(app, adapter, anonymous=True))
    try:
        activity = channel_activity(text, service_url=emulator.connector_url, channel_id=channel)
        response = await post_activity(url, activity, timeout=60)
    finally:
        await runner.cleanup()
    assert response.status_code in (200, 202)
    replies = emulator.channel_replies
    assert replies[0]["type"] == "typing"
    messages = [r for r in replies if r["type"] == "message"]
    assert len(messages) == 1
    assert tool_fragment in messages[0]["text"], messages[0]["text"]
    conversation_id = activity["conversation"]["id"]
    assert all(r["conversation"]["id"] == conversation_id for r in replies)
    [record] = [r for r in emulator.requests_for("rtp") if r.json["conversationId"] == conversation_id]
    main, _, sub = channel.partition(":")
    assert record.headers["x-ms-channel-id"] == main
    if sub:
        assert record.headers["x-ms-subchannel-id"] == sub
    assert emulator.requests_for("mcp")
