"""LangChain: tools or an agent kept across turns never send one user's token in another user's turn.

Two host shapes: an agent compiled in the first turn and kept (invoked with ``context=turn_identity(turn)``,
the documented way), and tools accumulated turn after turn (``self.tools = toolset.merge(self.tools)``, the
LangChain analogue of Microsoft's OpenAI sample). Every assertion is about the requests the emulator received.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import Emulator
from agents_a365.tooling import TurnMismatchError
from agents_a365.tooling.extensions.langchain import McpToolRegistrationService, TurnIdentity, turn_identity
from support.platform import AUTH_HANDLER, production_config
from users._users import langchain_mail_model, mail_calls, user_turn


@pytest.fixture
async def service(emulator: Emulator) -> AsyncIterator[McpToolRegistrationService]:
    async with McpToolRegistrationService(configuration=production_config(emulator)) as svc:
        yield svc


class KeptAgent:
    """Builds its agent in the first turn and keeps it for every later turn, whoever the user is."""

    def __init__(self, service: McpToolRegistrationService, emu: Emulator) -> None:
        self.service, self.auth, self.agent = service, emu.authorization(), None

    async def on_message(self, turn: TurnContext) -> str:
        if self.agent is None:
            options = {"model": langchain_mail_model(), "context_schema": TurnIdentity}
            self.agent = await self.service.add_tool_servers_to_agent(
                self.auth, AUTH_HANDLER, turn, agent_options=options
            )
        result = await self.agent.ainvoke(
            {"messages": [HumanMessage(turn.activity.text)]}, context=turn_identity(turn)
        )
        return str(result["messages"][-1].text)


async def _turn(coro: Awaitable[Any]) -> Any:
    try:
        return await asyncio.ensure_future(coro)  # a task per turn, as hosting runs each request
    except TurnMismatchError as exc:
        return exc


async def test_users_alternating_on_one_kept_agent_each_send_their_own_token(
    emulator: Emulator, service: McpToolRegistrationService
) -> None:
    host = KeptAgent(service, emulator)
    outcomes = [await _turn(host.on_message(user_turn(emulator, u))) for u in ("alice", "bob", "alice")]
    assert outcomes == ["sent", "sent", "sent"]  # built in Alice's turn, used by Bob with his own token
    assert mail_calls(emulator) == [("alice", "alice"), ("bob", "bob"), ("alice", "alice")]


async def test_concurrent_turns_on_one_kept_agent_each_send_their_own_token(
    emulator: Emulator, service: McpToolRegistrationService
) -> None:
    host = KeptAgent(service, emulator)
    await host.on_message(user_turn(emulator, "alice"))  # builds the agent
    alice, bob = await asyncio.gather(
        _turn(host.on_message(user_turn(emulator, "alice"))),
        _turn(host.on_message(user_turn(emulator, "bob"))),
    )
    assert alice == bob == "sent"
    assert sorted(mail_calls(emulator)) == [("alice", "alice"), ("alice", "alice"), ("bob", "bob")]


async def test_tools_kept_across_turns_are_replaced_by_the_turns_own(
    emulator: Emulator, service: McpToolRegistrationService
) -> None:
    auth, model = emulator.authorization(), langchain_mail_model()
    kept: list[Any] = []

    async def on_message(turn: TurnContext) -> None:
        nonlocal kept
        toolset = await service.get_mcp_toolset(auth, AUTH_HANDLER, turn)
        kept = toolset.merge(kept)  # the earlier turn's MCP tools are replaced, not kept
        agent = create_agent(model, tools=kept)
        await agent.ainvoke({"messages": [HumanMessage(turn.activity.text)]})  # no context: none needed

    for user in ("alice", "bob", "alice"):
        await _turn(on_message(user_turn(emulator, user)))
    assert mail_calls(emulator) == [("alice", "alice"), ("bob", "bob"), ("alice", "alice")]
    assert "mail_send_email" not in {t.name for t in kept}  # nothing renamed against a stale copy
