"""LangGraph/LangChain stream events -> UI message stream chunks."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, Literal

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage
from langchain_core.utils.json import parse_partial_json

from agents_a365.tooling.ui_stream import FinishReason, UIStreamConverter

_FINISH_REASONS: Mapping[str, FinishReason] = {
    "length": "length",
    "max_tokens": "length",
    "content_filter": "content-filter",
    "refusal": "content-filter",
    "safety": "content-filter",
}


def _tool_output(message: ToolMessage) -> Any:
    """Text content (or only text blocks) becomes its text, parsed as JSON later; other blocks stay as is."""
    content = message.content
    if isinstance(content, str) or all(isinstance(b, str) or b.get("type") == "text" for b in content):
        return message.text
    return content


def _langchain_arguments(text: str) -> dict[str, Any]:
    """Accept exactly what LangChain accepts when it merges the chunks (partial JSON, object only), so the
    UI shows the input the tool really ran with."""
    value = parse_partial_json(text)
    if not isinstance(value, dict):
        raise ValueError("tool arguments must be a JSON object")
    return value


class LangChainUIStreamConverter(UIStreamConverter[Any]):
    """Accepts what LangGraph/LangChain streams yield, in any of these shapes:

    - ``graph.astream(..., stream_mode=["messages", "updates"])``: ``(mode, payload)`` tuples
      (``(namespace, mode, payload)`` with ``subgraphs=True``); a single mode works too;
    - ``graph.astream(..., stream_mode="messages")``: ``(message, metadata)`` tuples;
    - ``graph.astream(..., stream_mode="updates")``: ``{node: {"messages": [...]}}`` dicts;
    - ``runnable.astream_events(..., version="v2")``: event dicts (chat model stream/end, tool end);
    - a plain message stream such as ``chat_model.astream(...)``.

    Messages reported twice (``messages`` and ``updates`` mode) are sent once. To keep a model called inside
    a tool out of the stream, tag it with LangGraph's ``nostream`` (``model.with_config(tags=["nostream"])``).
    """

    arguments_parser = staticmethod(_langchain_arguments)
    _last_tool_key: Hashable = 0  # the key of the last tool-call chunk (anonymous continuations belong to it)

    # -- dispatch ----------------------------------------------------------------------------------------

    def handle(self, event: Any) -> None:
        if isinstance(event, BaseMessage):
            self._message(event)
        elif isinstance(event, tuple) and len(event) in (2, 3):
            head, payload = event[-2:]  # (namespace, mode, payload) with subgraphs=True and several modes
            if isinstance(head, BaseMessage):  # stream_mode="messages"
                self._message(head)
            elif head in ("messages", "updates") or isinstance(head, tuple):  # or (namespace, payload)
                self.handle(payload)
        elif isinstance(event, Mapping) and "event" in event and "data" in event:
            self._stream_event(event)
        elif isinstance(event, Mapping):
            self._updates(event)

    def _updates(self, payload: Mapping[str, Any]) -> None:
        for node, update in payload.items():
            if node.startswith("__") or not isinstance(update, Mapping):
                continue  # __interrupt__ and friends carry no messages
            messages = update.get("messages")
            if isinstance(messages, list | tuple):
                for message in messages:
                    self._message(message)

    def _stream_event(self, event: Mapping[str, Any]) -> None:
        kind, data = event.get("event"), event.get("data") or {}
        if kind == "on_chat_model_stream":
            self._message(data.get("chunk"))
        elif kind in ("on_chat_model_end", "on_tool_end"):
            self._message(data.get("output"))

    # -- messages ----------------------------------------------------------------------------------------

    def _message(self, message: object) -> None:
        if isinstance(message, ToolMessage):
            self.state.tool_result(
                message.tool_call_id,
                _tool_output(message),
                is_error=message.status == "error",
                tool_name=message.name,
            )
        elif isinstance(message, AIMessageChunk):
            self._ai_chunk(message)
        elif isinstance(message, AIMessage):  # human/system messages echoed by a node are input, not output
            self._ai_message(message)

    def _ai_chunk(self, chunk: AIMessageChunk) -> None:
        self._model_output(chunk)
        for tool_chunk in chunk.tool_call_chunks:
            index, call_id = tool_chunk.get("index"), tool_chunk.get("id")
            # An anonymous continuation belongs to the call before it.
            key = index if index is not None else ("id", call_id) if call_id else self._last_tool_key
            self._last_tool_key = key
            self.state.tool_input_chunk(
                key, tool_call_id=call_id, tool_name=tool_chunk.get("name"), delta=tool_chunk.get("args")
            )
        self._finish_reason(chunk)
        if chunk.chunk_position == "last":
            self._end_message()

    def _ai_message(self, message: AIMessage) -> None:
        state = self.state
        # The message of a streamed model ends the step's output; its streamed tool inputs end with its calls.
        if message.id is None or message.id != state.step_model_id:
            self._model_output(message)  # a model that did not stream (or a message only seen in ``updates``)
        for call in (*message.tool_calls, *message.invalid_tool_calls):  # invalid ones carry their raw text
            if call.get("id"):
                state.tool_call(str(call["id"]), call.get("name") or "unknown", call.get("args") or "")
        self._finish_reason(message)
        self._end_message()

    def _end_message(self) -> None:
        self.state.end_model_output()
        self._last_tool_key = 0

    def _model_output(self, message: AIMessage) -> None:
        """Text and reasoning of model message ``message`` (a chunk or a whole message)."""
        state = self.state
        state.model_message(message.id)
        self._delta("reasoning", message.additional_kwargs.get("reasoning_content"))
        content = message.content
        for block in [content] if isinstance(content, str) else content:
            if isinstance(block, str):
                state.delta("text", block)
            elif block.get("type") == "text":
                self._delta("text", block.get("text"))
            elif block.get("type") == "reasoning":
                self._delta("reasoning", block.get("reasoning"))
                for summary in block.get("summary") or ():  # OpenAI Responses v0 format
                    if isinstance(summary, Mapping):
                        self._delta("reasoning", summary.get("text"))
            elif block.get("type") == "thinking":  # Anthropic native format
                self._delta("reasoning", block.get("thinking"))

    def _delta(self, kind: Literal["text", "reasoning"], value: Any) -> None:
        """A text or reasoning field of a provider's content, sent when it is text."""
        if isinstance(value, str):
            self.state.delta(kind, value)

    def _finish_reason(self, message: AIMessage) -> None:
        metadata = message.response_metadata or {}
        raw = metadata.get("finish_reason") or metadata.get("stop_reason") or metadata.get("done_reason")
        if isinstance(raw, str):
            self.state.finish_reason = _FINISH_REASONS.get(raw.lower())
