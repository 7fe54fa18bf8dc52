"""The OpenAI extension's contract adapter: neutral conversation -> Agents SDK items -> its API."""

from __future__ import annotations

import inspect
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from agents import Agent, RunContextWrapper, SQLiteSession

from agents_a365.emulator.contract import Image, Message, Surface, Text
from agents_a365.runtime import OperationResult
from agents_a365.tooling.extensions import openai as oa_ext

__all__ = ["OpenAIAdapter", "to_openai"]


def _takes_limit(service: Any) -> bool:
    return "limit" in inspect.signature(service.send_chat_history_messages).parameters


def to_openai(message: Message) -> dict[str, Any]:
    item: dict[str, Any]
    if message.role == "tool":
        text = (
            message.content
            if isinstance(message.content, str)
            else " ".join(p.text for p in message.content if isinstance(p, Text))
        )
        item = {"type": "function_call_output", "call_id": message.call_id, "output": text}
    elif isinstance(message.content, str):
        item = {"role": message.role, "content": message.content}
    else:
        text_type = "output_text" if message.role == "assistant" else "input_text"
        parts: list[dict[str, Any]] = []
        for p in message.content:
            if isinstance(p, Text):
                parts.append(
                    {
                        "type": text_type,
                        "text": p.text,
                        **({"annotations": []} if text_type == "output_text" else {}),
                    }
                )
            elif isinstance(p, Image):
                parts.append({"type": "input_image", "image_url": p.url, "detail": "auto"})
        item = {"type": "message", "role": message.role, "content": parts}
    if message.id is not None:
        item["id"] = message.id
    return item


class OpenAIAdapter:
    name = "openai"
    orchestrator = "OpenAI"
    distribution = "agents-a365-tooling-extensions-openai"

    def __init__(self, service: oa_ext.McpToolRegistrationService) -> None:
        self.service = service

    async def _items(self, turn: Any, messages: tuple[Message, ...], limit: int | None) -> OperationResult:
        items = [to_openai(m) for m in messages]
        if limit is None:  # also what a release before `limit=` takes (scripts/compat_matrix.py)
            return await self.service.send_chat_history_messages(turn, items)
        return await self.service.send_chat_history_messages(turn, items, limit=limit)

    async def _session(self, turn: Any, messages: tuple[Message, ...], limit: int | None) -> OperationResult:
        session = SQLiteSession(str(uuid.uuid4()))  # the SDK's real session store (in-memory SQLite)
        try:
            await session.add_items([to_openai(m) for m in messages])  # type: ignore[misc]
            return await self.service.send_chat_history(turn, session, limit=limit)
        finally:
            session.close()

    def surfaces(self) -> tuple[Surface, ...]:
        return (
            # `limit=` exists from the release after 0.1.0: older ones skip the limit scenarios here.
            Surface("input_items", self._items, supports_limit=_takes_limit(self.service)),
            Surface("sqlite_session", self._session),
        )

    def missing_argument_calls(self, turn: Any) -> dict[str, Callable[[], Awaitable[Any]]]:
        s = self.service
        return {
            "turn_context is required": lambda: s.send_chat_history_messages(None, []),  # type: ignore[arg-type]
            "messages is required": lambda: s.send_chat_history_messages(turn, None),  # type: ignore[arg-type]
        }

    @asynccontextmanager
    async def register(self, authorization: Any, turn: Any) -> AsyncIterator[Any]:
        agent: Agent[Any] = Agent(name="contract", instructions="-")
        async with self.service.connected_agent(agent, authorization, "AGENTIC", turn) as connected:
            yield connected

    async def tool_names(self, registered: Any) -> list[str]:
        """The names the model sees (through the SDK's own conversion, which refuses duplicates)."""
        return [t.name for t in await registered.get_mcp_tools(RunContextWrapper(context=None))]

    async def call_tool(self, registered: Any, name: str, arguments: dict[str, Any]) -> Any:
        for server in registered.mcp_servers:
            if name in {t.name for t in await server.list_tools()}:
                return await server.call_tool(name, arguments)
        raise KeyError(name)


class OpenAIBuildOnceAdapter(OpenAIAdapter):
    """The same contract through the build-once form: one ``Agent`` whose Agent 365 servers are one
    ``A365AgentServers`` (``service.agent_servers``), each request resolving its turn (here the turn scope of the
    registration block)."""

    @asynccontextmanager
    async def register(self, authorization: Any, turn: Any) -> AsyncIterator[Any]:
        servers = self.service.agent_servers(authorization, "AGENTIC")
        agent: Agent[Any] = Agent(name="contract", instructions="-", mcp_servers=[servers])
        with self.service.configuration_service.turn_scope(turn, authorization, "AGENTIC"):
            await agent.get_mcp_tools(RunContextWrapper(context=None))  # lists, as a run does first
            yield agent
