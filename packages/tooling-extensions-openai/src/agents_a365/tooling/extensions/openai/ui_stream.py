"""Serve an OpenAI Agents SDK agent to the Vercel AI SDK's ``useChat`` (UI message stream protocol v1).

```python
from agents_a365.tooling.extensions.openai.ui_stream import stream_openai_agent
from agents_a365.tooling.ui_stream import UIChatRequest, ui_message_stream_response

@app.post("/agent/stream")
async def agent_stream(request: Request):
    body = UIChatRequest.model_validate(await request.json())
    return ui_message_stream_response(stream_openai_agent(agent, body.messages))
```
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Iterable, Iterator, Mapping
from contextlib import aclosing
from typing import Any, cast

from agents import Agent, Runner, RunResultStreaming, ToolCallOutputItem, TResponseInputItem

from agents_a365.tooling.ui_stream import ErrorTextFunction, UIMessage, UIStep, iter_steps, json_text

from ._ui_stream_convert import OpenAIUIStreamConverter, ToolErrorText, ui_tool_error_function

__all__ = [
    "OpenAIUIStreamConverter",
    "ToolErrorText",
    "stream_openai_agent",
    "stream_openai_run",
    "ui_messages_to_openai_input",
    "ui_tool_error_function",
]


async def stream_openai_run(
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
    async with aclosing(converter.frames(result.stream_events())) as frames:
        try:
            async for frame in frames:
                yield frame
        finally:
            # Cancelled before the frames close: closing the SDK's event stream waits for the run to end.
            if not result.is_complete:
                result.cancel()  # stops the background run task (model call, running tools)


async def stream_openai_agent(
    agent: Agent[Any],
    messages: Iterable[UIMessage | Mapping[str, Any]],
    *,
    message_id: str | None = None,
    on_error: ErrorTextFunction | None = None,
    is_tool_error: Callable[[ToolCallOutputItem], bool] | None = None,
    **run_options: Any,
) -> AsyncGenerator[str, None]:
    """Run ``agent`` on the ``useChat`` messages and stream SSE frames.

    ``run_options`` go to ``Runner.run_streamed`` as they are (``context``, ``run_config``, ``max_turns``,
    ``hooks``, ``session``, ...). The run starts when the first frame is requested (not when this is
    called), so a response that is never sent never starts an agent run.
    """
    result = Runner.run_streamed(agent, ui_messages_to_openai_input(messages), **run_options)
    frames = stream_openai_run(result, message_id=message_id, on_error=on_error, is_tool_error=is_tool_error)
    async with aclosing(frames):
        async for frame in frames:
            yield frame


def _user_item(message: UIMessage) -> dict[str, Any]:
    images = message.images
    if not images:
        return {"role": "user", "content": message.text}
    content: list[dict[str, Any]] = [{"type": "input_text", "text": message.text}] if message.text else []
    content.extend({"type": "input_image", "image_url": p.url, "detail": "auto"} for p in images)
    return {"role": "user", "content": content}


def ui_messages_to_openai_input(
    messages: Iterable[UIMessage | Mapping[str, Any]],
) -> list[TResponseInputItem]:
    """Convert the ``UIMessage`` list ``useChat`` posts into ``Runner.run_streamed`` input items.

    User text (and image files) become user messages; each model step of an assistant message becomes an
    assistant message plus ``function_call``/``function_call_output`` items for its finished tool calls.
    Reasoning, unfinished tool calls and ``data-*`` parts are not replayed.
    """
    items: list[dict[str, Any]] = []
    for message in map(UIMessage.model_validate, messages):
        if message.role == "system":
            items.append({"role": "system", "content": message.text})
        elif message.role == "user":
            items.append(_user_item(message))
        else:
            items.extend(item for step in iter_steps(message) for item in _step_items(step))
    return cast(list[TResponseInputItem], items)


def _step_items(step: UIStep) -> Iterator[dict[str, Any]]:
    """An assistant message with the step's text, then a ``function_call`` and its output per tool call."""
    if step.text:
        yield {"role": "assistant", "content": step.text}
    for c in step.tool_calls:
        call = c.tool_call_id
        yield {"type": "function_call", "call_id": call, "name": c.tool_name, "arguments": json_text(c.input)}
        yield {"type": "function_call_output", "call_id": call, "output": json_text(c.output)}
