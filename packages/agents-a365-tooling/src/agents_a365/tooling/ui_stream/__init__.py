"""Vercel AI SDK UI message stream (v5+), orchestrator-neutral part.

Chunk builders, SSE framing, the part state machine, the converter driver, the ``useChat`` request models
and a Starlette/FastAPI response helper (starlette is only imported when the helper is used). The
LangChain/LangGraph and OpenAI Agents converters live in the extension packages.
"""

from ._json import ArgumentsParser
from .chunks import FINISH_REASONS, UI_CHUNK_TYPES, FinishReason, UIChunk
from .converter import DEFAULT_ERROR_TEXT, ErrorTextFunction, UIStreamConverter
from .messages import UIChatRequest, UIMessage, UIMessagePart, UIStep, UIToolCall, iter_steps
from .response import UI_MESSAGE_STREAM_HEADERS, ui_message_stream_response
from .sse import SSE_DONE, encode_sse, to_jsonable
from .state import UIMessageStreamState

__all__ = [
    "DEFAULT_ERROR_TEXT",
    "FINISH_REASONS",
    "SSE_DONE",
    "UI_CHUNK_TYPES",
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
    "to_jsonable",
    "ui_message_stream_response",
]
