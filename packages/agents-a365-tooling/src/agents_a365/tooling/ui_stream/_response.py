"""Starlette/FastAPI response for a UI message stream (starlette is imported lazily: optional extra)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterable, Mapping
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.responses import StreamingResponse

UI_MESSAGE_STREAM_HEADERS: Mapping[str, str] = {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "x-vercel-ai-ui-message-stream": "v1",
    # Reverse proxies (nginx) must not buffer the stream, or tokens arrive in bursts.
    "x-accel-buffering": "no",
}
"""The headers the AI SDK's own ``createUIMessageStreamResponse`` sends."""

_INSTALL_HINT = (
    "ui_message_stream_response needs starlette: pip install 'agents-a365-tooling[ui]' "
    "(your extension's 'server' extra brings it too)"
)


@cache
def _response_class() -> type[StreamingResponse]:
    try:
        from starlette.responses import StreamingResponse
        from starlette.types import Receive, Scope, Send
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_INSTALL_HINT) from exc

    class UIMessageStreamResponse(StreamingResponse):
        """Streams SSE frames and cancels the producer as soon as the client disconnects.

        Starlette only watches for ``http.disconnect`` on ASGI servers older than spec 2.4 (newer ones
        report a disconnect only when a write fails, which never happens while the agent waits on a slow
        tool), and it cancels through an anyio cancel scope, which re-cancels every ``await`` of the
        orchestrator's own clean-up: LangGraph then leaves its running tool tasks behind. Here the producer
        is a plain asyncio task, cancelled once, so the orchestrator cancels what it started.
        """

        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            producer = asyncio.ensure_future(self._produce(send))
            listener = asyncio.ensure_future(self.listen_for_disconnect(receive))
            try:
                await asyncio.wait((producer, listener), return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in (producer, listener):
                    task.cancel()
                await asyncio.gather(producer, listener, return_exceptions=True)
            if not producer.cancelled():
                producer.result()  # re-raises what the producer raised

        async def _produce(self, send: Send) -> None:
            try:
                with contextlib.suppress(OSError):  # the client went away while we wrote
                    await self.stream_response(send)
            finally:
                # Close the producer now (not at garbage collection) so the agent run stops at once.
                aclose = getattr(self.body_iterator, "aclose", None)
                if aclose is not None:
                    await aclose()

    return UIMessageStreamResponse


def ui_message_stream_response(
    frames: AsyncIterable[str],
    *,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
) -> StreamingResponse:
    """A ``StreamingResponse`` for SSE ``frames`` with the UI message stream headers.

    The response closes ``frames`` when the client disconnects, which cancels the agent run behind it.
    """
    merged = {**UI_MESSAGE_STREAM_HEADERS, **{k.lower(): v for k, v in (headers or {}).items()}}
    return _response_class()(frames, status_code=status_code, headers=merged, media_type="text/event-stream")
