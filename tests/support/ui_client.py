"""Helpers over what the real AI SDK client reported for a stream."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

Validate = Callable[[dict[str, str]], Awaitable[dict[str, Any]]]


def assert_clean(result: dict[str, Any]) -> dict[str, Any]:
    """Zero schema validation errors, zero client state-machine errors, ``[DONE]`` last; returns the message."""
    assert result["validationErrors"] == [], json.dumps(result["validationErrors"], indent=1)
    assert result["streamErrors"] == [], json.dumps(result["streamErrors"], indent=1)
    assert result["endsWithDone"] is True
    types = result["chunkTypes"]
    if types is not None:
        assert types[0] == "start"
        assert types[-1] == "finish"
        assert "tool-output-start" not in types
        assert "tool-output-delta" not in types
    message: dict[str, Any] = result["message"]
    assert message["role"] == "assistant"
    return message


def summarize(message: dict[str, Any]) -> list[Any]:
    """The final parts as compact tuples: ("text", t), ("reasoning", t), ("tool", name, state, input, output)."""
    summary: list[Any] = []
    for part in message["parts"]:
        kind = part["type"]
        if kind == "step-start":
            summary.append("step")
        elif kind == "text":
            assert part["state"] == "done"
            summary.append(("text", part["text"]))
        elif kind == "reasoning":
            assert part["state"] == "done"
            summary.append(("reasoning", part["text"]))
        elif kind.startswith("tool-") or kind == "dynamic-tool":
            name = part.get("toolName") if kind == "dynamic-tool" else kind.removeprefix("tool-")
            outcome = part.get("output") if part["state"] == "output-available" else part.get("errorText")
            summary.append(("tool", name, part["state"], part.get("input", part.get("rawInput")), outcome))
        else:
            summary.append((kind,))
    return summary
