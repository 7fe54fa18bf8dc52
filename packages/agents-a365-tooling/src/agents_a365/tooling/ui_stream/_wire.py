"""The wire format: UI message stream chunks (AI SDK ``uiMessageChunkSchema``, v5+), their SSE framing and JSON.

Chunks are plain dicts rather than models on purpose: one is built per streamed token, so construction must
be cheap, and the wire format is exactly the dict. Only types the real client accepts are built (the client's
schema is a closed union: e.g. ``tool-output-start``/``tool-output-delta`` do not exist).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from functools import partial
from typing import Any, Literal

from pydantic_core import to_jsonable_python

UIChunk = dict[str, Any]
"""One UI message stream chunk: a JSON object with a ``type``."""

FinishReason = Literal["stop", "length", "content-filter", "tool-calls", "error", "other"]

SSE_DONE = "data: [DONE]\n\n"
"""The terminator the AI SDK client skips; always the last frame of a stream."""

ArgumentsParser = Callable[[str], Any]
"""Parses complete tool-call argument text; raises ``ValueError`` when it is not acceptable."""

_JSON_START = frozenset('{["-0123456789tfn')


# What ``json`` cannot encode (pydantic models, dataclasses, sets, dates, bytes as URL-safe base64, ...) is
# converted by pydantic; anything else is sent as its ``str``.
_to_jsonable = partial(to_jsonable_python, fallback=str, bytes_mode="base64")

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=_to_jsonable).encode


def encode_sse(chunk: UIChunk) -> str:
    """One SSE frame. ``json`` escapes newlines, so a frame is always a single ``data:`` line."""
    return "data: " + _encode(chunk) + "\n\n"


def json_text(value: Any) -> str:
    """``value`` as text for a model: text as is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, default=_to_jsonable, ensure_ascii=False)


def parse_arguments(text: str, parser: ArgumentsParser | None = None) -> Any:
    """Parse accumulated tool-call arguments once (``ValueError`` if invalid); empty arguments mean ``{}``.

    ``parser`` lets a converter accept exactly what its orchestrator accepts (strict JSON by default).
    """
    return (parser or json.loads)(text) if text.strip() else {}


def output_as_json(value: Any) -> Any:
    """A tool output as the client should see it: text that is JSON is sent as JSON, anything else as is."""
    # Only attempt a parse when the text can start a JSON value: plain prose stays a string cheaply.
    if isinstance(value, str) and value.lstrip()[:1] in _JSON_START:
        with contextlib.suppress(ValueError):  # not JSON after all: sent as text
            return json.loads(value)
    return value
