"""A Starlette app with ``POST /agent/stream`` for ``useChat`` (works the same as a FastAPI route).

The endpoint accepts the body ``useChat`` sends (``{"id", "messages": UIMessage[], "trigger", ...}``),
converts the ``UIMessage`` list into the orchestrator's input, runs the agent and streams the UI message
stream back. Closing the browser tab (client disconnect) cancels the agent run.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agents_a365.tooling.ui_stream import UIChatRequest, UIMessage, ui_message_stream_response

logger = logging.getLogger(__name__)

StreamFactory = Callable[[Sequence[UIMessage]], AsyncIterator[str]]
"""Given the chat's messages, returns the SSE frames of one agent run."""

MAX_BODY_BYTES = 2_000_000


def create_app(stream: StreamFactory, *, max_body_bytes: int = MAX_BODY_BYTES) -> Starlette:
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
        return ui_message_stream_response(stream(chat.messages))

    return Starlette(routes=[Route("/agent/stream", agent_stream, methods=["POST"])])


def create_langchain_app(agent: Any, **options: Any) -> Starlette:
    """``agent``: a LangGraph agent, e.g. ``langchain.agents.create_agent(model, tools)``."""
    from agents_a365.tooling.extensions.langchain.ui_stream import stream_langgraph_agent

    return create_app(lambda messages: stream_langgraph_agent(agent, messages, **options))


def create_openai_app(agent: Any, **options: Any) -> Starlette:
    """``agent``: an OpenAI Agents SDK ``Agent``."""
    from agents_a365.tooling.extensions.openai.ui_stream import stream_openai_agent

    return create_app(lambda messages: stream_openai_agent(agent, messages, **options))
