"""A third party's extension held to the Agent 365 extension contract: one adapter, one subclass.

Run: ``pytest`` in this folder (with ``agents-a365-emulator`` installed; its pytest plugin, loaded by
``addopts`` in ``pytest.ini``, provides the ``emulator`` fixture). Here the "extension" is a small OpenAI Agents SDK integration written against the
public tooling API, as an outside author would write theirs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from agents_a365.emulator.contract import AdapterFactory, ExtensionContractTests, Message, Surface, Text
from agents_a365.tooling.extensions.openai import McpToolRegistrationService


def to_items(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """The neutral conversation as this framework's native messages."""
    items: list[dict[str, Any]] = []
    for m in messages:
        text = (
            m.content
            if isinstance(m.content, str)
            else " ".join(p.text for p in m.content if isinstance(p, Text))
        )
        if m.role == "tool":
            item: dict[str, Any] = {"type": "function_call_output", "call_id": m.call_id, "output": text}
        elif isinstance(m.content, str):
            item = {"role": m.role, "content": m.content}
        else:
            item = {
                "role": m.role,
                "content": [{"type": "input_text", "text": p.text} for p in m.content if isinstance(p, Text)],
            }
        if m.id is not None:
            item["id"] = m.id
        items.append(item)
    return items


class MyAdapter:
    name = "my-extension"
    orchestrator = "OpenAI"  # what the extension puts in User-Agent
    distribution = "agents-a365-tooling-extensions-openai"  # whose version User-Agent reports

    def __init__(self, service: McpToolRegistrationService) -> None:
        self.service = service

    async def _send(self, turn: Any, messages: tuple[Message, ...], limit: int | None) -> Any:
        return await self.service.send_chat_history_messages(turn, to_items(messages), limit=limit)

    def surfaces(self) -> tuple[Surface, ...]:
        return (Surface("items", self._send),)

    def missing_argument_calls(self, turn: Any) -> dict[str, Callable[[], Awaitable[Any]]]:
        return {
            "turn_context is required": lambda: self.service.send_chat_history_messages(None, []),  # type: ignore[arg-type]
            "messages is required": lambda: self.service.send_chat_history_messages(turn, None),  # type: ignore[arg-type]
        }

    @asynccontextmanager
    async def register(self, authorization: Any, turn: Any) -> AsyncIterator[Any]:
        from agents import Agent

        async with self.service.connected_agent(Agent(name="a"), authorization, "AGENTIC", turn) as agent:
            yield agent


class TestMyExtension(ExtensionContractTests):
    @pytest.fixture
    def adapter_factory(self) -> AdapterFactory:
        return lambda tooling: MyAdapter(McpToolRegistrationService(tooling))
