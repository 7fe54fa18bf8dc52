"""Serve an OpenAI Agents SDK agent to the Vercel AI SDK's ``useChat`` (UI message stream protocol v1).

```python
from agents_a365.tooling.extensions.openai.ui_stream import (
    UIChatRequest, stream_openai_agent, ui_message_stream_response,
)

@app.post("/agent/stream")
async def agent_stream(request: Request):
    body = UIChatRequest.model_validate(await request.json())
    return ui_message_stream_response(stream_openai_agent(agent, body.messages))
```
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Mapping
from typing import Any

from agents import Agent, RunConfig, Runner, RunResultStreaming, ToolCallOutputItem

from agents_a365.tooling.ui_stream import (
    UI_MESSAGE_STREAM_HEADERS,
    ErrorTextFunction,
    UIChatRequest,
    UIMessage,
    ui_message_stream_response,
)

from ._ui_stream_convert import OpenAIUIStreamConverter, ToolErrorText, run_events, ui_tool_error_function
from ._ui_stream_input import ui_messages_to_openai_input

__all__ = [
    "UI_MESSAGE_STREAM_HEADERS",
    "OpenAIUIStreamConverter",
    "ToolErrorText",
    "UIChatRequest",
    "UIMessage",
    "stream_openai_agent",
    "stream_openai_run",
    "ui_message_stream_response",
    "ui_messages_to_openai_input",
    "ui_tool_error_function",
]


def stream_openai_run(
    result: RunResultStreaming,
    *,
    message_id: str | None = None,
    on_error: ErrorTextFunction | None = None,
    is_tool_error: Callable[[ToolCallOutputItem], bool] | None = None,
) -> AsyncGenerator[str, None]:
    """SSE frames for ``Runner.run_streamed(...)``; closing them (client disconnect) cancels the run.

    ``on_error`` turns an exception into the ``errorText`` the client sees (masked by default).
    """
    converter = OpenAIUIStreamConverter(message_id=message_id, on_error=on_error, is_tool_error=is_tool_error)
    return converter.frames(run_events(result))


async def stream_openai_agent(
    agent: Agent[Any],
    messages: Iterable[UIMessage | Mapping[str, Any]],
    *,
    context: Any = None,
    run_config: RunConfig | None = None,
    max_turns: int | None = None,
    message_id: str | None = None,
    on_error: ErrorTextFunction | None = None,
    is_tool_error: Callable[[ToolCallOutputItem], bool] | None = None,
) -> AsyncIterator[str]:
    """Run ``agent`` on the ``useChat`` messages and stream SSE frames.

    The run starts when the first frame is requested (not when this is called), so a response that is
    never sent never starts an agent run.
    """
    kwargs: dict[str, Any] = {"context": context, "run_config": run_config}
    if max_turns is not None:
        kwargs["max_turns"] = max_turns
    result = Runner.run_streamed(agent, ui_messages_to_openai_input(messages), **kwargs)
    frames = stream_openai_run(result, message_id=message_id, on_error=on_error, is_tool_error=is_tool_error)
    try:
        async for frame in frames:
            yield frame
    finally:
        await frames.aclose()
