"""A scripted chat model: the one double in these tests (the model cannot run here).

It is a real ``BaseChatModel``: ``create_agent`` and hand-written loops drive it exactly like
a provider's model. Each call returns the next scripted step; a step is an ``AIMessage`` or a
function of the messages the model was given (to answer from tool results). ``bind_tools``
records the tool schemas the model would receive.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field

Step = AIMessage | Callable[[list[BaseMessage]], AIMessage]

_ids = itertools.count(1)


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


class ScriptedChatModel(BaseChatModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: list[Any] = Field(default_factory=list)  # of Step (pydantic cannot validate the union)
    repeat_last: bool = False
    seen: list[list[BaseMessage]] = Field(default_factory=list)
    bound_tools: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        # Same instance (shared script/recordings): what the provider would receive is recorded.
        self.bound_tools[:] = [convert_to_openai_tool(t) for t in tools]
        return self

    def _next(self, messages: list[BaseMessage]) -> AIMessage:
        self.seen.append(list(messages))
        index = len(self.seen) - 1
        if index >= len(self.script):
            if not (self.repeat_last and self.script):
                raise AssertionError(f"model called {index + 1} times, script has {len(self.script)} steps")
            index = len(self.script) - 1
        step = self.script[index]
        message = step(list(messages)) if callable(step) else step
        # A fresh copy each time (with fresh tool call ids when repeating a step).
        copy = message.model_copy(deep=True)
        if self.repeat_last and copy.tool_calls:
            copy.tool_calls = [{**c, "id": f"call-{next(_ids)}"} for c in copy.tool_calls]
        return copy

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next(messages))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next(messages))])

    def bound_parameter_names(self) -> dict[str, set[str]]:
        """Tool name -> the parameter names in the schema bound to the model."""
        return {
            t["function"]["name"]: set(t["function"].get("parameters", {}).get("properties", {}))
            for t in self.bound_tools
        }
