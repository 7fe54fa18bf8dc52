"""JSON helpers for tool arguments and tool outputs."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["ArgumentsParser", "output_as_json", "parse_arguments"]

_JSON_START = frozenset('{["-0123456789tfn')


ArgumentsParser = Callable[[str], Any]
"""Parses complete tool-call argument text; raises ``ValueError`` when it is not acceptable."""


def parse_arguments(text: str, parser: ArgumentsParser | None = None) -> tuple[bool, Any, str]:
    """Parse accumulated tool-call arguments once: ``(ok, value, error)``; empty arguments mean ``{}``.

    ``parser`` lets a converter accept exactly what its orchestrator accepts (strict JSON by default).
    """
    if not text.strip():
        return True, {}, ""
    try:
        return True, (parser or json.loads)(text), ""
    except ValueError as exc:
        return False, text, f"Invalid JSON in tool arguments: {exc}"


def output_as_json(value: Any) -> Any:
    """A tool output as the client should see it: text that is JSON is sent as JSON, anything else as is."""
    if isinstance(value, str):
        stripped = value.lstrip()
        # Only attempt a parse when the text can start a JSON value: plain prose stays a string cheaply.
        if stripped and stripped[0] in _JSON_START:
            try:
                return json.loads(value)
            except ValueError:
                return value
        return value
    return value
