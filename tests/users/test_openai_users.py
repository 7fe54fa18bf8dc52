"""OpenAI: one long-lived agent object serving two users never sends one user's token in the other's turn.

The host shape is that of Microsoft's OpenAI sample: one agent for the process, and each turn does
``self.agent = await service.add_tool_servers_to_agent(self.agent, ...)`` then ``Runner.run(self.agent, text)``
(no run context). Every assertion is about the requests the emulator received.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import agents
import pytest
from agents import Agent, Runner
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import Emulator
from agents_a365.tooling.extensions.openai import McpToolRegistrationService
from support.platform import AUTH_HANDLER, production_config
from users._users import mail_calls, openai_mail_model, user_turn

pytestmark = pytest.mark.filterwarnings("ignore:Use `streamable_http_client` instead:DeprecationWarning")


@pytest.fixture(autouse=True)
def _no_tracing() -> None:
    agents.set_tracing_disabled(True)  # no key: the SDK must not export traces


@pytest.fixture
async def service(emulator: Emulator) -> AsyncIterator[McpToolRegistrationService]:
    async with McpToolRegistrationService(configuration=production_config(emulator)) as svc:
        yield svc


class SampleStyleAgent:
    """Microsoft's sample, ported by changing its imports: the agent object lives as long as the process."""

    def __init__(self, service: McpToolRegistrationService, emu: Emulator) -> None:
        self.service = service
        self.auth = emu.authorization()
        self.agent = Agent(name="mailer", instructions="Send mail.", model=openai_mail_model())

    async def on_message(
        self, context: TurnContext, pause: Callable[[], Awaitable[None]] | None = None
    ) -> str:
        self.agent = await self.service.add_tool_servers_to_agent(
            self.agent, auth=self.auth, auth_handler_name=AUTH_HANDLER, context=context
        )
        if pause is not None:  # e.g. a typing indicator sent here: other turns run meanwhile
            await pause()
        result = await Runner.run(self.agent, context.activity.text)
        return str(result.final_output)


async def _in_task(coro: Awaitable[str]) -> str:
    return await asyncio.ensure_future(coro)  # a task per turn, as hosting runs each request


async def test_users_alternating_on_one_agent_object_each_send_their_own_token(
    emulator: Emulator, service: McpToolRegistrationService
) -> None:
    host = SampleStyleAgent(service, emulator)
    mail_servers: list[object] = []
    for user in ("alice", "bob", "alice", "bob"):
        assert await _in_task(host.on_message(user_turn(emulator, user))) == "sent"
        mail_servers.append(next(s for s in host.agent.mcp_servers if s.name == "mail"))
    assert mail_calls(emulator) == [("alice", "alice"), ("bob", "bob"), ("alice", "alice"), ("bob", "bob")]
    # Replaced each turn, never accumulated: the agent holds the last turn's two servers (an earlier turn's
    # need no closing: they hold no user's token).
    assert sorted(s.name for s in host.agent.mcp_servers) == ["calendar", "mail"]
    assert len({id(s) for s in mail_servers}) == 4


async def test_users_alternating_in_one_task_each_send_their_own_token(
    emulator: Emulator, service: McpToolRegistrationService
) -> None:
    host = SampleStyleAgent(service, emulator)
    for user in ("alice", "bob", "alice"):
        await host.on_message(user_turn(emulator, user))
    assert mail_calls(emulator) == [("alice", "alice"), ("bob", "bob"), ("alice", "alice")]


async def test_concurrent_turns_on_one_agent_object_never_cross(
    emulator: Emulator, service: McpToolRegistrationService
) -> None:
    host = SampleStyleAgent(service, emulator)
    bob_registered = asyncio.Event()

    async def bob_pause() -> None:
        bob_registered.set()

    # Alice registers, then Bob replaces self.agent before Alice's Runner.run reads it: Alice's run
    # gets Bob's servers. They hold no token: her run's requests resolve her turn (her task's), so her token.
    alice, bob = await asyncio.gather(
        host.on_message(user_turn(emulator, "alice"), pause=bob_registered.wait),
        host.on_message(user_turn(emulator, "bob"), pause=bob_pause),
        return_exceptions=True,
    )
    assert alice == bob == "sent"
    assert sorted(mail_calls(emulator)) == [("alice", "alice"), ("bob", "bob")]


async def test_a_run_context_naming_another_user_makes_the_calls_with_that_users_token(
    emulator: Emulator, service: McpToolRegistrationService
) -> None:
    alice, bob = user_turn(emulator, "alice"), user_turn(emulator, "bob")
    template = Agent(name="mailer", model=openai_mail_model())
    async with service.connected_agent(template, emulator.authorization(), AUTH_HANDLER, alice) as agent:
        # Registered in Alice's turn, run for Bob (Runner.run(..., context=turn_context)): Bob's token.
        assert (await Runner.run(agent, "from bob", context=bob)).final_output == "sent"
        assert (await Runner.run(agent, "from alice", context=alice)).final_output == "sent"
    assert mail_calls(emulator) == [("bob", "bob"), ("alice", "alice")]


async def test_servers_replaced_during_a_turn_stay_open_until_that_turn_ends(
    emulator: Emulator, service: McpToolRegistrationService
) -> None:
    host = SampleStyleAgent(service, emulator)
    alice_registered, bob_done = asyncio.Event(), asyncio.Event()

    async def alice_turn() -> str:  # keeps the agent it registered, as a host may
        turn = user_turn(emulator, "alice")
        agent = host.agent = await service.add_tool_servers_to_agent(
            host.agent, host.auth, AUTH_HANDLER, turn
        )
        alice_registered.set()
        await bob_done.wait()  # Bob's registration replaces (and retires) Alice's servers meanwhile
        return str((await Runner.run(agent, "from alice")).final_output)

    async def bob_turn() -> str:
        await alice_registered.wait()
        try:
            return await host.on_message(user_turn(emulator, "bob"))
        finally:
            bob_done.set()

    assert await asyncio.gather(alice_turn(), bob_turn()) == ["sent", "sent"]
    assert sorted(mail_calls(emulator)) == [("alice", "alice"), ("bob", "bob")]
