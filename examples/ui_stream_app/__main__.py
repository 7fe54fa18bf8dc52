"""Run the example: ``uv run python -m ui_stream_app`` from ``examples/`` (see README.md)."""

from __future__ import annotations

import os

import uvicorn

from .app import create_langchain_app, create_openai_app


async def get_weather(city: str) -> str:
    """Current weather for a city (demo data)."""
    return f'{{"city": "{city}", "forecast": "sunny", "temperature": 21}}'


def main() -> None:
    orchestrator = os.environ.get("A365_UI_ORCHESTRATOR", "langchain")
    if orchestrator == "openai":
        from agents import Agent, function_tool

        agent = Agent(
            name="assistant",
            model=os.environ.get("A365_MODEL", "gpt-4.1-mini"),
            tools=[function_tool(get_weather)],
        )
        app = create_openai_app(agent)
    else:
        from langchain.agents import create_agent
        from langchain.chat_models import init_chat_model

        model = init_chat_model(os.environ.get("A365_MODEL", "openai:gpt-4.1-mini"))
        app = create_langchain_app(create_agent(model, tools=[get_weather]))
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("PORT", "8000")))


if __name__ == "__main__":
    main()
