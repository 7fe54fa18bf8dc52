"""``useChat`` request messages -> LangChain messages."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from agents_a365.tooling.ui_stream import UIMessage, iter_steps, json_text


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
            for step in iter_steps(message):
                calls = step.tool_calls
                result.append(
                    AIMessage(
                        content=step.text,
                        tool_calls=[
                            {
                                "id": call.tool_call_id,
                                "name": call.tool_name,
                                "args": call.input if isinstance(call.input, dict) else {"input": call.input},
                                "type": "tool_call",
                            }
                            for call in calls
                        ],
                    )
                )
                result.extend(
                    ToolMessage(
                        content=json_text(c.output),
                        tool_call_id=c.tool_call_id,
                        name=c.tool_name,
                        status="error" if c.is_error else "success",
                    )
                    for c in calls
                )
    return result
