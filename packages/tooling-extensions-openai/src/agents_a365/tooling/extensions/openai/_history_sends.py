"""Threat-protection chat history from an OpenAI Agents SDK ``Session`` or a list of its items."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents.memory import Session

from agents_a365.runtime import OperationResult, TurnContextLike
from agents_a365.tooling import ToolOptions
from agents_a365.tooling.extensibility import check_limit
from agents_a365.tooling.extension_base import ExtensionServiceBase, require

from ._conversion import to_chat_history_messages

__all__ = ["ChatHistorySends"]


class ChatHistorySends(ExtensionServiceBase):
    """The chat-history half of the OpenAI registration service."""

    async def send_chat_history(
        self,
        turn_context: TurnContextLike,
        session: Session,
        limit: int | None = None,
        options: ToolOptions | None = None,
    ) -> OperationResult:
        """Send the items of an OpenAI Agents SDK ``session`` to threat protection.

        ``limit`` keeps the most recent N items (``Session.get_items`` semantics; ``None`` =
        the session's default, usually all). A session that fails (or does not answer within
        ``chat_history_timeout``) gives a failed :class:`OperationResult`, as do remote failures;
        ``ValueError`` for a missing turn context (``turn_context is required``) or session
        (``session is required``) or a bad ``limit``.
        """
        require(turn_context, "turn_context")
        require(session, "session")
        if not callable(getattr(session, "get_items", None)):
            raise ValueError("session must be an agents Session (it has no get_items)")
        check_limit(limit)
        if limit == 0:  # the most recent 0 items: nothing to read, an empty history is still sent
            return await self.send_history(turn_context, [], options)
        return await self.send_history_from_store(
            turn_context,
            lambda: session.get_items(limit),
            to_chat_history_messages,
            options,
            store="the session",
        )

    async def send_chat_history_messages(
        self,
        turn_context: TurnContextLike,
        messages: Sequence[Any],
        options: ToolOptions | None = None,
        *,
        limit: int | None = None,
    ) -> OperationResult:
        """Convert OpenAI Agents SDK items (dicts or models) and send them to threat protection.

        ``limit`` keeps the most recent N items (as ``send_chat_history`` with a session does).

        Always sends, even an empty list (the platform registers the user message from it).
        ``ValueError`` for a missing turn context or messages (``messages is required``); remote
        failures come back as a failed :class:`OperationResult`.
        """
        require(turn_context, "turn_context")
        # The history builder checks ``messages`` (``messages is required`` …).
        return await self.send_history(turn_context, to_chat_history_messages(messages, limit=limit), options)
