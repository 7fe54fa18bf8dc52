"""Agents built once (call-time identity) on replicas sharing the second level: a user's first turn on another
replica takes that user's tokens, servers and definitions from Redis, and its tool calls still carry that user's
own token. Tool definitions are one entry for the users of a tenant's agent, never across tenants."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import agents
import pytest
from agents import Agent, Runner
from langchain_core.messages import HumanMessage
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import Emulator
from agents_a365.tooling import McpToolServerConfigurationService
from agents_a365.tooling.extensions import langchain as lc
from agents_a365.tooling.extensions import openai as oa
from support.platform import AUTH_HANDLER
from support.turns import make_turn_context
from users._users import langchain_mail_model, mail_calls, openai_mail_model, user_turn

from .conftest import Replicas

pytestmark = pytest.mark.filterwarnings("ignore:Use `streamable_http_client` instead:DeprecationWarning")

Turn = Callable[[TurnContext], Awaitable[Any]]


@pytest.fixture(autouse=True)
def _no_tracing() -> None:
    agents.set_tracing_disabled(True)


def built_once(kind: str, core: McpToolServerConfigurationService, authorization: Any) -> Turn:
    """One agent for every user, as examples/hosted_agent builds it, and how a turn runs it."""
    if kind == "langchain":
        agent = lc.McpToolRegistrationService(core).create_agent(
            {"model": langchain_mail_model(), "context_schema": lc.TurnIdentity},
            authorization=authorization,
            auth_handler_name=AUTH_HANDLER,
        )
        return lambda c: agent.ainvoke(
            {"messages": [HumanMessage(c.activity.text)]}, context=lc.turn_identity(c)
        )
    servers = oa.McpToolRegistrationService(core).agent_servers(authorization, AUTH_HANDLER)
    agent = Agent(name="mailer", instructions="Send mail.", model=openai_mail_model(), mcp_servers=[servers])
    return lambda c: Runner.run(agent, c.activity.text, context=c)


def lists(emulator: Emulator) -> int:
    return len([r for r in emulator.requests_for("mcp") if r.jsonrpc_method == "tools/list"])


@pytest.mark.parametrize("kind", ["langchain", "openai"])
async def test_a_users_first_turn_on_another_replica_exchanges_discovers_and_lists_nothing(
    emulator: Emulator, replicas: Replicas, kind: str
) -> None:
    authorization = emulator.authorization()
    one, two = (built_once(kind, replicas(), authorization) for _ in range(2))
    await one(user_turn(emulator, "alice"))
    exchanges, gateway, listed = (
        authorization.exchange_count,
        len(emulator.requests_for("gateway")),
        lists(emulator),
    )
    assert exchanges >= 1
    assert gateway == 1
    assert listed >= 1

    await two(user_turn(emulator, "alice", text="from alice"))  # alice's first turn on the second replica
    assert authorization.exchange_count == exchanges  # her tokens: from Redis
    assert len(emulator.requests_for("gateway")) == gateway
    assert lists(emulator) == listed
    # The tools resolved alice's turn at call time on each replica: her own token, on both.
    assert mail_calls(emulator) == [("alice", "alice"), ("alice", "alice")]


async def test_definitions_are_listed_per_user_in_every_replica_once(
    emulator: Emulator, replicas: Replicas
) -> None:
    # A server may list per user (and put a user's details in a description): a listing is never another
    # user's, however many replicas share the store; each user's is read from it by the other replicas.
    one, two = replicas(), replicas()

    async def list_all(service: McpToolServerConfigurationService, user: str, tenant: str) -> None:
        context = make_turn_context(agentic_app_id=emulator.config.agent_id, user_id=user, tenant_id=tenant)
        authorization = emulator.authorization(claims={"tid": tenant})  # Entra: the user's tenant's tokens
        for server in await service.list_tool_servers(context, authorization, AUTH_HANDLER):
            await service.list_mcp_tools(server)

    await list_all(one, "alice", "tenant-a")
    listed = lists(emulator)
    await list_all(two, "alice", "tenant-a")  # the same user on another replica: from the store
    assert lists(emulator) == listed
    await list_all(two, "bob", "tenant-a")  # another user of the tenant lists with his own token
    assert lists(emulator) == 2 * listed
    users = {
        emulator.issuer.decode_unverified(r.headers["authorization"].split(" ", 1)[1])["oid"]
        for r in emulator.requests_for("mcp")
        if r.jsonrpc_method == "tools/list"
    }
    assert users == {"alice", "bob"}
