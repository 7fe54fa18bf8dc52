"""Microsoft's baseline, ``microsoft-agents-a365-tooling-extensions-openai`` 2.0.0: ``_ms.py worker`` (driven by
``_common.ms_worker``) and ``_ms.py host`` (``host.py``'s Microsoft host: each turn connects every server, runs the
scripted model, replies, sends the history, cleans up). Runs with the baseline venv's Python, never imports
``agents_a365``; ``make_openai_items`` and ``tcp_connects`` are stdlib-only, shared with our side.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import socket
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

PLATFORM_AUDIENCE = "ea9ffc3e-8a23-4a7d-836d-234d7c7565c1"
DEFAULT_AGENT_ID = "6f1c2b8e-5d4a-4e3b-9c7f-2a1b0c9d8e7f"


def make_openai_items(n: int) -> list[dict[str, Any]]:
    """``n`` OpenAI Agents SDK session items (what ``Session.get_items()`` returns): user messages and assistant
    output messages alternating, every one with text and an id."""
    return [
        {"id": f"msg_{i}", "role": "user", "content": f"question {i}: what is on my calendar?"}
        if i % 2 == 0
        else {
            "id": f"msg_{i}",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": f"answer {i}: two meetings", "annotations": []}],
        }
        for i in range(n)
    ]


_connects = [0]


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "socket.connect" and isinstance(args[0], socket.socket) and args[0].family == socket.AF_INET:
        _connects[0] += 1


def tcp_connects() -> Callable[[], int]:
    """A counter of the TCP connections this process opens from now on (``socket.connect`` audit events)."""
    if not _connects[1:]:
        sys.addaudithook(_audit)
        _connects.append(1)  # hooked
    start = _connects[0]
    return lambda: _connects[0] - start


# -- everything below runs only in the baseline venv ------------------------------------------------------


class _Authorization:
    """hosting-core's ``Authorization.exchange_token`` shape: mints an emulator token in-process, like the
    emulator's own ``EmulatorAuthorization`` on our side (no network on either side)."""

    def __init__(self, secret: str) -> None:
        self._secret = secret

    async def exchange_token(
        self, context: Any, scopes: Any = None, auth_handler_id: Any = None, *_: Any
    ) -> Any:
        import jwt
        from microsoft_agents.activity import TokenResponse

        scope = (scopes or [PLATFORM_AUDIENCE + "/.default"])[0]
        user, now = context.activity.from_property.id, int(time.time())
        audience = scope.rpartition("/")[0] or scope
        claims = {"aud": audience, "appid": DEFAULT_AGENT_ID, "azp": DEFAULT_AGENT_ID}
        claims |= {"iat": now, "nbf": now, "exp": now + 3600, "tid": "tenant-1", "oid": user, "sub": user}
        return TokenResponse(token=jwt.encode(claims | {"ver": "2.0"}, self._secret, algorithm="HS256"))


def _turn(agent_id: str, user: str) -> Any:
    from microsoft_agents.activity import Activity, ChannelAccount, ConversationAccount, RoleTypes
    from microsoft_agents.hosting.core import ChannelAdapter, TurnContext

    class _Adapter(ChannelAdapter):  # type: ignore[misc]
        async def send_activities(self, context: Any, activities: Any) -> list[Any]:
            return []

        async def update_activity(self, context: Any, activity: Any) -> None:
            raise NotImplementedError

        async def delete_activity(self, context: Any, reference: Any) -> None:
            raise NotImplementedError

    recipient = ChannelAccount(
        id="agent-1", role=RoleTypes.agentic_identity, agentic_app_id=agent_id, tenant_id="tenant-1"
    )
    activity = Activity(
        type="message",
        channel_id="msteams:email",
        from_property=ChannelAccount(id=user, aad_object_id=user),
        recipient=recipient,
        conversation=ConversationAccount(id="conversation-1", tenant_id="tenant-1"),
        id="activity-1",
        text="What is on my calendar?",
    )
    return TurnContext(_Adapter(), activity)


async def _register(service: Any, auth: Any, agent_id: str, user: str) -> dict[str, Any]:
    from agents import Agent, RunContextWrapper
    from agents.mcp.util import MCPUtil

    turn, template = _turn(agent_id, user), Agent(name="bench", instructions="bench", model="gpt-4o")
    gc.collect()  # as on our side: no full collection inside the measurement
    t0 = time.perf_counter()
    agent = await service.add_tool_servers_to_agent(template, auth, "AGENTIC", turn)
    # What Runner.run does before the first model call (servers listed one by one); server-prefixed names
    # because every notes server has the same tools (Microsoft's clone drops mcp_config).
    tools = await MCPUtil.get_all_function_tools(
        agent.mcp_servers, False, RunContextWrapper(context=None), agent, include_server_in_tool_names=True
    )
    total = time.perf_counter() - t0
    await cleanup(service)
    return {"total": total, "tools": len(tools)}


async def cleanup(service: Any) -> None:
    """Their ``cleanup_all_servers()`` closes in connect order, which breaks anyio's nested cancel scopes (all
    servers were connected in one task) and cancels the task: close in reverse order instead."""
    for server in reversed(getattr(service, "_connected_servers", [])):
        await server.cleanup()
    service._connected_servers = []


