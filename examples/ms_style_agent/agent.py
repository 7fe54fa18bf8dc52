"""An agent written the way Microsoft's Agent 365 Python samples are, running on this SDK.

Its code uses the call forms of ``microsoft-agents-a365-*`` 2.0.0; only the import lines (marked below) differ
from the same agent on Microsoft's SDK (docs/migrating.md lists them). Two handlers in the samples' shapes:

* ``openai``: one agent object for the process, ``self.agent = await service.add_tool_servers_to_agent(
  self.agent, auth=..., context=...)`` on every turn, then ``Runner.run``, then the turn's items to threat
  protection; ``cleanup_all_servers()`` at shutdown.
* ``langchain``: a helper that lists the servers with the core service (``list_tool_servers(agentic_app_id,
  auth_token, ...)``) and connects ``langchain-mcp-adapters`` to them, keyed by ``mcp_server_unique_name``.

``python examples/ms_style_agent/agent.py --orchestrator openai`` serves it on ``/api/messages``
(development: ``./ToolingManifest.json`` or ``../ToolingManifest.json`` and ``BEARER_TOKEN``; production:
``ENVIRONMENT=Production``, the tooling gateway and token exchange).
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
from pathlib import Path
from typing import Any

from agents import Agent, Runner
from aiohttp import web
from langchain.agents import create_agent
from langchain_mcp_adapters.client import MultiServerMCPClient
from microsoft_agents.hosting.core import AgentApplication, MemoryStorage, TurnContext, TurnState

# -- the only lines that differ from the same agent on Microsoft's SDK (docs/migrating.md) --
import agents_a365.runtime as Utility
from agents_a365.tooling import McpToolServerConfigurationService, get_mcp_platform_authentication_scope
from agents_a365.tooling.extensions.openai import McpToolRegistrationService

# -- end of the import lines --

AUTH_HANDLER = "AGENTIC"
logger = logging.getLogger("ms_style_agent")


def _hosted_agent() -> Any:
    """The repository's hosted example: its development connections, web app and demo models."""
    path = Path(__file__).resolve().parents[1] / "hosted_agent" / "agent.py"
    spec = importlib.util.spec_from_file_location("ms_style_hosting", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hosting = _hosted_agent()


class OpenAIMailAgent:
    """The OpenAI sample's shape: the agent object lives as long as the process."""

    def __init__(self) -> None:
        self.tool_service = McpToolRegistrationService(logger=logger)
        self.agent = Agent(name="Mailer", instructions="You send emails.", model=hosting.openai_model())

    async def process_user_message(
        self, message: str, auth: Any, auth_handler_name: str, context: TurnContext
    ) -> str:
        self.agent = await self.tool_service.add_tool_servers_to_agent(
            agent=self.agent,
            auth=auth,
            auth_handler_name=auth_handler_name,
            context=context,
            auth_token=os.getenv("BEARER_TOKEN") or None,  # development; production exchanges a token
        )
        result = await Runner.run(starting_agent=self.agent, input=message, context=context)
        sent = await self.tool_service.send_chat_history_messages(context, result.to_input_list())
        if not sent.succeeded:
            logger.warning("threat protection: %s", sent)
        return str(result.final_output)

    async def cleanup(self) -> None:
        await self.tool_service.cleanup_all_servers()
        await self.tool_service.aclose()  # this SDK's service also holds a pooled HTTP client


class LangChainToolHelper:
    """The LangChain sample helper's shape: the core service lists the servers, the adapters connect."""

    def __init__(self) -> None:
        self.config_service = McpToolServerConfigurationService(logger=logger)

    async def get_tools(self, auth: Any, auth_handler_name: str, context: TurnContext) -> list[Any]:
        auth_token = os.getenv("BEARER_TOKEN")
        if not auth_token:
            scopes = get_mcp_platform_authentication_scope()
            auth_token = (await auth.exchange_token(context, scopes, auth_handler_name)).token
        agentic_app_id = Utility.resolve_agent_identity(context, auth_token)
        servers = await self.config_service.list_tool_servers(
            agentic_app_id,
            auth_token,
            authorization=auth,
            auth_handler_name=auth_handler_name,
            turn_context=context,
        )
        connections: dict[str, Any] = {
            server.mcp_server_unique_name: {
                "transport": "streamable_http",
                "url": server.url,
                "headers": server.headers,
            }
            for server in servers
        }
        return await MultiServerMCPClient(connections).get_tools()

    async def process_user_message(
        self, message: str, auth: Any, auth_handler_name: str, context: TurnContext
    ) -> str:
        agent = create_agent(
            hosting.langchain_model(), tools=await self.get_tools(auth, auth_handler_name, context)
        )
        result = await agent.ainvoke({"messages": [{"role": "user", "content": message}]})
        return str(result["messages"][-1].text)

    async def cleanup(self) -> None:
        await self.config_service.aclose()


def create_agent_app(orchestrator: str, *, tool_authorization: Any = None) -> tuple[Any, Any, Any]:
    """The hosted app: ``(AgentApplication, CloudAdapter, the sample agent)``; ``tool_authorization``
    defaults to the app's own ``Authorization``."""
    connections = hosting.DevelopmentConnections()
    adapter = hosting.CloudAdapter(connection_manager=connections)
    app = AgentApplication[TurnState](storage=MemoryStorage(), connection_manager=connections)
    sample: Any = OpenAIMailAgent() if orchestrator == "openai" else LangChainToolHelper()

    @app.activity("message")
    async def on_message(context: TurnContext, state: TurnState) -> None:
        answer = await sample.process_user_message(
            context.activity.text, tool_authorization or app.auth, AUTH_HANDLER, context
        )
        await context.send_activity(answer)

    return app, adapter, sample


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--orchestrator", choices=["langchain", "openai"], default="openai")
    parser.add_argument("--port", type=int, default=3978)
    args = parser.parse_args()
    hosting.quiet_development_warnings()
    app, adapter, _ = create_agent_app(args.orchestrator)
    web.run_app(hosting.create_web_app(app, adapter, anonymous=True), host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
