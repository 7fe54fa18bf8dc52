"""A scripted ``agents`` Model: the one part of a run that cannot be real here (no LLM, no network).

Each step receives the input items the Runner gives the model and the tools it offers, and
returns the output items of that model turn. Everything around it (Runner, tools, MCP over HTTP,
sessions) is the real SDK.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from agents import ModelResponse, Tool, Usage
from agents.models.interface import Model, ModelTracing
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

Step = Callable[[list[Any], list[Tool]], list[Any]]


def function_call(
    name: str, arguments: dict[str, Any], call_id: str | None = None
) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        type="function_call",
        id=f"fc_{uuid.uuid4().hex[:12]}",
        call_id=call_id or f"call_{uuid.uuid4().hex[:12]}",
        name=name,
        arguments=json.dumps(arguments),
        status="completed",
    )


def assistant_message(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        type="message",
        id=f"msg_{uuid.uuid4().hex[:12]}",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )


def tool_outputs(items: Sequence[Any]) -> list[str]:
    """The text of every ``function_call_output`` item among the model's input."""
    result: list[str] = []
    for item in items:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            output = item.get("output")
            if isinstance(output, str):
                result.append(output)
            elif isinstance(output, list):
                result.extend(str(p.get("text", "")) for p in output if isinstance(p, dict))
            elif isinstance(output, dict):
                result.append(str(output.get("text", "")))
    return result


class ScriptedModel(Model):
    """Plays ``steps`` in order, one per ``get_response``; records what it was given."""

    def __init__(self, steps: Sequence[Step]) -> None:
        self._steps = list(steps)
        self.calls: list[tuple[list[Any], list[str]]] = []

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[Any],
        model_settings: Any,
        tools: list[Tool],
        output_schema: Any,
        handoffs: list[Any],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
    ) -> ModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        self.calls.append((items, [tool.name for tool in tools]))
        if not self._steps:
            raise AssertionError("the scripted model ran out of steps")
        step = self._steps.pop(0)
        return ModelResponse(output=step(items, tools), usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the scripted model does not stream")
