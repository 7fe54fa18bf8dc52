"""``useChat`` request messages -> OpenAI Agents SDK input items (Responses format)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, cast

from agents import TResponseInputItem

from agents_a365.tooling.ui_stream import UIMessage, iter_steps, to_jsonable

__all__ = ["ui_messages_to_openai_input"]


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=to_jsonable, ensure_ascii=False)


def _user_item(message: UIMessage) -> dict[str, Any]:
    images = [
        p for p in message.parts if p.type == "file" and p.url and (p.media_type or "").startswith("image/")
    ]
    if not images:
        return {"role": "user", "content": message.text}
    content: list[dict[str, Any]] = []
    if message.text:
        content.append({"type": "input_text", "text": message.text})
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
    for raw in messages:
        message = raw if isinstance(raw, UIMessage) else UIMessage.model_validate(raw)
        if message.role == "system":
            items.append({"role": "system", "content": message.text})
        elif message.role == "user":
            items.append(_user_item(message))
        else:
            for step in iter_steps(message):
                if step.text:
                    items.append({"role": "assistant", "content": step.text})
                for call in step.tool_calls:
                    items.append(
                        {
                            "type": "function_call",
                            "call_id": call.tool_call_id,
                            "name": call.tool_name,
                            "arguments": _json(call.input),
                        }
                    )
                    items.append(
                        {
                            "type": "function_call_output",
                            "call_id": call.tool_call_id,
                            "output": _json(call.output),
                        }
                    )
    return cast(list[TResponseInputItem], items)
