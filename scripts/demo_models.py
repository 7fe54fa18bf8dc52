"""Deterministic models for the demo: no network, no API key.

With ``OPENAI_API_KEY`` set, :func:`langchain_model` and :func:`openai_model` return real
models instead. Only the model is scripted; agents, tools, MCP and HTTP are all real.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import AsyncIterator, Sequence
from datetime import date, timedelta
from typing import Any

from agents import ModelResponse, Usage
from agents.models.interface import Model
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

TOMORROW = (date.today() + timedelta(days=1)).isoformat()


def real_models_enabled() -> bool:
    return bool(os.environ.get("OPENAI_API_KEY"))


# -- LangChain -------------------------------------------------------------------------------------


class ScriptedSchedulingModel(BaseChatModel):
    """Step 1: ask the calendar for free time and the mailbox for the latest email, in parallel.
    Step 2: answer from the two tool results."""

    @property
    def _llm_type(self) -> str:
        return "scripted-demo"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedSchedulingModel:
        return self

    def _answer(self, messages: list[BaseMessage]) -> AIMessage:
        results = {m.name: m.text for m in messages if isinstance(m, ToolMessage)}
        if not results:
            return AIMessage(
                content="",
                tool_calls=[
                    {
                        "name": "find_free_time",
                        "args": {"date": TOMORROW, "duration_minutes": 30},
                        "id": "call-free",
                        "type": "tool_call",
                    },
                    {
                        "name": "list_emails",
                        "args": {"folder": "inbox", "limit": 1},
                        "id": "call-mail",
                        "type": "tool_call",
                    },
                ],
            )
        slots = json.loads(results.get("find_free_time", "[]") or "[]")
        first = slots[0]["start"] if isinstance(slots, list) and slots else "no free slot"
        emails = json.loads(results.get("list_emails", "[]") or "[]")
        latest = (
            f"'{emails[0]['subject']}' from {emails[0]['sender']}"
            if isinstance(emails, list) and emails
            else "none"
        )
        return AIMessage(
            content=f"Your first free 30-minute slot tomorrow starts at {first}. Latest email: {latest}."
        )

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._answer(messages))])

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        return self._generate(messages)


def langchain_model() -> BaseChatModel:
    if real_models_enabled():
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(model=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"), temperature=0)
    return ScriptedSchedulingModel()


# -- OpenAI Agents SDK -----------------------------------------------------------------------------


class ScriptedMailModel(Model):
    """Step 1: send an email through the mail MCP server. Step 2: confirm with the tool's result."""

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        items = input if isinstance(input, list) else [{"role": "user", "content": input}]
        outputs = [
            i.get("output") for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"
        ]
        output: list[Any]
        if not outputs:
            output = [
                ResponseFunctionToolCall(
                    type="function_call",
                    id=f"fc_{uuid.uuid4().hex[:8]}",
                    call_id="call_send",
                    name="send_email",
                    arguments=json.dumps(
                        {"to": "ada@contoso.com", "subject": "Meeting tomorrow", "body": "See you at 10."}
                    ),
                    status="completed",
                )
            ]
        else:
            output = [
                ResponseOutputMessage(
                    type="message",
                    id=f"msg_{uuid.uuid4().hex[:8]}",
                    role="assistant",
                    status="completed",
                    content=[
                        ResponseOutputText(
                            type="output_text", text=_confirmation(outputs[-1]), annotations=[]
                        )
                    ],
                )
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


def _confirmation(output: Any) -> str:
    parts = output if isinstance(output, list) else [output]
    text = " ".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in parts)
    try:
        sent = json.loads(text)
        return f"Sent email {sent['id']} to {', '.join(sent['to'])}."
    except (ValueError, KeyError, TypeError):
        return f"The mail server answered: {text}"


def openai_model() -> Model | str:
    if real_models_enabled():
        return os.environ.get("OPENAI_MODEL", "gpt-4o-mini")
    return ScriptedMailModel()
