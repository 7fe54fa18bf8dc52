"""The LangChain extension's contract adapter: neutral conversation -> LangChain messages -> its API."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

from agents_a365.emulator.contract import Message, Surface, Text
from agents_a365.runtime import OperationResult
from agents_a365.tooling.extensions import langchain as lc_ext

__all__ = ["LangChainAdapter", "to_langchain"]


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

    async def tool_names(self, registered: Any) -> list[str]:
        """The names the model sees (through LangChain's own conversion for a provider, as ``bind_tools``)."""
        return [convert_to_openai_tool(t)["function"]["name"] for t in registered.tools()]

    async def call_tool(self, registered: Any, name: str, arguments: dict[str, Any]) -> Any:
        return await next(t for t in registered.tools() if t.name == name).ainvoke(arguments)


class LangChainBuildOnceAdapter(LangChainAdapter):
    """The same contract through the build-once form: ``service.create_agent`` (one graph for every user), each
    tool call resolving its turn (here the turn scope of the registration block)."""

    @asynccontextmanager
    async def register(self, authorization: Any, turn: Any) -> AsyncIterator[Any]:
        from support.scripted_langchain import ScriptedChatModel, calls

        agent = self.service.create_agent(
            {"model": ScriptedChatModel(script=[calls(text="-")])},
            authorization=authorization,
            auth_handler_name="AGENTIC",
        )
        with self.service.configuration_service.turn_scope(turn, authorization, "AGENTIC"):
            graph = await agent.graph()
            yield list(graph.nodes["tools"].bound.tools_by_name.values())

    async def tool_names(self, registered: Any) -> list[str]:
        return [convert_to_openai_tool(t)["function"]["name"] for t in registered]

    async def call_tool(self, registered: Any, name: str, arguments: dict[str, Any]) -> Any:
        return await next(t for t in registered if t.name == name).ainvoke(arguments)
