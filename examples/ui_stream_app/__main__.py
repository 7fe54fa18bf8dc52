"""Run the example: ``uv run python -m ui_stream_app`` from ``examples/`` (see README.md).

Without ``OPENAI_API_KEY`` the agent uses a scripted model (tools, agent and stream are real); with it, a
real model (``A365_MODEL``). ``A365_UI_CORS_ORIGINS``: comma-separated origins allowed to call the endpoint.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import uvicorn
from starlette.applications import Starlette

from .app import create_langchain_app, create_openai_app


async def get_weather(city: str) -> str:
    """Current weather for a city (demo data)."""
    return json.dumps({"city": city, "forecast": "sunny", "temperature": 21})


async def slow_report(topic: str) -> str:
    """A long-running report (takes a minute; try the Stop button)."""
    await asyncio.sleep(60)
    return f"report on {topic}"


def build_app(orchestrator: str, *, real_model: bool, app_options: dict[str, Any] | None = None) -> Starlette:
    """The example app for ``orchestrator`` (``langchain`` or ``openai``)."""
    if orchestrator == "openai":
        from agents import Agent, function_tool, set_tracing_disabled

        if real_model:
            model: Any = os.environ.get("A365_MODEL", "gpt-4.1-mini")
        else:
            from .scripted_openai import ScriptedResponsesModel

            set_tracing_disabled(True)  # no key: nothing to export traces to
            model = ScriptedResponsesModel()
        agent = Agent(
            name="assistant", model=model, tools=[function_tool(get_weather), function_tool(slow_report)]
        )
        return create_openai_app(agent, app_options=app_options)
    if orchestrator != "langchain":
        raise ValueError(f"orchestrator must be 'langchain' or 'openai', not {orchestrator!r}")
    from langchain.agents import create_agent

    if real_model:
        from langchain.chat_models import init_chat_model

        chat_model: Any = init_chat_model(os.environ.get("A365_MODEL", "openai:gpt-4.1-mini"))
    else:
        from .scripted import ScriptedChatModel

        chat_model = ScriptedChatModel()
    return create_langchain_app(
        create_agent(chat_model, tools=[get_weather, slow_report]), app_options=app_options
    )


def main() -> None:
    origins = [o.strip() for o in os.environ.get("A365_UI_CORS_ORIGINS", "").split(",") if o.strip()]
    app = build_app(
        os.environ.get("A365_UI_ORCHESTRATOR", "langchain"),
        real_model=bool(os.environ.get("OPENAI_API_KEY")),
        app_options={"cors_origins": origins},
    )
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("PORT", "8000")))


if __name__ == "__main__":
    main()
