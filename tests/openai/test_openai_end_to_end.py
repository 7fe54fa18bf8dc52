"""A real ``Runner.run`` (scripted model) calls an emulator MCP tool through a registered agent,
then the run's session is sent to threat protection."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agents import Agent, Runner, SQLiteSession, Tool
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import Emulator, EmulatorAuthorization
from agents_a365.tooling.extensions.openai import McpToolRegistrationService
from support.leaks import leaked_tasks, other_tasks
from support.platform import AUTH_HANDLER
from support.scripted_openai import ScriptedModel, assistant_message, function_call, tool_outputs

# The SDK (not this package) opens its MCP v1 transport with mcp's deprecated streamablehttp_client.
pytestmark = pytest.mark.filterwarnings("ignore:Use `streamable_http_client` instead:DeprecationWarning")


async def test_run_calls_emulator_tool_and_history_reaches_threat_protection(
    emulator: Emulator,
    service: McpToolRegistrationService,
    authorization: EmulatorAuthorization,
    turn: TurnContext,
) -> None:
    def call_send_email(items: list[Any], tools: list[Tool]) -> list[Any]:
        assert "send_email" in {t.name for t in tools}
        return [function_call("send_email", {"to": "bob@contoso.example", "subject": "Hi", "body": "Lunch?"})]

    def answer_with_tool_result(items: list[Any], tools: list[Tool]) -> list[Any]:
        (output,) = tool_outputs(items)
        sent = json.loads(output)
        return [assistant_message(f"Done: email {sent['id']} is {sent['status']}.")]

    model = ScriptedModel([call_send_email, answer_with_tool_result])
    template = Agent(name="assistant", instructions="Help with mail.", model=model)
    session = SQLiteSession("conversation-1")
    tasks_before = other_tasks()
    try:
        async with service.connected_agent(template, authorization, AUTH_HANDLER, turn) as agent:
            result = await Runner.run(agent, "Email Bob about lunch", session=session)

        # The MCP tool really ran on the emulator: its state changed.
        (email,) = emulator.servers["mail"].state.sent
        assert email.to == ["bob@contoso.example"]
        assert email.subject == "Hi"
        # ... and its result reached the final output.
        assert result.final_output == f"Done: email {email.id} is sent."
        assert not await leaked_tasks(tasks_before)

        sent = await service.send_chat_history(turn, session)
        assert sent.succeeded, sent.errors
        (request,) = emulator.chat_messages
        history = request["chatHistory"]
        assert [m["role"] for m in history] == ["user", "tool", "assistant"]
        assert history[0]["content"] == "Email Bob about lunch"
        assert json.loads(history[1]["content"])["id"] == email.id  # the tool result, for injection checks
        assert history[2]["content"] == result.final_output
        assert request["userMessage"] == turn.activity.text
    finally:
        session.close()
