"""Scripted models so the example runs without a model key (the tools, agents and stream are all real).

The script reacts to the conversation: a question gets a reasoning line and a ``get_weather`` call, a tool
result gets an answer quoting it. "slow" in the question calls ``slow_report`` instead (to try Stop);
"fail" makes the model fail mid-answer (to see the error chunk).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult


class ScriptedModelError(RuntimeError):
    """The scripted model's simulated provider failure."""


def _plan(last_user: str, tool_output: str | None) -> tuple[str, str, dict[str, Any] | None, str]:
    """(reasoning, text, tool call {"name", "args"} or None, failure) for the next model turn."""
    if tool_output is not None:
        return "", _answer(tool_output), None, ""
    if "fail" in last_user.lower():
        return "", "Let me think", None, "the scripted model failed on purpose"
    if "slow" in last_user.lower():
        return "This needs the slow report.", "", {"name": "slow_report", "args": {"topic": last_user}}, ""
    match = re.search(r"\bin ([A-Z][\w-]+)", last_user)
    city = match.group(1) if match else "Paris"
    return (
        f"The user asks about {city}; I will call get_weather.",
        "",
        {"name": "get_weather", "args": {"city": city}},
        "",
    )


def _answer(tool_output: str) -> str:
    try:
        weather = json.loads(tool_output)
        return f"It is {weather['forecast']} and {weather['temperature']} °C in {weather['city']}."
    except (ValueError, TypeError, KeyError):
        return f"Here is what the tool returned: {tool_output}"


def _words(text: str) -> list[str]:
    return re.findall(r"\S+\s*", text)


class ScriptedChatModel(BaseChatModel):
    """A LangChain chat model following :func:`_plan`, streamed word by word."""

    @property
    def _llm_type(self) -> str:
        return "a365-scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        return self

    def _chunks(self, messages: list[BaseMessage]) -> Iterator[AIMessageChunk]:
        last = messages[-1]
        users = [m for m in messages if m.type == "human"]
        tool_output = str(last.content) if isinstance(last, ToolMessage) else None
        reasoning, text, call, failure = _plan(str(users[-1].content) if users else "", tool_output)
        if reasoning:
            yield AIMessageChunk(content=[{"type": "reasoning", "reasoning": reasoning}])
        for word in _words(text):
            yield AIMessageChunk(content=word)
        if failure:
            raise ScriptedModelError(failure)
        if call:
            call_id = f"call_{len(messages)}"
            yield AIMessageChunk(
                content="",
                tool_call_chunks=[
                    {"index": 0, "id": call_id, "name": call["name"], "args": json.dumps(call["args"])}
                ],
            )

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        merged: AIMessageChunk | None = None
        for chunk in self._chunks(messages):
            merged = chunk if merged is None else merged + chunk
        assert merged is not None
        message = AIMessage(content=merged.content, tool_calls=merged.tool_calls)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in self._chunks(messages):
            yield ChatGenerationChunk(message=chunk)

    async def _astream(
        self, messages: list[BaseMessage], *args: Any, run_manager: Any = None, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in self._chunks(messages):
            generation = ChatGenerationChunk(message=chunk)
            if run_manager is not None:
                await run_manager.on_llm_new_token(generation.text, chunk=generation)
            yield generation
