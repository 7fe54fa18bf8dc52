"""``useChat`` request messages -> OpenAI Agents SDK input items (Responses format)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from agents import TResponseInputItem

from agents_a365.tooling.ui_stream import UIMessage, iter_steps, json_text


def _user_item(message: UIMessage) -> dict[str, Any]:
    images = message.images
    if not images:
        return {"role": "user", "content": message.text}
    content = [{"type": "input_text", "text": message.text}] if message.text else []
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
            for step in iter_steps(message):
                if step.text:
                    items.append({"role": "assistant", "content": step.text})
                for c in step.tool_calls:
                    items.append(
                        {
                            "type": "function_call",
                            "call_id": c.tool_call_id,
                            "name": c.tool_name,
                            "arguments": json_text(c.input),
                        }
                    )
                    items.append(
                        {
                            "type": "function_call_output",
                            "call_id": c.tool_call_id,
                            "output": json_text(c.output),
                        }
                    )
    return cast(list[TResponseInputItem], items)
