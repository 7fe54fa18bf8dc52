"""The hosted example agent over real HTTP: a channel posts to /api/messages, replies reach the connector."""

from __future__ import annotations

from types import ModuleType

import pytest

from agents_a365.emulator import Emulator, Fault, channel_activity, post_activity
from support.hosted import load_hosted_agent, serve_hosted_agent


@pytest.fixture(scope="module")
def example() -> ModuleType:
    return load_hosted_agent()


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
    orchestrator: str,
    channel: str,
    text: str,
    tool_fragment: str,
) -> None:
    async with serve_hosted_agent(example, orchestrator, emulator) as url:
        activity = channel_activity(text, service_url=emulator.connector_url, channel_id=channel)
        response = await post_activity(url, activity, timeout=60)
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


async def test_a_failed_turn_is_logged_and_the_user_gets_a_generic_reply(
    example: ModuleType,
    emulator: Emulator,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """hosting-core's default error handler prints the traceback (blocking the loop once a pipe is full) and
    sends the error's text to the user; the example's handler replies generically (the app logged the error)."""
    emulator.faults.set("gateway", Fault(status=400))
    async with serve_hosted_agent(example, "langchain", emulator) as url:
        activity = channel_activity("What are my notes?", service_url=emulator.connector_url)
        response = await post_activity(url, activity, timeout=60)
    assert response.status_code < 500
    messages = [r["text"] for r in emulator.channel_replies if r["type"] == "message"]
    assert messages == [example.TURN_ERROR_REPLY]  # not "Exception caught : tooling gateway … HTTP 400"
    logged = [r for r in caplog.records if r.exc_info is not None]
    assert len(logged) == 1  # by AgentApplication, once
    assert "answered HTTP 400" in logged[0].getMessage()
    assert "Traceback" not in capsys.readouterr().out  # nothing printed
