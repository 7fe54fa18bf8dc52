"""The orchestrator-neutral driver: events in, SSE frames out, errors and disconnects handled once."""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterable, Callable
from contextlib import aclosing
from typing import Generic, TypeVar

from ._state import UIMessageStreamState
from ._wire import SSE_DONE, ArgumentsParser, UIChunk, encode_sse

logger = logging.getLogger(__name__)

EventT = TypeVar("EventT")

ErrorTextFunction = Callable[[BaseException], str]

DEFAULT_ERROR_TEXT = "An error occurred."
"""What the client sees for a failed run by default: exception text can carry internal details, so it is
only sent when the application opts in with ``on_error`` (the AI SDK masks errors the same way)."""


class UIStreamConverter(ABC, Generic[EventT]):
    """Converts one orchestrator's event stream into UI message stream chunks for one assistant message.

    Subclasses implement ``handle`` (one event -> calls on ``self.state``), constant work per event.
    ``chunks()``/``frames()`` drive a whole stream: ``start`` first, an ``error`` chunk if the run raises,
    ``finish`` last (and ``[DONE]`` for frames). When the consumer stops early (client disconnect), the
    source stream is closed, which cancels the agent run.
    """

    arguments_parser: ArgumentsParser | None = None
    """Parses complete tool-call arguments (strict JSON when ``None``): a subclass sets what its orchestrator
    accepts, so the UI shows the input the tool really runs with."""

    def __init__(self, *, message_id: str | None = None, on_error: ErrorTextFunction | None = None) -> None:
        self.state = UIMessageStreamState(message_id, arguments_parser=self.arguments_parser)
        self._on_error = on_error or (lambda _: DEFAULT_ERROR_TEXT)

    @abstractmethod
    def handle(self, event: EventT) -> None:
        """Feed one event; the resulting chunks are collected from ``self.state``."""

    async def chunks(self, events: AsyncIterable[EventT]) -> AsyncGenerator[UIChunk, None]:
        state = self.state
        iterator = aiter(events)
        try:
            for chunk in state.drain():
                yield chunk
            try:
                async for event in iterator:
                    self.handle(event)
                    for chunk in state.drain():
                        yield chunk
            except Exception as exc:  # the run failed: report it in-band, the stream still ends cleanly
                logger.warning("Agent run failed while streaming (%s)", type(exc).__name__, exc_info=exc)
                state.error(self._error_text(exc))
            state.finish()
            for chunk in state.drain():
                yield chunk
        finally:
            if not state.finished:  # the consumer closed the stream early (e.g. the client disconnected)
                logger.info("UI message stream closed before the run finished; cancelling the agent run")
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:  # an async generator (a plain async iterator has nothing to close)
                await aclose()

    async def frames(self, events: AsyncIterable[EventT]) -> AsyncGenerator[str, None]:
        """SSE frames, ``data: [DONE]`` last."""
        async with aclosing(self.chunks(events)) as source:
            async for chunk in source:
                yield encode_sse(chunk)
            yield SSE_DONE

    def _error_text(self, exc: BaseException) -> str:
        try:
            return self._on_error(exc) or DEFAULT_ERROR_TEXT
        except Exception:  # a broken error formatter must not break the stream
            logger.exception("on_error failed")
            return DEFAULT_ERROR_TEXT
