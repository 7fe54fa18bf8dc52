"""Serve a LangGraph/LangChain agent to the Vercel AI SDK's ``useChat`` (UI message stream protocol v1).

```python
from agents_a365.tooling.extensions.langchain.ui_stream import stream_langgraph_agent
from agents_a365.tooling.ui_stream import UIChatRequest, ui_message_stream_response

@app.post("/agent/stream")
async def agent_stream(request: Request):
    body = UIChatRequest.model_validate(await request.json())
    return ui_message_stream_response(stream_langgraph_agent(agent, body.messages))
```
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable, Iterable, Iterator, Mapping
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.tool import tool_call

from agents_a365.tooling.ui_stream import ErrorTextFunction, UIMessage, UIStep, iter_steps, json_text

from ._ui_stream_convert import LangChainUIStreamConverter

__all__ = [
    "LangChainUIStreamConverter",
    "stream_langgraph",
    "stream_langgraph_agent",
    "ui_messages_to_langchain",
]


def stream_langgraph(
    agent_stream: AsyncIterable[Any],
    *,
    message_id: str | None = None,
    on_error: ErrorTextFunction | None = None,
) -> AsyncGenerator[str, None]:
    """SSE frames for a LangGraph/LangChain stream (see ``LangChainUIStreamConverter`` for the shapes).

    Closing the returned iterator (e.g. on client disconnect) closes ``agent_stream``, cancelling the run.
    ``on_error`` turns an exception into the ``errorText`` the client sees (masked by default).
    """
    return LangChainUIStreamConverter(message_id=message_id, on_error=on_error).frames(agent_stream)


def stream_langgraph_agent(
    agent: Any,
    messages: Iterable[UIMessage | Mapping[str, Any]],
    *,
    config: Any = None,
    message_id: str | None = None,
    on_error: ErrorTextFunction | None = None,
) -> AsyncGenerator[str, None]:
    """Run ``agent`` (e.g. from ``create_agent``) on the ``useChat`` messages and stream SSE frames.

    Uses ``astream(..., stream_mode=["messages", "updates"])``: token deltas from ``messages``, and
    ``updates`` for models that do not stream.
    """
    agent_stream = agent.astream(
        {"messages": ui_messages_to_langchain(messages)}, config=config, stream_mode=["messages", "updates"]
    )
    return stream_langgraph(agent_stream, message_id=message_id, on_error=on_error)


def _user_content(message: UIMessage) -> str | list[str | dict[Any, Any]]:
    images = message.images
    if not images:
        return message.text
    blocks: list[str | dict[Any, Any]] = [{"type": "text", "text": message.text}] if message.text else []
    blocks.extend({"type": "image", "url": p.url, "mime_type": p.media_type} for p in images)
    return blocks


def ui_messages_to_langchain(messages: Iterable[UIMessage | Mapping[str, Any]]) -> list[BaseMessage]:
    """Convert the ``UIMessage`` list ``useChat`` posts into LangChain messages for ``agent.astream``.

    User text (and image files) become ``HumanMessage``; each model step of an assistant message becomes an
    ``AIMessage`` with its tool calls followed by one ``ToolMessage`` per finished call (errors keep
    ``status="error"``). Reasoning, unfinished tool calls and ``data-*`` parts are not replayed.
    """
    result: list[BaseMessage] = []
    for message in map(UIMessage.model_validate, messages):
        if message.role == "system":
            result.append(SystemMessage(content=message.text))
        elif message.role == "user":
            result.append(HumanMessage(content=_user_content(message)))
        else:
            result.extend(m for step in iter_steps(message) for m in _step_messages(step))
    return result


def _step_messages(step: UIStep) -> Iterator[BaseMessage]:
    """An ``AIMessage`` with the step's text and tool calls, then a ``ToolMessage`` per call."""
    calls = step.tool_calls
    args = [c.input if isinstance(c.input, dict) else {"input": c.input} for c in calls]
    requests = [
        tool_call(name=c.tool_name, args=a, id=c.tool_call_id) for c, a in zip(calls, args, strict=True)
    ]
    yield AIMessage(content=step.text, tool_calls=requests)
    for c in calls:
        output, status = json_text(c.output), "error" if c.is_error else "success"
        yield ToolMessage(content=output, tool_call_id=c.tool_call_id, name=c.tool_name, status=status)
