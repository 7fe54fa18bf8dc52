"""A Starlette app with ``POST /agent/stream`` for ``useChat`` (works the same as a FastAPI route).

The endpoint accepts the body ``useChat`` sends (``{"id", "messages": UIMessage[], "trigger", ...}``),
converts the ``UIMessage`` list into the orchestrator's input, runs the agent and streams the UI message
stream back. Closing the browser tab (client disconnect) cancels the agent run. ``GET /`` serves the chat
page (``web/``, built with ``npm run build``); CORS preflights are answered for ``cors_origins``.
"""

from __future__ import annotations

import html
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from agents_a365.tooling.ui_stream import UIChatRequest, UIMessage, ui_message_stream_response

from .keepalive import KEEPALIVE_INTERVAL, with_keepalive

logger = logging.getLogger(__name__)

StreamFactory = Callable[[Sequence[UIMessage]], AsyncIterator[str]]
"""Given the chat's messages, returns the SSE frames of one agent run."""

MAX_BODY_BYTES = 2_000_000
WEB_DIST = Path(__file__).parent / "web" / "dist"

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Agent 365 chat</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">
<style>
body {{ font: 15px/1.45 system-ui, sans-serif; margin: 0; background: #f4f5f7; color: #1b1d21; }}
main {{ max-width: 760px; margin: 0 auto; padding: 16px; }}
header {{ display: flex; gap: 8px; align-items: center; }} h1 {{ font-size: 20px; margin: 0 auto 0 0; }}
.badge {{ background: #e3e6ec; border-radius: 10px; padding: 1px 8px; font-size: 12px; }}
.message {{ background: #fff; border-radius: 10px; padding: 10px 14px; margin: 10px 0;
  box-shadow: 0 1px 2px #0002; }}
.message.user {{ background: #dbeafe; margin-left: 80px; }}
.role {{ font-size: 11px; text-transform: uppercase; color: #667; margin-bottom: 4px; }}
.reasoning {{ color: #555; font-style: italic; border-left: 3px solid #c7cbd3; padding-left: 8px; margin: 6px 0; }}
.label {{ font-size: 11px; color: #667; text-transform: uppercase; }}
.tool {{ border: 1px solid #d5d9e0; border-radius: 8px; padding: 8px; margin: 8px 0; background: #fafbfc; }}
.tool-output-available {{ border-color: #9bd3a8; }} .tool-output-error {{ border-color: #e5a0a0; }}
pre {{ background: #f0f2f5; padding: 6px 8px; border-radius: 6px; margin: 2px 0 6px; white-space: pre-wrap; }}
.error {{ color: #a11; background: #fde8e8; padding: 8px 12px; border-radius: 8px; }}
.notice {{ color: #7a5200; background: #fff4d6; padding: 8px 12px; border-radius: 8px; }}
form {{ display: flex; gap: 8px; margin-top: 12px; }}
input {{ flex: 1; padding: 8px 10px; border: 1px solid #c7cbd3; border-radius: 8px; font: inherit; }}
button {{ padding: 8px 16px; border: 0; border-radius: 8px; background: #2563eb; color: #fff; font: inherit; }}
</style></head>
<body><div id="root" data-api="{api}" data-orchestrator="{orchestrator}"></div>
<script type="module" src="app.js"></script></body></html>
"""

_NOT_BUILT = (
    "The chat page is not built: run `npm ci && npm run build` in examples/ui_stream_app/web "
    "(needs Node.js), then reload."
)


def create_app(
    stream: StreamFactory,
    *,
    max_body_bytes: int = MAX_BODY_BYTES,
    cors_origins: Sequence[str] = (),
    keepalive_interval: float = KEEPALIVE_INTERVAL,
    orchestrator: str = "",
    web_dist: Path = WEB_DIST,
) -> Starlette:
    """``cors_origins``: origins allowed to call ``/agent/stream`` from another site (preflights answered).

    ``keepalive_interval``: seconds without a frame (a long tool call) after which an SSE comment is sent,
    so idle proxies keep the stream open.
    """
    if keepalive_interval <= 0:
        raise ValueError("keepalive_interval must be positive")

    async def agent_stream(request: Request) -> Response:
        body = await request.body()
        if len(body) > max_body_bytes:
            return JSONResponse({"error": "request body too large"}, status_code=413)
        try:
            chat = UIChatRequest.model_validate_json(body)
        except ValidationError as exc:
            return JSONResponse(
                {
                    "error": "invalid chat request",
                    "details": exc.errors(include_url=False, include_input=False),
                },
                status_code=400,
            )
        if not chat.messages or chat.messages[-1].role != "user":
            return JSONResponse({"error": "the last message must be a user message"}, status_code=400)
        return ui_message_stream_response(with_keepalive(stream(chat.messages), keepalive_interval))

    async def page(request: Request) -> Response:
        return HTMLResponse(_PAGE.format(api="agent/stream", orchestrator=html.escape(orchestrator)))

    async def script(request: Request) -> Response:
        bundle = web_dist / "app.js"
        if not bundle.is_file():
            return PlainTextResponse(_NOT_BUILT, status_code=404)
        return FileResponse(bundle, media_type="text/javascript")

    middleware = [
        Middleware(
            CORSMiddleware,
            allow_origins=list(cors_origins),
            allow_methods=["POST"],
            allow_headers=["content-type", "authorization"],
            max_age=600,
        )
    ]
    return Starlette(
        routes=[
            Route("/agent/stream", agent_stream, methods=["POST"]),
            Route("/", page, methods=["GET"]),
            Route("/app.js", script, methods=["GET"]),
        ],
        middleware=middleware,
    )


def create_langchain_app(
    agent: Any, *, app_options: dict[str, Any] | None = None, **options: Any
) -> Starlette:
    """``agent``: a LangGraph agent, e.g. ``langchain.agents.create_agent(model, tools)``.

    ``app_options`` go to :func:`create_app`; ``options`` to ``stream_langgraph_agent``.
    """
    from agents_a365.tooling.extensions.langchain.ui_stream import stream_langgraph_agent

    return create_app(
        lambda messages: stream_langgraph_agent(agent, messages, **options),
        **{"orchestrator": "langchain", **(app_options or {})},
    )


def create_openai_app(agent: Any, *, app_options: dict[str, Any] | None = None, **options: Any) -> Starlette:
    """``agent``: an OpenAI Agents SDK ``Agent``. ``app_options`` go to :func:`create_app`."""
    from agents_a365.tooling.extensions.openai.ui_stream import stream_openai_agent

    return create_app(
        lambda messages: stream_openai_agent(agent, messages, **options),
        **{"orchestrator": "openai", **(app_options or {})},
    )
