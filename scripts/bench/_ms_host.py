"""Microsoft's baseline host for the host benchmark: the same hosted turn with
``microsoft-agents-a365-tooling-extensions-openai`` 2.0.0 (OpenAI Agents SDK).

Runs with the baseline venv's Python (``.bench-venv/ms``, with ``microsoft-agents-hosting-aiohttp``
added), never imports ``agents_a365``. The hosting is the example's (AgentApplication + CloudAdapter on
aiohttp, ``/api/messages``, anonymous development connections); each turn: typing indicator,
``add_tool_servers_to_agent`` (Microsoft connects every server, on every turn: it keeps nothing between
turns), ``Runner.run`` with the one-tool scripted model, the reply, ``send_chat_history_messages`` of the
session's items, and the servers cleaned up. Microsoft's clone drops ``mcp_config``, so it is set on the
returned agent (what a user must do when servers share tool names). Tokens are minted in-process
(``_ms_worker._Authorization``), as on our side. Prints ``ready <url>``; stops when stdin closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import warnings
from typing import Any

from _host_models import OneToolOpenAIModel
from _ms_worker import _Authorization
from aiohttp import web


def die_with_parent() -> None:
    """Linux: SIGTERM when the benchmark process dies, so no host outlives an interrupted run."""
    import ctypes
    import signal

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() == 1:
        os._exit(1)


async def main() -> None:
    from agents import Agent, Runner, SQLiteSession, set_tracing_disabled
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
        def __init__(self) -> None:
            self._provider = DevelopmentTokenProvider()

        def get_connection(self, connection_name: str) -> Any:
            return self._provider

        def get_default_connection(self) -> Any:
            return self._provider

        def get_token_provider(self, claims_identity: Any, service_url: str) -> Any:
            return self._provider

        def get_token_provider_from_activity(self, *args: Any, **kwargs: Any) -> Any:
            return self._provider

        def get_default_connection_configuration(self) -> AgentAuthConfiguration:
            return AgentAuthConfiguration(anonymous_allowed=True)

    connections = DevelopmentConnections()
    adapter = CloudAdapter(connection_manager=connections)
    app = AgentApplication[TurnState](storage=MemoryStorage(), connection_manager=connections)
    auth = _Authorization(os.environ["BENCH_TOKEN_SECRET"])
    logger = logging.getLogger("ms-host")
    options = ToolOptions(orchestrator_name="OpenAI")

    @app.activity("message")
    async def on_message(context: TurnContext, state: TurnState) -> None:
        await context.send_activity(Activity(type=ActivityTypes.typing))
        service = McpToolRegistrationService(logger=logger)
        template = Agent(
            name="Mailer", instructions="You send emails for the user.", model=OneToolOpenAIModel()
        )
        session = SQLiteSession(context.activity.conversation.id)
        try:
            agent = await service.add_tool_servers_to_agent(template, auth, "AGENTIC", context)
            agent.mcp_config = {"include_server_in_tool_names": True}
            try:
                result = await Runner.run(agent, context.activity.text, session=session)
            finally:
                # Their cleanup_all_servers closes in connect order, which breaks anyio's nested cancel
                # scopes (see _ms_worker.py): reverse order.
                for server in reversed(getattr(service, "_connected_servers", [])):
                    await server.cleanup()
            await context.send_activity(str(result.final_output))
            await service.send_chat_history_messages(context, await session.get_items(), options)
        finally:
            session.close()

    web_app = web.Application(middlewares=[jwt_authorization_middleware])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        web_app["agent_configuration"] = AgentAuthConfiguration(anonymous_allowed=True)
        web_app["agent_app"] = app
        web_app["adapter"] = adapter

    async def messages(request: web.Request) -> web.StreamResponse:
        response = await start_agent_process(request, app, adapter)
        return response if response is not None else web.Response(status=202)

    web_app.router.add_post("/api/messages", messages)
    runner = web.AppRunner(web_app, access_log=None, shutdown_timeout=2)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0, backlog=4096).start()
        print(f"ready http://127.0.0.1:{runner.addresses[0][1]}", flush=True)
        reader = asyncio.StreamReader()
        loop = asyncio.get_running_loop()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        await reader.read()
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    die_with_parent()
    logging.basicConfig(level=logging.CRITICAL)
    asyncio.run(main())
