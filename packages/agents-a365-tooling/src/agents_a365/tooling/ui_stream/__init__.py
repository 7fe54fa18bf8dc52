"""Vercel AI SDK UI message stream (v5+), orchestrator-neutral part.

Chunk types, SSE framing, the part state machine, the converter driver, the ``useChat`` request models
and a Starlette/FastAPI response helper (starlette is only imported when the helper is used). The
LangChain/LangGraph and OpenAI Agents converters live in the extension packages.
"""

from ._converter import DEFAULT_ERROR_TEXT, ErrorTextFunction, UIStreamConverter
from ._messages import UIChatRequest, UIMessage, UIMessagePart, UIStep, UIToolCall, iter_steps
from ._response import UI_MESSAGE_STREAM_HEADERS, ui_message_stream_response
from ._state import UIMessageStreamState
from ._wire import SSE_DONE, ArgumentsParser, FinishReason, UIChunk, encode_sse, json_text

__all__ = [
    "DEFAULT_ERROR_TEXT",
    "SSE_DONE",
    "UI_MESSAGE_STREAM_HEADERS",
    "ArgumentsParser",
    "ErrorTextFunction",
    "FinishReason",
    "UIChatRequest",
    "UIChunk",
    "UIMessage",
    "UIMessagePart",
    "UIMessageStreamState",
    "UIStep",
    "UIStreamConverter",
    "UIToolCall",
    "encode_sse",
    "iter_steps",
    "json_text",
    "ui_message_stream_response",
]
