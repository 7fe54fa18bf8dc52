"""Scripted models for the OpenAI Agents SDK: the one part of a run that cannot be real here (no LLM).

Everything around them (Runner, tools, MCP over HTTP, sessions) is the real SDK.

* :class:`ScriptedModel` plays steps, one per ``get_response``: each receives the input items the Runner
  gives the model and the tools it offers, and returns the output items of that model turn.
* :class:`ScriptedResponsesModel` streams each :class:`Turn` as real ``openai.types.responses`` events,
  deltas split like a real provider's (for the UI stream suites).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agents import Model, ModelResponse, Tool, Usage
from agents.models.interface import ModelTracing
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseCreatedEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionCallArgumentsDoneEvent,
    ResponseFunctionToolCall,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
    ResponseReasoningSummaryTextDeltaEvent,
    ResponseTextDeltaEvent,
)
from openai.types.responses.response_reasoning_item import Summary

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


@dataclass
class Turn:
    """One model response: an ordered list of (kind, payload) items."""

    items: list[tuple[str, Any]] = field(default_factory=list)

    def reasoning(self, *pieces: str) -> Turn:
        self.items.append(("reasoning", pieces))
        return self

    def text(self, *pieces: str) -> Turn:
        self.items.append(("text", pieces))
        return self

    def call(self, call_id: str, name: str, *arg_pieces: str) -> Turn:
        self.items.append(("call", (call_id, name, arg_pieces)))
        return self

    def fail(self, error: BaseException) -> Turn:
        self.items.append(("fail", error))
        return self


def _response(response_id: str, output: list[Any], status: str) -> Response:
    return Response(
        id=response_id,
        created_at=0,
        model="scripted",
        object="response",
        output=output,
        tool_choice="auto",
        tools=[],
        top_p=None,
        parallel_tool_calls=True,
        status=status,  # type: ignore[arg-type]
    )


class ScriptedResponsesModel(Model):
    def __init__(self, turns: list[Turn], *, delay: float = 0.0) -> None:
        self.turns = turns
        self.delay = delay
        self.calls = 0
        self.inputs: list[Any] = []

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        raise NotImplementedError("the UI stream only uses streamed runs")

    async def stream_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> AsyncIterator[Any]:  # type: ignore[override]
        self.inputs.append(input)
        turn = self.turns[self.calls]
        self.calls += 1
        response_id = f"resp_{self.calls}"
        seq = 0

        def n() -> int:
            nonlocal seq
            seq += 1
            return seq

        yield ResponseCreatedEvent(
            type="response.created", response=_response(response_id, [], "in_progress"), sequence_number=n()
        )
        output: list[Any] = []
        for kind, payload in turn.items:
            await asyncio.sleep(self.delay)
            index = len(output)
            if kind == "fail":
                raise payload
            if kind == "reasoning":
                item_id = f"rs_{self.calls}_{index}"
                yield ResponseOutputItemAddedEvent(
                    type="response.output_item.added",
                    item=ResponseReasoningItem(id=item_id, type="reasoning", summary=[]),
                    output_index=index,
                    sequence_number=n(),
                )
                for piece in payload:
                    await asyncio.sleep(self.delay)
                    yield ResponseReasoningSummaryTextDeltaEvent(
                        type="response.reasoning_summary_text.delta",
                        item_id=item_id,
                        output_index=index,
                        summary_index=0,
                        delta=piece,
                        sequence_number=n(),
                    )
                item = ResponseReasoningItem(
                    id=item_id,
                    type="reasoning",
                    summary=[Summary(type="summary_text", text="".join(payload))],
                )
            elif kind == "text":
                item_id = f"msg_{self.calls}_{index}"
                yield ResponseOutputItemAddedEvent(
                    type="response.output_item.added",
                    item=ResponseOutputMessage(
                        id=item_id, type="message", role="assistant", status="in_progress", content=[]
                    ),
                    output_index=index,
                    sequence_number=n(),
                )
                for piece in payload:
                    await asyncio.sleep(self.delay)
                    yield ResponseTextDeltaEvent(
                        type="response.output_text.delta",
                        item_id=item_id,
                        output_index=index,
                        content_index=0,
                        delta=piece,
                        logprobs=[],
                        sequence_number=n(),
                    )
                item = ResponseOutputMessage(
                    id=item_id,
                    type="message",
                    role="assistant",
                    status="completed",
                    content=[ResponseOutputText(type="output_text", text="".join(payload), annotations=[])],
                )
            else:
                call_id, name, pieces = payload
                item_id = f"fc_{self.calls}_{index}"
                yield ResponseOutputItemAddedEvent(
                    type="response.output_item.added",
                    item=ResponseFunctionToolCall(
                        id=item_id,
                        type="function_call",
                        call_id=call_id,
                        name=name,
                        arguments="",
                        status="in_progress",
                    ),
                    output_index=index,
                    sequence_number=n(),
                )
                for piece in pieces:
                    await asyncio.sleep(self.delay)
                    yield ResponseFunctionCallArgumentsDeltaEvent(
                        type="response.function_call_arguments.delta",
                        item_id=item_id,
                        output_index=index,
                        delta=piece,
                        sequence_number=n(),
                    )
                arguments = "".join(pieces)
                yield ResponseFunctionCallArgumentsDoneEvent.model_validate(
                    {
                        "type": "response.function_call_arguments.done",
                        "item_id": item_id,
                        "output_index": index,
                        "arguments": arguments,
                        "name": name,
                        "sequence_number": n(),
                    }
                )
                item = ResponseFunctionToolCall(
                    id=item_id,
                    type="function_call",
                    call_id=call_id,
                    name=name,
                    arguments=arguments,
                    status="completed",
                )
            output.append(item)
            yield ResponseOutputItemDoneEvent(
                type="response.output_item.done", item=item, output_index=index, sequence_number=n()
            )
        yield ResponseCompletedEvent(
            type="response.completed",
            response=_response(response_id, output, "completed"),
            sequence_number=n(),
        )


__all__ = ["ScriptedResponsesModel", "Turn", "Usage"]
