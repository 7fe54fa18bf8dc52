"""The request side: the ``UIMessage`` list that ``useChat`` posts (AI SDK v5+ ``DefaultChatTransport``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

_TERMINAL_TOOL_STATES = frozenset(("output-available", "output-error"))


class _ClientModel(BaseModel):
    """What the client posts: extra fields kept, camelCase aliases or snake_case names, frozen."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)


class UIMessagePart(_ClientModel):
    """One part of a ``UIMessage``. Loose on purpose: the client adds fields between versions."""

    type: str
    text: str | None = None
    tool_call_id: str | None = Field(default=None, alias="toolCallId")
    tool_name: str | None = Field(default=None, alias="toolName")
    state: str | None = None
    input: Any = None
    output: Any = None
    error_text: str | None = Field(default=None, alias="errorText")
    url: str | None = None
    media_type: str | None = Field(default=None, alias="mediaType")

    @property
    def is_tool(self) -> bool:
        """``tool-<name>`` (static tool) or ``dynamic-tool`` parts."""
        return self.type == "dynamic-tool" or self.type.startswith("tool-")

    @property
    def resolved_tool_name(self) -> str:
        if self.type == "dynamic-tool":
            return self.tool_name or "unknown"
        return self.type.removeprefix("tool-")


class UIMessage(_ClientModel):
    id: str = ""
    role: Literal["system", "user", "assistant"]
    metadata: Any = None
    parts: list[UIMessagePart] = Field(default_factory=list)

    @property
    def text(self) -> str:
        """The concatenated text parts."""
        return "".join(p.text or "" for p in self.parts if p.type == "text")

    @property
    def images(self) -> list[UIMessagePart]:
        """The image ``file`` parts (user messages send them with the text)."""
        return [
            p for p in self.parts if p.type == "file" and p.url and (p.media_type or "").startswith("image/")
        ]


class UIChatRequest(_ClientModel):
    """The JSON body ``useChat`` sends: ``{id, messages, trigger, messageId, ...}``; extra body fields kept."""

    id: str | None = None
    messages: list[UIMessage]
    trigger: str | None = None
    message_id: str | None = Field(default=None, alias="messageId")


@dataclass(frozen=True, slots=True)
class UIToolCall:
    """A finished tool call of an earlier assistant message, ready to be replayed to a model."""

    tool_call_id: str
    tool_name: str
    input: Any
    output: Any
    is_error: bool


@dataclass(frozen=True, slots=True)
class UIStep:
    """One model step of an assistant message: its text, then its finished tool calls."""

    text: str
    tool_calls: tuple[UIToolCall, ...]


def iter_steps(message: UIMessage) -> Iterator[UIStep]:
    """Split an assistant message into model steps (at ``step-start`` parts or after tool results).

    Reasoning, files, sources and ``data-*`` parts are not replayed; unfinished tool calls are dropped
    because model APIs reject a tool call without its result.
    """
    text: list[str] = []
    calls: list[UIToolCall] = []
    for part in message.parts:
        new_step = part.type == "step-start" or (part.type == "text" and calls)
        if new_step and (text or calls):
            yield UIStep("".join(text), tuple(calls))
            text, calls = [], []
        if part.type == "text" and part.text:
            text.append(part.text)
        elif part.is_tool and part.state in _TERMINAL_TOOL_STATES and part.tool_call_id:
            is_error = part.state == "output-error"
            given = part.input if part.input is not None else {}
            output = part.error_text if is_error else part.output
            calls.append(UIToolCall(part.tool_call_id, part.resolved_tool_name, given, output, is_error))
    if text or calls:
        yield UIStep("".join(text), tuple(calls))