def _convert(service: Any, n: int, repeats: int) -> dict[str, Any]:
    items, times, size = make_openai_items(n), [], 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        size = len(service._convert_openai_messages_to_chat_history(items))
        times.append(time.perf_counter() - t0)
    return {"convert": times, "converted": size}


async def _send(service: Any, n: int) -> dict[str, Any]:
    from microsoft_agents_a365.tooling.models import ToolOptions

    count, turn = tcp_connects(), _turn(DEFAULT_AGENT_ID, "user-1")
    sends = (
        service.config_service.send_chat_history(turn, [], ToolOptions(orchestrator_name="OpenAI"))
        for _ in range(n)
    )
    t0, c0 = time.perf_counter(), time.process_time()
    results = await asyncio.gather(*sends)
    elapsed, cpu, ok = time.perf_counter() - t0, time.process_time() - c0, sum(r.succeeded for r in results)
    return {"elapsed": elapsed, "cpu": cpu, "succeeded": ok, "connections": count()}


async def worker() -> None:
    from microsoft_agents_a365.tooling.extensions.openai import McpToolRegistrationService

    service = McpToolRegistrationService(logger=logging.getLogger("ms-baseline"))
    auth = _Authorization(os.environ["BENCH_TOKEN_SECRET"])
    from _host_models import read_stdin

    reader = await read_stdin()
    print(json.dumps({"ready": True}), flush=True)
    while line := await reader.readline():
        cmd = json.loads(line)
        try:
            if cmd["op"] == "register":
                result = await _register(service, auth, cmd["agent_id"], cmd["user"])
            elif cmd["op"] == "convert":
                result = _convert(service, cmd["n"], cmd["repeats"])
            else:
                result = await _send(service, cmd["n"])
        except Exception as exc:
            result = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(result), flush=True)


async def host() -> None:
    from _host_models import OneToolOpenAIModel, serve
    from agents import Agent, Runner, SQLiteSession, set_tracing_disabled
    from aiohttp import web
    from microsoft_agents.activity import Activity, ActivityTypes
    from microsoft_agents.hosting.aiohttp import (
        CloudAdapter,
        jwt_authorization_middleware,
        start_agent_process,
    )
    from microsoft_agents.hosting.core import AgentApplication, MemoryStorage, TurnContext, TurnState
    from microsoft_agents.hosting.core.authorization import AgentAuthConfiguration, AnonymousTokenProvider
    from microsoft_agents_a365.tooling.extensions.openai import McpToolRegistrationService
    from microsoft_agents_a365.tooling.models import ToolOptions

    set_tracing_disabled(True)

    class DevelopmentTokenProvider(AnonymousTokenProvider):  # type: ignore[misc]
        async def get_agentic_instance_token(self, tenant_id: str, instance_id: str) -> tuple[str, str]:
            return "development", "development"

        async def get_agentic_user_token(self, *args: Any, **kwargs: Any) -> str:
            return "development"

    class DevelopmentConnections:
        def get_connection(self, *args: Any, **kwargs: Any) -> Any:
            return provider

        get_default_connection = get_token_provider = get_token_provider_from_activity = get_connection

        def get_default_connection_configuration(self) -> AgentAuthConfiguration:
            return AgentAuthConfiguration(anonymous_allowed=True)

    provider, connections = DevelopmentTokenProvider(), DevelopmentConnections()
    adapter = CloudAdapter(connection_manager=connections)
    app = AgentApplication[TurnState](storage=MemoryStorage(), connection_manager=connections)
    auth = _Authorization(os.environ["BENCH_TOKEN_SECRET"])
    options = ToolOptions(orchestrator_name="OpenAI")

    @app.activity("message")
    async def on_message(context: TurnContext, state: TurnState) -> None:
        await context.send_activity(Activity(type=ActivityTypes.typing))
        service = McpToolRegistrationService(logger=logging.getLogger("ms-host"))
        template = Agent(
            name="Mailer", instructions="You send emails for the user.", model=OneToolOpenAIModel()
        )
        session = SQLiteSession(context.activity.conversation.id)
        try:
            agent = await service.add_tool_servers_to_agent(template, auth, "AGENTIC", context)
            # Microsoft's clone drops mcp_config: set on the returned agent, as a user must when servers share tool names.
            agent.mcp_config = {"include_server_in_tool_names": True}
            try:
                result = await Runner.run(agent, context.activity.text, session=session)
            finally:
                await cleanup(service)
            await context.send_activity(str(result.final_output))
            await service.send_chat_history_messages(context, await session.get_items(), options)
        finally:
            session.close()

    web_app = web.Application(middlewares=[jwt_authorization_middleware])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        web_app["agent_configuration"] = AgentAuthConfiguration(anonymous_allowed=True)
        web_app["agent_app"], web_app["adapter"] = app, adapter

    async def messages(request: web.Request) -> web.StreamResponse:
        return await start_agent_process(request, app, adapter) or web.Response(status=202)

    web_app.router.add_post("/api/messages", messages)
    await serve(web_app)


if __name__ == "__main__":
    from _forkserver import die_with_parent

    die_with_parent()
    logging.basicConfig(level=logging.CRITICAL)
    asyncio.run(worker() if sys.argv[1] == "worker" else host())
