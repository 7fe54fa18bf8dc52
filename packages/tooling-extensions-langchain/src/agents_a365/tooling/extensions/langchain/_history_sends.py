"""Threat-protection chat history from LangChain and LangGraph stores (the four levels of the README)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.runnables import RunnableConfig

from agents_a365.runtime import OperationResult, TurnContextLike
from agents_a365.tooling import ToolOptions
from agents_a365.tooling.extensibility import check_limit, renamed_kwargs
from agents_a365.tooling.extension_base import ExtensionServiceBase, require

from ._conversion import convert_messages

__all__ = ["ChatHistorySends", "StateGraphLike"]


class StateGraphLike(Protocol):
    """A compiled LangGraph graph (``CompiledStateGraph``, ``create_agent``'s result): only
    ``aget_state`` is called."""

    async def aget_state(self, config: RunnableConfig, *, subgraphs: bool = False) -> Any: ...


def _state_messages(state_snapshot: Any) -> Any:
    """``state_snapshot.values["messages"]`` of a LangGraph ``StateSnapshot``."""
    values = getattr(state_snapshot, "values", None)
    messages = values.get("messages") if isinstance(values, Mapping) else getattr(values, "messages", None)
    if messages is None:
        raise ValueError("state_snapshot must contain messages")
    return messages


class ChatHistorySends(ExtensionServiceBase):
    """The chat-history half of the LangChain registration service."""

    # -- chat history ------------------------------------------------------------------------
    @renamed_kwargs(tool_options="options")
    async def send_chat_history(
        self,
        turn_context: TurnContextLike,
        graph: StateGraphLike,
        config: RunnableConfig,
        limit: int | None = None,
        options: ToolOptions | None = None,
    ) -> OperationResult:
        """Level 1: the messages of ``graph``'s state for ``config`` (e.g. a checkpointer's
        ``thread_id``). A failing ``aget_state``, or one that does not answer within
        ``chat_history_timeout``, gives a failed result."""
        require(turn_context, "turn_context")
        require(graph, "graph")
        require(config, "config")
        check_limit(limit)
        return await self.send_history_from_store(
            turn_context,
            lambda: graph.aget_state(config),
            lambda snapshot: convert_messages(_state_messages(snapshot), limit),
            options,
            store="the graph state",
        )

    @renamed_kwargs(tool_options="options")
    async def send_chat_history_from_state(
        self,
        turn_context: TurnContextLike,
        state_snapshot: Any,
        limit: int | None = None,
        options: ToolOptions | None = None,
    ) -> OperationResult:
        """Level 2: ``state_snapshot.values["messages"]`` of a LangGraph ``StateSnapshot``."""
        require(turn_context, "turn_context")
        require(state_snapshot, "state_snapshot")
        return await self.send_chat_history_from_messages(
            turn_context, _state_messages(state_snapshot), limit, options
        )

    @renamed_kwargs(tool_options="options")
    async def send_chat_history_from_chat_history(
        self,
        turn_context: TurnContextLike,
        chat_history: BaseChatMessageHistory,
        limit: int | None = None,
        options: ToolOptions | None = None,
    ) -> OperationResult:
        """Level 3: the messages of any ``BaseChatMessageHistory`` (``aget_messages``); a failing
        store, or one that does not answer within ``chat_history_timeout``, gives a failed result."""
        require(turn_context, "turn_context")
        require(chat_history, "chat_history")
        check_limit(limit)
        return await self.send_history_from_store(
            turn_context,
            chat_history.aget_messages,
            lambda messages: convert_messages(messages, limit),
            options,
            store="the message history",
        )

    @renamed_kwargs(tool_options="options")
    async def send_chat_history_from_messages(
        self,
        turn_context: TurnContextLike,
        messages: Sequence[Any],
        limit: int | None = None,
        options: ToolOptions | None = None,
    ) -> OperationResult:
        """Level 4: convert LangChain messages and send them (``limit``: the most recent N).

        Always sends, even an empty list (threat protection registers the user message from
        it). Remote failures come back as a failed result; bad arguments raise ``ValueError``.
        """
        require(turn_context, "turn_context")  # the history builder checks ``messages``
        return await self.send_history(turn_context, convert_messages(messages, limit), options)
