"""A small hosted Microsoft 365 agent: AgentApplication + CloudAdapter on /api/messages, MCP tools from
Agent 365, threat protection after every turn. ``python examples/hosted_agent/agent.py --orchestrator langchain``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import httpx
from aiohttp import web
from microsoft_agents.activity import Activity, ActivityTypes, TokenResponse
from microsoft_agents.hosting.aiohttp import CloudAdapter, jwt_authorization_middleware, start_agent_process
from microsoft_agents.hosting.core import AgentApplication, MemoryStorage, TurnContext, TurnState
from microsoft_agents.hosting.core.authorization import AgentAuthConfiguration, AnonymousTokenProvider

from agents_a365.tooling import McpToolServerConfigurationService, ToolingConfiguration

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))  # the scripted demo models
from demo_models import langchain_model, openai_model

AUTH_HANDLER = "AGENTIC"
logger = logging.getLogger("hosted_agent")


class TurnObserver:
    """What a host may want to see of each turn (the demo prints it); every method is optional."""

    async def on_answer(self, orchestrator: str, turn: TurnContext, details: dict[str, Any]) -> None:
        """The orchestrator's run is done: ``details`` holds the run's result, the agent and, for LangChain,
        its config (and the UI stream's frames with ``ui_stream=True``)."""

    async def on_history_sent(self, turn: TurnContext, result: Any) -> None:
        """The turn's chat history went to threat protection: ``result`` is the ``OperationResult``."""


class _DevelopmentTokenProvider(AnonymousTokenProvider):  # type: ignore[misc]
    """Development mode: no Entra app; agentic replies carry a placeholder token the emulator accepts."""

    async def get_agentic_instance_token(self, tenant_id: str, agent_app_instance_id: str) -> tuple[str, str]:
        return "development", "development"

    async def get_agentic_user_token(self, *args: Any, **kwargs: Any) -> str:
        return "development"


class DevelopmentConnections:
    """The ``Connections`` of anonymous development mode (production uses ``MsalConnectionManager``)."""

    def __init__(self) -> None:
        self._provider = _DevelopmentTokenProvider()

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


class EmulatorTokenExchange:
    """Development mode: the agentic token exchange, done by the emulator (``POST /_emulator/token``) since
    there is no Entra app. In production the app's ``Authorization`` (auth handler ``AGENTIC``) does it."""

    def __init__(self, endpoint: str) -> None:
        self._url = f"{endpoint.rstrip('/')}/_emulator/token"

    async def exchange_token(
        self, context: TurnContext, scopes: list[str], auth_handler_id: str | None = None, *args: Any
    ) -> TokenResponse:
        sender = context.activity.from_property
        body = {"scope": scopes[0], "user_id": sender.id if sender else None}
        async with httpx.AsyncClient(timeout=10) as client:
            response = await client.post(self._url, json=body)
        response.raise_for_status()
        return TokenResponse(token=response.json()["token"])


TURN_ERROR_REPLY = "Sorry, something went wrong. Please try again."


async def _on_turn_error(context: TurnContext, error: Exception) -> None:
    """A generic reply to a failed turn (``AgentApplication`` has logged it, with its traceback). hosting-core's
    default handler also ``print()``s the traceback on the event loop (a host whose stdout is a pipe nobody reads
    blocks once it is full) and sends the error's text to the user, which may name internal endpoints."""
    try:
        async with asyncio.timeout(
            10
        ):  # the reply to the channel has no deadline of its own (aiohttp: 300 s)
            await context.send_activity(TURN_ERROR_REPLY)
    except Exception as exc:  # the channel is unreachable too: nothing more to tell the user
        logger.warning("could not tell the user the turn failed: %s", type(exc).__name__)


def create_agent_app(
    orchestrator: str,
    tooling: McpToolServerConfigurationService,
    *,
    connections: Any = None,
    tool_authorization: Any = None,
    observer: TurnObserver | None = None,
    tracer: Any = None,
    ui_stream: bool = False,
) -> tuple[AgentApplication[TurnState], CloudAdapter]:
    """The agent. ``tool_authorization`` defaults to the app's own ``Authorization`` (production).

    ``tracer`` (an OpenTelemetry ``Tracer``): each turn runs in an ``invoke_agent`` span, the parent of the
    SDK's spans (discovery, tokens, MCP sessions, tool calls, threat protection) when telemetry is on.
    ``ui_stream`` (LangChain): each turn's one run also gives the Vercel AI SDK UI stream's frames
    (``details["frames"]`` of ``on_answer``)."""
    if orchestrator not in ("langchain", "openai"):
        raise ValueError("orchestrator must be 'langchain' or 'openai'")
    connections = connections or DevelopmentConnections()
    adapter = CloudAdapter(connection_manager=connections)
    adapter.on_turn_error = _on_turn_error
    app = AgentApplication[TurnState](storage=MemoryStorage(), connection_manager=connections)
    if orchestrator == "openai" and not os.environ.get("OPENAI_API_KEY"):
        from agents import set_tracing_disabled

        set_tracing_disabled(True)  # no key: nowhere to export the Agents SDK's traces to
    # Built once, before any turn, for every user: each MCP request resolves its own turn's user and token.
    build = _langchain_agent if orchestrator == "langchain" else _openai_agent
    run_turn = build(tooling, tool_authorization or app.auth, ui_stream=ui_stream)
    watch = observer or TurnObserver()

    @app.activity("message")
    async def on_message(context: TurnContext, state: TurnState) -> None:
        span = (
            tracer.start_as_current_span(f"invoke_agent {orchestrator}")
            if tracer
            else contextlib.nullcontext()
        )
        with span:
            await context.send_activity(Activity(type=ActivityTypes.typing))
            await run_turn(context, watch)

    return app, adapter


def _langchain_agent(tooling: McpToolServerConfigurationService, auth: Any, *, ui_stream: bool) -> Any:
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from agents_a365.tooling.extensions import langchain as lc
    from agents_a365.tooling.extensions.langchain.ui_stream import stream_langgraph

    service = lc.McpToolRegistrationService(tooling)
    agent = service.create_agent(
        {
            "model": langchain_model(),
            "system_prompt": "You schedule meetings.",
            "checkpointer": InMemorySaver(),  # one for the agent: each conversation is a thread
            "context_schema": lc.TurnIdentity,
        },
        authorization=auth,
        auth_handler_name=AUTH_HANDLER,
    )

    async def run_turn(turn: TurnContext, observer: TurnObserver) -> None:
        config: Any = {"configurable": {"thread_id": turn.activity.conversation.id}}
        question, context = {"messages": [HumanMessage(turn.activity.text)]}, lc.turn_identity(turn)
        details: dict[str, Any] = {"agent": agent, "config": config}
        if ui_stream:  # one run gives both: the UI message stream's frames and the final state
            modes = ["messages", "updates", "values"]

            async def chunks() -> Any:
                async for mode, chunk in agent.astream(question, config, context=context, stream_mode=modes):
                    if mode == "values":
                        details["result"] = chunk
                    else:
                        yield mode, chunk

            details["frames"] = [f async for f in stream_langgraph(chunks(), message_id=turn.activity.id)]
        else:
            details["result"] = await agent.ainvoke(question, config, context=context)
        await observer.on_answer("langchain", turn, details)
        await turn.send_activity(details["result"]["messages"][-1].text)
        # The run's final state holds the thread's messages: sent as they are, not read again from the checkpointer
        # (send_chat_history(turn, agent, config) reads them through aget_state: a third of a warm turn's CPU).
        sent = await service.send_chat_history_from_messages(turn, details["result"]["messages"])
        await observer.on_history_sent(turn, sent)

    return run_turn


def _openai_agent(tooling: McpToolServerConfigurationService, auth: Any, *, ui_stream: bool) -> Any:
    from agents import Runner, SQLiteSession

    from agents_a365.tooling.extensions import openai as oa

    service = oa.McpToolRegistrationService(tooling)
    # A365Agent: the servers' tools as function tools converted once per change of their definitions (an
    # Agent(mcp_servers=[service.agent_servers(...)]) works too; the Agents SDK converts those on every run).
    agent = oa.A365Agent(
        name="Mailer",
        instructions="You send emails for the user.",
        model=openai_model(),
        agent_servers=service.agent_servers(auth, AUTH_HANDLER),
    )

    async def run_turn(turn: TurnContext, observer: TurnObserver) -> None:
        session = SQLiteSession(turn.activity.conversation.id)
        try:
            result = await Runner.run(agent, turn.activity.text, session=session, context=turn)
            await observer.on_answer("openai", turn, {"result": result, "agent": agent})
            await turn.send_activity(str(result.final_output))
            await observer.on_history_sent(turn, await service.send_chat_history(turn, session))
        finally:
            session.close()

    return run_turn


def quiet_development_warnings() -> None:
    """Development mode has no Entra app id: hosting-core warns about it on every turn; nothing to act on."""
    logging.getLogger("microsoft_agents.hosting.core.connector.client.user_token_client").setLevel(
        logging.ERROR
    )


def create_web_app(
    app: AgentApplication[TurnState], adapter: CloudAdapter, *, anonymous: bool
) -> web.Application:
    """``POST /api/messages`` behind the SDK's JWT middleware (anonymous only in development)."""
    web_app = web.Application(middlewares=[jwt_authorization_middleware])
    with warnings.catch_warnings():  # hosting-aiohttp's middleware reads these plain string keys
        warnings.simplefilter("ignore", web.NotAppKeyWarning)
        web_app["agent_configuration"] = AgentAuthConfiguration(anonymous_allowed=anonymous)
        web_app["agent_app"] = app
        web_app["adapter"] = adapter

    async def messages(request: web.Request) -> web.StreamResponse:
        response = await start_agent_process(request, app, adapter)
        return response if response is not None else web.Response(status=202)

    web_app.router.add_post("/api/messages", messages)
    return web_app


def main() -> None:
    """Development mode against the emulator (``MCP_PLATFORM_ENDPOINT``); see README.md for production."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--orchestrator", choices=["langchain", "openai"], default="langchain")
    parser.add_argument("--port", type=int, default=3978)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    endpoint = os.environ.get("MCP_PLATFORM_ENDPOINT", "http://127.0.0.1:8765")
    tooling = McpToolServerConfigurationService(
        ToolingConfiguration(mcp_platform_endpoint=endpoint, use_tooling_manifest=False)
    )
    quiet_development_warnings()
    app, adapter = create_agent_app(
        args.orchestrator, tooling, tool_authorization=EmulatorTokenExchange(endpoint)
    )
    web_app = create_web_app(app, adapter, anonymous=True)

    async def close_tooling(_: web.Application) -> None:
        # After the turns in flight ended (Ctrl-C/SIGTERM): threat-protection sends still under way get
        # up to A365_CHAT_HISTORY_DRAIN_TIMEOUT (10 s) to complete, the rest are reported undelivered.
        await tooling.aclose()

    web_app.on_cleanup.append(close_tooling)
    # Start-up's objects (LangChain, the Agents SDK, hosting-core: ~270,000) are never freed: frozen, the
    # collector's full collections no longer scan them, a 250 to 350 ms pause of every turn in flight each time.
    gc.collect()
    gc.freeze()
    print(f"agent on http://127.0.0.1:{args.port}/api/messages (tools from {endpoint})", flush=True)  # noqa: T201
    web.run_app(web_app, host="127.0.0.1", port=args.port, print=None)


if __name__ == "__main__":
    main()
