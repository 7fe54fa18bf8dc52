"""``A365Agent`` works a run's tools out once: the Agents SDK asks for them before each model call and again while
it resolves tool calls, and a run's user, servers and definitions do not change within it. A new run asks again;
the agent keeps nothing of a run that is over."""

from __future__ import annotations

import gc
import weakref
from collections.abc import AsyncIterator
from typing import Any

import agents
import pytest
from agents import Runner

from agents_a365.emulator import Emulator
from agents_a365.tooling import McpToolServerConfigurationService
from agents_a365.tooling.extensions import openai as oa
from support.platform import AUTH_HANDLER, production_config
from users._users import mail_calls, openai_mail_model, user_turn

pytestmark = pytest.mark.filterwarnings("ignore:Use `streamable_http_client` instead:DeprecationWarning")


@pytest.fixture(autouse=True)
def _no_tracing() -> None:
    agents.set_tracing_disabled(True)


@pytest.fixture
async def core(emulator: Emulator) -> AsyncIterator[McpToolServerConfigurationService]:
    async with McpToolServerConfigurationService(production_config(emulator)) as service:
        yield service


async def test_a_run_works_its_tools_out_once_and_the_next_run_again(
    emulator: Emulator, core: McpToolServerConfigurationService, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers = oa.McpToolRegistrationService(core).agent_servers(emulator.authorization(), AUTH_HANDLER)
    asked: list[Any] = []  # the run contexts the servers were asked to list tools for
    list_tools = servers.list_tools

    async def counted(run_context: Any = None, agent: Any = None) -> Any:
        asked.append(run_context)
        return await list_tools(run_context, agent)

    monkeypatch.setattr(servers, "list_tools", counted)  # the real listing (MCPServer's API), counted
    agent = oa.A365Agent(name="mailer", model=openai_mail_model(), agent_servers=servers)

    # Two model calls (send_email, then the answer) and the tool call's resolution in between: asked once.
    alice, bob = user_turn(emulator, "alice"), user_turn(emulator, "bob")
    first = await Runner.run(agent, alice.activity.text, context=alice)
    assert str(first.final_output) == "sent"
    assert asked == [first.context_wrapper]
    second = await Runner.run(agent, bob.activity.text, context=bob)
    assert str(second.final_output) == "sent"
    assert asked == [first.context_wrapper, second.context_wrapper]  # Bob's run: its own tools, asked again
    assert mail_calls(emulator) == [("alice", "alice"), ("bob", "bob")]  # each call with its user's token

    runs = [weakref.ref(first.context_wrapper), weakref.ref(second.context_wrapper)]
    del first, second
    asked.clear()
    gc.collect()
    assert [run() for run in runs] == [None, None]  # the agent holds no run once it is over
