"""Server-sent-event framing of UI chunks: ``data: {json}\\n\\n`` per chunk, ``data: [DONE]\\n\\n`` last."""

from __future__ import annotations

import json
from typing import Any

from .chunks import UIChunk

__all__ = ["SSE_DONE", "encode_sse", "to_jsonable"]

SSE_DONE = "data: [DONE]\n\n"
"""The terminator the AI SDK client skips; always the last frame of a stream."""

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=lambda o: to_jsonable(o)).encode


def to_jsonable(value: Any) -> Any:
    """Fallback for values ``json`` cannot encode (pydantic models, dataclass-like objects, sets, bytes)."""
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump):
        return model_dump(mode="json")
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", errors="replace")
    return str(value)


def encode_sse(chunk: UIChunk) -> str:
    """One SSE frame. ``json`` escapes newlines, so a frame is always a single ``data:`` line."""
    return "data: " + _dumps(chunk) + "\n\n"
