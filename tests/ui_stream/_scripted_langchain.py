"""A scripted streaming chat model: the only double in the LangChain scenarios (tools and graph are real)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field, PrivateAttr


class ScriptError(RuntimeError):
    """Raised by a scripted turn to simulate a provider failure mid-stream."""


class ScriptedChatModel(BaseChatModel):
    """Streams one scripted list of AIMessageChunks (or exceptions) per model call, in order."""

    turns: list[list[Any]] = Field(default_factory=list)
    delay: float = 0.0
    seen_inputs: list[list[BaseMessage]] = Field(default_factory=list)
    _calls: int = PrivateAttr(default=0)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        # The script decides which tools are called; binding is a no-op like a model that ignores schemas.
        return self

    def _next_turn(self, messages: list[BaseMessage]) -> list[Any]:
        self.seen_inputs.append(list(messages))
        turn = self.turns[self._calls]
        self._calls += 1
        return turn

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        merged: AIMessageChunk | None = None
        for item in self._next_turn(messages):
            if isinstance(item, BaseException):
                raise item
            merged = item if merged is None else merged + item
        assert merged is not None
        message = AIMessage(
            content=merged.content, tool_calls=merged.tool_calls, invalid_tool_calls=merged.invalid_tool_calls
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for item in self._next_turn(messages):
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
        for item in self._next_turn(messages):
            if self.delay:
                await asyncio.sleep(self.delay)
            else:
                await asyncio.sleep(0)
            if isinstance(item, BaseException):
                raise item
            chunk = ChatGenerationChunk(message=item)
            if run_manager is not None:
                await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk


def text(*pieces: str) -> list[AIMessageChunk]:
    return [AIMessageChunk(content=p) for p in pieces]


def reasoning(*pieces: str) -> list[AIMessageChunk]:
    return [AIMessageChunk(content=[{"type": "reasoning", "reasoning": p}]) for p in pieces]


def tool_call(index: int, call_id: str, name: str, *arg_pieces: str) -> list[AIMessageChunk]:
    """A tool call split across chunks: only the first chunk carries the id and name (like real providers)."""
    chunks = [
        AIMessageChunk(
            content="", tool_call_chunks=[{"index": index, "id": call_id, "name": name, "args": ""}]
        )
    ]
    chunks += [
        AIMessageChunk(content="", tool_call_chunks=[{"index": index, "id": None, "name": None, "args": p}])
        for p in arg_pieces
    ]
    return chunks
