"""The user-switch check: an agent written for Microsoft's ``microsoft-agents-a365-*`` 2.0.0, with its import
lines rewritten by docs/migrating.md's ``port_imports`` (and nothing else), runs against the emulator."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import agents
import pytest
from langchain_mcp_adapters.client import MultiServerMCPClient

from agents_a365.emulator import Emulator
from users._users import mail_calls, openai_mail_model, user_turn

MIGRATING = Path(__file__).resolve().parents[2] / "docs" / "migrating.md"
pytestmark = pytest.mark.filterwarnings("ignore:Use `streamable_http_client` instead:DeprecationWarning")

# Written against Microsoft's 2.0.0 API, in the shapes of its OpenAI sample and its LangChain sample's helper.
MICROSOFT_AGENT = """
import logging

from agents import Agent, Runner

from microsoft_agents_a365.runtime.utility import Utility
from microsoft_agents_a365.tooling.extensions.openai import McpToolRegistrationService
from microsoft_agents_a365.tooling.models import ChatHistoryMessage
from microsoft_agents_a365.tooling.services.mcp_tool_server_configuration_service import (
    McpToolServerConfigurationService,
)
from microsoft_agents_a365.tooling.utils.utility import get_mcp_platform_authentication_scope

logger = logging.getLogger("microsoft_style_agent")


class OpenAIAgent:
    def __init__(self, model):
        self.tool_service = McpToolRegistrationService(logger=logger)
        self.agent = Agent(name="Mailer", instructions="You send emails.", model=model)

    async def process_user_message(self, message, auth, auth_handler_name, context):
        self.agent = await self.tool_service.add_tool_servers_to_agent(
            agent=self.agent, auth=auth, auth_handler_name=auth_handler_name, context=context
        )
        result = await Runner.run(self.agent, message)
        await self.tool_service.send_chat_history_messages(context, result.to_input_list())
        return str(result.final_output)

    async def cleanup(self):
        await self.tool_service.cleanup_all_servers()


class LangChainToolHelper:
    def __init__(self):
        self.config_service = McpToolServerConfigurationService(logger=logger)

    async def get_connections(self, auth, auth_handler_name, context):
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
        return {
            server.mcp_server_unique_name: {"transport": "streamable_http", "url": server.url, "headers": server.headers}
            for server in servers
        }

    async def send_user_message(self, context):
        message = ChatHistoryMessage(role="user", content=context.activity.text)
        return await self.config_service.send_chat_history(context, [message])
"""


def _port_imports() -> Any:
    """The ``port_imports`` of docs/migrating.md (its first Python block), as documented."""
    block = re.search(r"```python\n(.*?)```", MIGRATING.read_text(encoding="utf-8"), re.DOTALL)
    assert block is not None
    namespace: dict[str, Any] = {}
    exec(block.group(1), namespace)  # our own documentation's code
    return namespace["port_imports"]


@pytest.fixture
def ported(emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.setenv("ENVIRONMENT", "Production")
    monkeypatch.setenv("MCP_PLATFORM_ENDPOINT", emulator.base_url)
    agents.set_tracing_disabled(True)
    source = _port_imports()(MICROSOFT_AGENT)
    changed = [
        (old, new)
        for old, new in zip(MICROSOFT_AGENT.splitlines(), source.splitlines(), strict=True)
        if old != new
    ]
    assert len(changed) == 5
    assert all(old.startswith("from microsoft_agents_a365") for old, _ in changed)  # import lines only
    module = ModuleType("microsoft_style_agent")
    exec(compile(source, "microsoft_style_agent.py", "exec"), module.__dict__)
    return module


async def test_microsofts_openai_sample_runs_with_only_its_imports_changed(
    ported: ModuleType, emulator: Emulator
) -> None:
    sample = ported.OpenAIAgent(openai_mail_model())
    auth = emulator.authorization()
    try:
        for user in ("alice", "bob", "alice"):
            turn = user_turn(emulator, user)
            answer = await asyncio.ensure_future(
                sample.process_user_message(turn.activity.text, auth, "AGENTIC", turn)
            )
            assert answer == "sent"
    finally:
        await sample.cleanup()
        await sample.tool_service.aclose()
    assert mail_calls(emulator) == [("alice", "alice"), ("bob", "bob"), ("alice", "alice")]
    assert len(emulator.chat_messages) == 3


async def test_microsofts_langchain_helper_runs_with_only_its_imports_changed(
    ported: ModuleType, emulator: Emulator
) -> None:
    helper = ported.LangChainToolHelper()
    turn = user_turn(emulator, "alice")
    try:
        connections = await helper.get_connections(emulator.authorization(), "AGENTIC", turn)
        tools = {t.name: t for t in await MultiServerMCPClient(connections).get_tools()}
        await tools["send_email"].ainvoke({"to": "ada@contoso.com", "subject": "from alice", "body": "hi"})
        sent = await helper.send_user_message(turn)
    finally:
        await helper.config_service.aclose()
    assert sent.succeeded, sent
    assert mail_calls(emulator) == [("alice", "alice")]
    assert emulator.chat_messages[0]["chatHistory"][0]["content"] == "from alice"
