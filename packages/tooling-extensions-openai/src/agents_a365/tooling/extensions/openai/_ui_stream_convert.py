"""OpenAI Agents SDK ``RunResultStreaming.stream_events()`` -> UI message stream chunks."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from agents import (
    HandoffOutputItem,
    RawResponsesStreamEvent,
    RunItemStreamEvent,
    StreamEvent,
    ToolCallItem,
    ToolCallOutputItem,
)
from agents.tool import default_tool_error_function

from agents_a365.tooling.ui_stream import ErrorTextFunction, FinishReason, UIStreamConverter

from ._conversion import _field

_DEFAULT_TOOL_ERROR_TEXT = default_tool_error_function(None, Exception())  # type: ignore[arg-type]

_INCOMPLETE_REASONS: Mapping[str, FinishReason] = {
    "max_output_tokens": "length",
    "content_filter": "content-filter",
}


class ToolErrorText(str):
    """A tool output that is an error message: shown as ``output-error`` in the UI.

    Return it from a tool's ``failure_error_function`` (see ``ui_tool_error_function``); the runner passes
    the object through unchanged, so the converter can tell a failure from an ordinary text output.
    """

    __slots__ = ()


def ui_tool_error_function(ctx: Any, error: Exception) -> ToolErrorText:
    """A ``failure_error_function`` for ``@function_tool`` that marks failures for the UI.

    Like the SDK's default it hides exception details from the model and the user.
    """
    return ToolErrorText(_DEFAULT_TOOL_ERROR_TEXT)


def _default_is_tool_error(item: ToolCallOutputItem) -> bool:
    output = item.output
    return isinstance(output, ToolErrorText) or output == _DEFAULT_TOOL_ERROR_TEXT


class OpenAIUIStreamConverter(UIStreamConverter[StreamEvent]):
    """Maps ``stream_events()``: raw Responses events give the deltas and steps (one per model response),
    run items give tool outputs (``tool_output``) and calls that were not streamed (``tool_called``).

    A tool output is an error (``tool-output-error``) when ``is_tool_error(item)`` says so; by default when
    it is a ``ToolErrorText`` or the SDK's default failure message.
    """

    def __init__(
        self,
        *,
        message_id: str | None = None,
        on_error: ErrorTextFunction | None = None,
        is_tool_error: Callable[[ToolCallOutputItem], bool] | None = None,
    ) -> None:
        super().__init__(message_id=message_id, on_error=on_error)
        self._is_tool_error = is_tool_error or _default_is_tool_error

    def handle(self, event: StreamEvent) -> None:
        if isinstance(event, RawResponsesStreamEvent):
            self._raw(event.data)
        elif isinstance(event, RunItemStreamEvent):
            self._item(event.item)

    def _raw(self, data: Any) -> None:
        state = self.state
        kind = getattr(data, "type", None)
        if kind == "response.output_text.delta" or kind == "response.refusal.delta":
            state.delta("text", data.delta, key=(data.item_id, data.content_index))
        elif kind == "response.reasoning_summary_text.delta":
            state.delta("reasoning", data.delta, key=(data.item_id, "summary", data.summary_index))
        elif kind == "response.reasoning_text.delta":
            state.delta("reasoning", data.delta, key=(data.item_id, "text", data.content_index))
        elif kind == "response.function_call_arguments.delta":
            state.tool_input_chunk(("item", data.item_id), delta=data.delta)
        elif kind == "response.output_item.added":
            item = data.item
            if getattr(item, "type", None) == "function_call":
                state.tool_input_chunk(
                    ("item", item.id or data.output_index),
                    tool_call_id=item.call_id,
                    tool_name=item.name,
                    delta=item.arguments or None,
                )
        elif kind == "response.output_item.done":
            # A function call ends its streamed input (if any) with the final arguments. Text and reasoning
            # end when the next part starts or the response completes (no other chunk comes between).
            item = data.item
            if getattr(item, "type", None) == "function_call":
                state.tool_call(item.call_id, item.name, item.arguments)
        elif kind == "response.created":
            state.model_message(data.response.id)
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            state.end_model_output()
            reason = getattr(getattr(data.response, "incomplete_details", None), "reason", None)
            state.finish_reason = _INCOMPLETE_REASONS.get(reason or "", "other" if reason else None)

    def _item(self, item: object) -> None:
        raw = getattr(item, "raw_item", None)
        call_id = _field(raw, "call_id")
        if not call_id:  # nothing to pair with a tool part
            return
        if isinstance(item, ToolCallOutputItem):
            self.state.tool_result(str(call_id), item.output, is_error=self._is_tool_error(item))
        elif isinstance(item, ToolCallItem):
            name = _field(raw, "name")
            if _field(raw, "type") == "function_call" and name:
                self.state.tool_call(str(call_id), str(name), _field(raw, "arguments") or "")
        elif isinstance(item, HandoffOutputItem):
            self.state.tool_result(str(call_id), {"assistant": item.target_agent.name})
