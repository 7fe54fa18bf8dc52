"""The scripted model for the OpenAI Agents SDK (see ``scripted``): real Responses stream events."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from agents import Model, ModelResponse
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseCreatedEvent,
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

from .scripted import ScriptedModelError, _plan, _words


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


def _last_user_and_tool_output(items: Any) -> tuple[str, str | None]:
    if isinstance(items, str):
        return items, None
    user, output = "", None
    for item in items:
        if item.get("role") == "user":
            content = item.get("content")
            user = content if isinstance(content, str) else " ".join(c.get("text", "") for c in content or [])
            output = None
        elif item.get("type") == "function_call_output":
            output = str(item.get("output"))
    return user, output


class ScriptedResponsesModel(Model):
    def __init__(self) -> None:
        self.calls = 0

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        raise NotImplementedError("the example only streams")

    async def stream_response(  # type: ignore[override]
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> AsyncIterator[Any]:
        self.calls += 1
        rid, seq, output = f"resp_{self.calls}", 0, []

        def n() -> int:
            nonlocal seq
            seq += 1
            return seq

        reasoning, text, call, failure = _plan(*_last_user_and_tool_output(input))
        yield ResponseCreatedEvent(
            type="response.created", response=_response(rid, [], "in_progress"), sequence_number=n()
        )
        if reasoning:
            rs = ResponseReasoningItem(id=f"rs_{rid}", type="reasoning", summary=[])
            yield ResponseOutputItemAddedEvent(
                type="response.output_item.added", item=rs, output_index=len(output), sequence_number=n()
            )
            yield ResponseReasoningSummaryTextDeltaEvent(
                type="response.reasoning_summary_text.delta",
                item_id=rs.id,
                output_index=len(output),
                summary_index=0,
                delta=reasoning,
                sequence_number=n(),
            )
            done = ResponseReasoningItem(
                id=rs.id, type="reasoning", summary=[Summary(type="summary_text", text=reasoning)]
            )
            yield ResponseOutputItemDoneEvent(
                type="response.output_item.done", item=done, output_index=len(output), sequence_number=n()
            )
            output.append(done)
        if text:
            mid = f"msg_{rid}"
            started = ResponseOutputMessage(
                id=mid, type="message", role="assistant", status="in_progress", content=[]
            )
            yield ResponseOutputItemAddedEvent(
                type="response.output_item.added", item=started, output_index=len(output), sequence_number=n()
            )
            for word in _words(text):
                yield ResponseTextDeltaEvent(
                    type="response.output_text.delta",
                    item_id=mid,
                    output_index=len(output),
                    content_index=0,
                    delta=word,
                    logprobs=[],
                    sequence_number=n(),
                )
            if failure:
                raise ScriptedModelError(failure)
            message = ResponseOutputMessage(
                id=mid,
                type="message",
                role="assistant",
                status="completed",
                content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
            )
            yield ResponseOutputItemDoneEvent(
                type="response.output_item.done", item=message, output_index=len(output), sequence_number=n()
            )
            output.append(message)
        if call:
            fc = ResponseFunctionToolCall(
                id=f"fc_{rid}",
                type="function_call",
                call_id=f"call_{rid}",
                name=call["name"],
                arguments=json.dumps(call["args"]),
                status="completed",
            )
            yield ResponseOutputItemAddedEvent(
                type="response.output_item.added", item=fc, output_index=len(output), sequence_number=n()
            )
            yield ResponseOutputItemDoneEvent(
                type="response.output_item.done", item=fc, output_index=len(output), sequence_number=n()
            )
            output.append(fc)
        yield ResponseCompletedEvent(
            type="response.completed", response=_response(rid, output, "completed"), sequence_number=n()
        )
