"""The scripted LangChain chat model: the one double of the LangChain suites (no LLM can run here).

It is a real ``BaseChatModel``: ``create_agent`` and hand-written loops drive it exactly like a provider's
model. Each model call plays the next entry of ``script``:

* an ``AIMessage``, or a function of the messages the model was given returning one (to answer from tool
  results): returned whole, or streamed as one chunk;
* a list of ``AIMessageChunk`` (and exceptions, to fail mid-stream): streamed piece by piece like a real
  provider (``text``, ``reasoning`` and ``tool_call`` build them), or merged when not streamed.

``bind_tools`` records the tool schemas the provider would receive; ``seen`` what each call was given.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field

__all__ = [
    "ScriptError",
    "ScriptedChatModel",
    "Step",
    "call",
    "calls",
    "reasoning",
    "text",
    "tool_call",
    "tool_results",
]

Step = AIMessage | Callable[[list[BaseMessage]], AIMessage] | list[Any]

_ids = itertools.count(1)


class ScriptError(RuntimeError):
    """Raised by a scripted turn to simulate a provider failure mid-stream."""


def call(name: str, **args: Any) -> dict[str, Any]:
    """One tool call for a scripted ``AIMessage``."""
    return {"name": name, "args": args, "id": f"call-{next(_ids)}", "type": "tool_call"}


def calls(*tool_calls: dict[str, Any], text: str = "") -> AIMessage:
    return AIMessage(content=text, tool_calls=list(tool_calls))


def tool_results(messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    """The ToolMessages after the last AI message with tool calls."""
    results: list[ToolMessage] = []
    for message in reversed(messages):
        if isinstance(message, ToolMessage):
            results.append(message)
        else:
            break
    return list(reversed(results))


def text(*pieces: str) -> list[AIMessageChunk]:
    return [AIMessageChunk(content=p) for p in pieces]


def reasoning(*pieces: str) -> list[AIMessageChunk]:
    return [AIMessageChunk(content=[{"type": "reasoning", "reasoning": p}]) for p in pieces]


def tool_call(index: int, call_id: str, name: str, *arg_pieces: str) -> list[AIMessageChunk]:
    """A tool call split across chunks: only the first chunk carries the id and name (like real providers)."""
    first = [{"index": index, "id": call_id, "name": name, "args": ""}]
    rest = [[{"index": index, "id": None, "name": None, "args": p}] for p in arg_pieces]
    return [AIMessageChunk(content="", tool_call_chunks=c) for c in [first, *rest]]  # type: ignore[misc]


def _as_chunk(message: AIMessage) -> AIMessageChunk:
    """A whole scripted message as the one chunk a provider would stream for it."""
    chunks = [
        {"index": i, "id": c["id"], "name": c["name"], "args": json.dumps(c["args"])}
        for i, c in enumerate(message.tool_calls)
    ]
    return AIMessageChunk(content=message.content, tool_call_chunks=chunks, id=message.id)  # type: ignore[arg-type]


class ScriptedChatModel(BaseChatModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: list[Any] = Field(default_factory=list)  # of Step (pydantic cannot validate the union)
    repeat_last: bool = False
    delay: float = 0.0
    seen: list[list[BaseMessage]] = Field(default_factory=list)
    bound_tools: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        # Same instance (shared script/recordings): what the provider would receive is recorded.
        self.bound_tools[:] = [convert_to_openai_tool(t) for t in tools]
        return self

    def bound_parameter_names(self) -> dict[str, set[str]]:
        """Tool name -> the parameter names in the schema bound to the model."""
        return {
            t["function"]["name"]: set(t["function"].get("parameters", {}).get("properties", {}))
            for t in self.bound_tools
        }

    def _next(self, messages: list[BaseMessage]) -> AIMessage | list[Any]:
        self.seen.append(list(messages))
        index = len(self.seen) - 1
        if index >= len(self.script):
            if not (self.repeat_last and self.script):
                raise AssertionError(f"model called {index + 1} times, script has {len(self.script)} steps")
            index = len(self.script) - 1
        step = self.script[index]
        if isinstance(step, list):
            return step
        message = step(list(messages)) if callable(step) else step
        # A fresh copy each time (with fresh tool call ids when repeating a step).
        copy = message.model_copy(deep=True)
        if self.repeat_last and copy.tool_calls:
            copy.tool_calls = [{**c, "id": f"call-{next(_ids)}"} for c in copy.tool_calls]
        return copy

    def _whole(self, messages: list[BaseMessage]) -> ChatResult:
        step = self._next(messages)
        if isinstance(step, AIMessage):
            return ChatResult(generations=[ChatGeneration(message=step)])
        merged: AIMessageChunk | None = None
        for item in step:
            if isinstance(item, BaseException):
                raise item
            merged = item if merged is None else merged + item
        assert merged is not None, "an empty streamed turn"
        message = AIMessage(
            content=merged.content, tool_calls=merged.tool_calls, invalid_tool_calls=merged.invalid_tool_calls
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _pieces(self, messages: list[BaseMessage]) -> list[Any]:
        step = self._next(messages)
        return [_as_chunk(step)] if isinstance(step, AIMessage) else step

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._whole(messages)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._whole(messages)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for item in self._pieces(messages):
            if isinstance(item, BaseException):
                raise item
            yield ChatGenerationChunk(message=item)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        for item in self._pieces(messages):
            # A real stream yields to the loop between pieces (a delay, when scripted, is the provider's).
            await asyncio.sleep(self.delay)
            if isinstance(item, BaseException):
                raise item
            chunk = ChatGenerationChunk(message=item)
            if run_manager is not None:
                await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk
