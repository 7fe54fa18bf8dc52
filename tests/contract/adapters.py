"""One adapter per extension: neutral conversation -> native types -> the extension's own API.

Adding a third extension means writing one more adapter here.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from agents import Agent, SQLiteSession
from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

from agents_a365.runtime import OperationResult
from agents_a365.tooling import McpToolServerConfigurationService
from agents_a365.tooling.extensions import langchain as lc_ext
from agents_a365.tooling.extensions import openai as oa_ext
from contract.conversation import Image, Message, Text

Send = Callable[[Any, tuple[Message, ...], int | None], Awaitable[OperationResult]]


@dataclass(frozen=True)
class Surface:
    """One native way of handing the conversation to an extension."""

    name: str
    send: Send
    supports_limit: bool = True


class ExtensionAdapter(Protocol):
    name: str
    orchestrator: str  # what User-Agent names
    distribution: str  # the extension's distribution, whose version User-Agent reports

    def surfaces(self) -> tuple[Surface, ...]: ...

    def missing_argument_calls(self, turn: Any) -> dict[str, Callable[[], Awaitable[Any]]]:
        """Calls with one argument missing -> the ValueError message expected."""
        ...

    def register(self, authorization: Any, turn: Any) -> Any:
        """An async context manager that registers the turn's MCP tools (connecting every server)."""
        ...


# -- LangChain -------------------------------------------------------------------------------------


def to_langchain(message: Message) -> BaseMessage:
    content: Any
    if isinstance(message.content, str):
        content = message.content
    else:
        content = [
            {"type": "text", "text": p.text}
            if isinstance(p, Text)
            else {"type": "image_url", "image_url": {"url": p.url}}
            for p in message.content
        ]
    kwargs: dict[str, Any] = {"content": content}
    if message.id is not None:
        kwargs["id"] = message.id
    match message.role:
        case "system":
            return SystemMessage(**kwargs)
        case "user":
            return HumanMessage(**kwargs)
        case "assistant":
            return AIMessage(**kwargs)
        case "tool":
            return ToolMessage(tool_call_id=message.call_id, **kwargs)


class LangChainAdapter:
    name = "langchain"
    orchestrator = "LangChain"
    distribution = "agents-a365-tooling-extensions-langchain"

    def __init__(self, service: lc_ext.McpToolRegistrationService) -> None:
        self.service = service

    async def _messages(self, turn: Any, messages: tuple[Message, ...], limit: int | None) -> OperationResult:
        return await self.service.send_chat_history_from_messages(
            turn, [to_langchain(m) for m in messages], limit=limit
        )

    async def _graph(self, turn: Any, messages: tuple[Message, ...], limit: int | None) -> OperationResult:
        # A real compiled graph with a checkpointer; the history is stored for a thread_id.
        async def respond(state: MessagesState) -> dict[str, Any]:
            return {"messages": []}

        builder = StateGraph(MessagesState)
        builder.add_node("respond", respond)
        builder.add_edge(START, "respond")
        builder.add_edge("respond", END)
        graph = builder.compile(checkpointer=InMemorySaver())
        config: Any = {"configurable": {"thread_id": str(uuid.uuid4())}}
        if messages:
            await graph.aupdate_state(config, {"messages": [to_langchain(m) for m in messages]})
        else:
            await graph.aupdate_state(config, {"messages": []})
        return await self.service.send_chat_history(turn, graph, config, limit=limit)

    async def _chat_history(
        self, turn: Any, messages: tuple[Message, ...], limit: int | None
    ) -> OperationResult:
        history = InMemoryChatMessageHistory()
        await history.aadd_messages([to_langchain(m) for m in messages])
        return await self.service.send_chat_history_from_chat_history(turn, history, limit=limit)

    def surfaces(self) -> tuple[Surface, ...]:
        return (
            Surface("messages", self._messages),
            Surface("graph_state", self._graph),
            Surface("chat_message_history", self._chat_history),
        )

    def missing_argument_calls(self, turn: Any) -> dict[str, Callable[[], Awaitable[Any]]]:
        s = self.service
        return {
            "turn_context is required": lambda: s.send_chat_history_from_messages(None, []),  # type: ignore[arg-type]
            "messages is required": lambda: s.send_chat_history_from_messages(turn, None),  # type: ignore[arg-type]
        }

    @asynccontextmanager
    async def register(self, authorization: Any, turn: Any) -> AsyncIterator[Any]:
        async with self.service.mcp_tools(authorization, "AGENTIC", turn) as toolset:
            yield toolset


# -- OpenAI Agents SDK -----------------------------------------------------------------------------


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
        return await self.service.send_chat_history_messages(
            turn, [to_openai(m) for m in messages], limit=limit
        )

    async def _session(self, turn: Any, messages: tuple[Message, ...], limit: int | None) -> OperationResult:
        session = SQLiteSession(str(uuid.uuid4()))  # the SDK's real session store (in-memory SQLite)
        try:
            await session.add_items([to_openai(m) for m in messages])  # type: ignore[misc]
            return await self.service.send_chat_history(turn, session, limit=limit)
        finally:
            session.close()

    def surfaces(self) -> tuple[Surface, ...]:
        return (
            Surface("input_items", self._items),
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


ADAPTERS: dict[str, Callable[[McpToolServerConfigurationService], ExtensionAdapter]] = {
    "langchain": lambda svc: LangChainAdapter(lc_ext.McpToolRegistrationService(svc)),
    "openai": lambda svc: OpenAIAdapter(oa_ext.McpToolRegistrationService(svc)),
}
