"""Long CPU-bound work in small steps, so the event loop runs between them.

A 4 MiB gateway answer (15,000 servers) held the event loop, so every other conversation of the host,
for over a second: one ``json.loads``, then validation, conversion and headers for each server. Here
such work is a generator that yields between items and returns its result (:data:`Steps`);
:func:`run` drives it at once, :func:`run_cooperatively` gives the loop a turn every :data:`SLICE` seconds.
A worker thread would not do: a long C call (``json.loads``) holds the GIL, so the loop, all the same.
:func:`json_value` is the one parser of big JSON answers (the gateway's, each ``tools/list`` page).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable, Generator, Iterable
from typing import Any, TypeVar

__all__ = ["SLICE", "WINDOW", "Steps", "json_value", "mapped", "run", "run_cooperatively"]

T = TypeVar("T")
R = TypeVar("R")
Steps = Generator[None, None, T]
SLICE = 0.005
"""Seconds of work between two turns of the event loop."""
WINDOW = 64 * 1024
"""Characters of JSON decoded in one C call at most (about 0.5 ms)."""


def run(steps: Steps[T]) -> T:
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]


async def run_cooperatively(steps: Steps[T]) -> T:
    clock = time.perf_counter
    resumed = clock()
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        if clock() - resumed > SLICE:
            await asyncio.sleep(0)
            resumed = clock()


def mapped(items: Iterable[T], function: Callable[[T], R]) -> Steps[list[R]]:
    result: list[R] = []
    for item in items:
        yield
        result.append(function(item))
    return result


_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _skip(text: str, at: int) -> int:
    """Past the JSON whitespace at ``at``."""
    return _SPACE.match(text, at).end()  # type: ignore[union-attr]  # ``*``: it always matches


def json_value(data: str | bytes) -> Steps[Any]:
    """``json.loads(data)``, a container larger than :data:`WINDOW` decoded one element per step (the
    rest, each a single C call of at most :data:`WINDOW` characters); ``ValueError`` for whatever
    ``json.loads`` rejects (bad UTF-8: ``UnicodeDecodeError``, bad syntax, nesting too deep)."""
    try:
        text = data if isinstance(data, str) else data.decode(json.detect_encoding(data), "surrogatepass")
        if text.startswith("\ufeff"):
            raise ValueError("unexpected UTF-8 BOM")
        value, end = yield from _value(text, _skip(text, 0))
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc
    if _skip(text, end) != len(text):
        raise ValueError("invalid JSON: extra data")
    return value


def _value(text: str, at: int) -> Steps[tuple[Any, int]]:
    """The JSON value at ``at`` and where it ends."""
    opening = text[at : at + 1]
    if opening not in ("[", "{"):
        return _DECODER.raw_decode(text, at)  # a string or a number: one scan, whatever its length
    try:
        # A container that ends within the window is decoded at once; a longer one (or bad JSON, which
        # the element-wise path then reports) element by element. A truncated window never decodes:
        # its container's closing bracket is missing.
        value, end = _DECODER.raw_decode(text[at : at + WINDOW])
        return value, at + end
    except ValueError:
        pass
    closing = "]" if opening == "[" else "}"
    container: Any = [] if opening == "[" else {}
    at = _skip(text, at + 1)
    if text[at : at + 1] == closing:
        return container, at + 1
    while True:
        yield
        if opening == "[":
            item, at = yield from _value(text, at)
            container.append(item)
        else:
            if text[at : at + 1] != '"':
                raise ValueError(f"invalid JSON: expected a string key at {at}")
            key, at = _DECODER.raw_decode(text, at)
            at = _skip(text, at)
            if text[at : at + 1] != ":":
                raise ValueError(f"invalid JSON: expected ':' at {at}")
            container[key], at = yield from _value(text, _skip(text, at + 1))
        at = _skip(text, at)
        separator = text[at : at + 1]
        if separator == closing:
            return container, at + 1
        if separator != ",":
            raise ValueError(f"invalid JSON: expected ',' or {closing!r} at {at}")
        at = _skip(text, at + 1)
