"""UI message stream chunks (AI SDK ``uiMessageChunkSchema``, v5+) as plain dicts.

Chunks are dicts rather than models on purpose: one is built per streamed token, so construction must be
cheap, and the wire format is exactly the dict. Only types the real client accepts are built here (the
client's schema is a closed union: e.g. ``tool-output-start``/``tool-output-delta`` do not exist).
"""

from __future__ import annotations

from typing import Any, Literal

__all__ = [
    "FINISH_REASONS",
    "UI_CHUNK_TYPES",
    "FinishReason",
    "UIChunk",
    "error_chunk",
    "finish_chunk",
    "finish_step_chunk",
    "reasoning_delta_chunk",
    "reasoning_end_chunk",
    "reasoning_start_chunk",
    "start_chunk",
    "start_step_chunk",
    "text_delta_chunk",
    "text_end_chunk",
    "text_start_chunk",
    "tool_input_available_chunk",
    "tool_input_delta_chunk",
    "tool_input_error_chunk",
    "tool_input_start_chunk",
    "tool_output_available_chunk",
    "tool_output_error_chunk",
]

UIChunk = dict[str, Any]
"""One UI message stream chunk: a JSON object with a ``type``."""

FinishReason = Literal["stop", "length", "content-filter", "tool-calls", "error", "other"]
FINISH_REASONS: frozenset[str] = frozenset(
    ("stop", "length", "content-filter", "tool-calls", "error", "other")
)

UI_CHUNK_TYPES: frozenset[str] = frozenset(
    (
        "start",
        "finish",
        "abort",
        "message-metadata",
        "start-step",
        "finish-step",
        "text-start",
        "text-delta",
        "text-end",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-end",
        "tool-input-start",
        "tool-input-delta",
        "tool-input-available",
        "tool-input-error",
        "tool-output-available",
        "tool-output-error",
        "tool-output-denied",
        "tool-approval-request",
        "source-url",
        "source-document",
        "file",
        "error",
    )
)
"""Every non-``data-*`` chunk type the client's schema accepts (``data-*`` types are open-ended)."""


def start_chunk(message_id: str | None = None, metadata: Any = None) -> UIChunk:
    chunk: UIChunk = {"type": "start"}
    if message_id is not None:
        chunk["messageId"] = message_id
    if metadata is not None:
        chunk["messageMetadata"] = metadata
    return chunk


def finish_chunk(finish_reason: FinishReason | None = None, metadata: Any = None) -> UIChunk:
    chunk: UIChunk = {"type": "finish"}
    if finish_reason is not None:
        chunk["finishReason"] = finish_reason
    if metadata is not None:
        chunk["messageMetadata"] = metadata
    return chunk


def start_step_chunk() -> UIChunk:
    return {"type": "start-step"}


def finish_step_chunk() -> UIChunk:
    return {"type": "finish-step"}


def text_start_chunk(part_id: str) -> UIChunk:
    return {"type": "text-start", "id": part_id}


def text_delta_chunk(part_id: str, delta: str) -> UIChunk:
    return {"type": "text-delta", "id": part_id, "delta": delta}


def text_end_chunk(part_id: str) -> UIChunk:
    return {"type": "text-end", "id": part_id}


def reasoning_start_chunk(part_id: str) -> UIChunk:
    return {"type": "reasoning-start", "id": part_id}


def reasoning_delta_chunk(part_id: str, delta: str) -> UIChunk:
    return {"type": "reasoning-delta", "id": part_id, "delta": delta}


def reasoning_end_chunk(part_id: str) -> UIChunk:
    return {"type": "reasoning-end", "id": part_id}


def tool_input_start_chunk(tool_call_id: str, tool_name: str) -> UIChunk:
    return {"type": "tool-input-start", "toolCallId": tool_call_id, "toolName": tool_name}


def tool_input_delta_chunk(tool_call_id: str, delta: str) -> UIChunk:
    return {"type": "tool-input-delta", "toolCallId": tool_call_id, "inputTextDelta": delta}


def tool_input_available_chunk(tool_call_id: str, tool_name: str, tool_input: Any) -> UIChunk:
    return {
        "type": "tool-input-available",
        "toolCallId": tool_call_id,
        "toolName": tool_name,
        "input": tool_input,
    }


def tool_input_error_chunk(tool_call_id: str, tool_name: str, tool_input: Any, error_text: str) -> UIChunk:
    return {
        "type": "tool-input-error",
        "toolCallId": tool_call_id,
        "toolName": tool_name,
        "input": tool_input,
        "errorText": error_text,
    }


def tool_output_available_chunk(tool_call_id: str, output: Any) -> UIChunk:
    return {"type": "tool-output-available", "toolCallId": tool_call_id, "output": output}


def tool_output_error_chunk(tool_call_id: str, error_text: str) -> UIChunk:
    return {"type": "tool-output-error", "toolCallId": tool_call_id, "errorText": error_text}


def error_chunk(error_text: str) -> UIChunk:
    return {"type": "error", "errorText": error_text}
