"""``useChat`` request messages -> LangChain messages."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from agents_a365.tooling.ui_stream import UIMessage, iter_steps, to_jsonable

__all__ = ["ui_messages_to_langchain"]


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=to_jsonable, ensure_ascii=False)


def _user_content(message: UIMessage) -> str | list[str | dict[Any, Any]]:
    images = [
        p for p in message.parts if p.type == "file" and p.url and (p.media_type or "").startswith("image/")
    ]
    if not images:
        return message.text
    blocks: list[str | dict[Any, Any]] = []
    if message.text:
        blocks.append({"type": "text", "text": message.text})
    blocks.extend({"type": "image", "url": p.url, "mime_type": p.media_type} for p in images)
    return blocks


def ui_messages_to_langchain(messages: Iterable[UIMessage | Mapping[str, Any]]) -> list[BaseMessage]:
    """Convert the ``UIMessage`` list ``useChat`` posts into LangChain messages for ``agent.astream``.

    User text (and image files) become ``HumanMessage``; each model step of an assistant message becomes an
    ``AIMessage`` with its tool calls followed by one ``ToolMessage`` per finished call (errors keep
    ``status="error"``). Reasoning, unfinished tool calls and ``data-*`` parts are not replayed.
    """
    result: list[BaseMessage] = []
    for raw in messages:
        message = raw if isinstance(raw, UIMessage) else UIMessage.model_validate(raw)
        if message.role == "system":
            result.append(SystemMessage(content=message.text))
        elif message.role == "user":
            result.append(HumanMessage(content=_user_content(message)))
        else:
            for step in iter_steps(message):
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
                            for call in step.tool_calls
                        ],
                    )
                )
                result.extend(
                    ToolMessage(
                        content=_as_text(call.output),
                        tool_call_id=call.tool_call_id,
                        name=call.tool_name,
                        status="error" if call.is_error else "success",
                    )
                    for call in step.tool_calls
                )
    return result
