"""What every host process shares (ours, the floor's, Microsoft's in its venv): ``serve`` and the scripted models,
each turn calling ``list_notes`` of the first notes server, then answering from its result (no network)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Sequence
from typing import Any

from agents import ModelResponse, Usage
from agents.models.interface import Model
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

TOOL = "list_notes"
"""The tool every turn calls. Every notes server has it; hosts prefix it with the server's name when there are
several (``notes_1_list_notes``), so the model takes the first name that ends with it."""


async def read_stdin() -> asyncio.StreamReader:
    reader = asyncio.StreamReader()
    await asyncio.get_running_loop().connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), sys.stdin
    )
    return reader


async def serve(web_app: Any) -> None:
    """Serve ``web_app`` on loopback, print ``ready <url>``, return when stdin closes (the benchmark's signal)."""
    from aiohttp import web

    runner = web.AppRunner(web_app, access_log=None, shutdown_timeout=2)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0, backlog=4096).start()
        print(f"ready http://127.0.0.1:{runner.addresses[0][1]}", flush=True)
        await (await read_stdin()).read()
    finally:
        await runner.cleanup()


def pick_tool(names: Sequence[str]) -> str:
    for name in names:
        if name == TOOL or name.endswith("_" + TOOL):
            return name
    raise RuntimeError(f"no {TOOL!r} tool among {list(names)[:8]}")


def answer_text(output: Any) -> str:
    return f"You have {len(str(output))} characters of notes."


class OneToolOpenAIModel(Model):
    """Step 1: call the first ``list_notes`` tool. Step 2: answer."""

    async def get_response(
        self, system_instructions: Any, input: Any, model_settings: Any, tools: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        items = input if isinstance(input, list) else [{"role": "user", "content": input}]
        # A session replays earlier turns: answer only right after this turn's tool result.
        last = items[-1] if items else None
        turn = sum(1 for i in items if isinstance(i, dict) and i.get("role") == "user")
        output: list[Any]
        if not (isinstance(last, dict) and last.get("type") == "function_call_output"):
            name = pick_tool([t.name for t in tools])
            call = {"id": f"fc_{turn}", "call_id": f"call_{turn}", "name": name, "arguments": "{}"}
            output = [ResponseFunctionToolCall(type="function_call", status="completed", **call)]
        else:
            text = ResponseOutputText(
                type="output_text", text=answer_text(last.get("output")), annotations=[]
            )
            message = {"id": f"msg_{turn}", "role": "assistant", "status": "completed", "content": [text]}
            output = [ResponseOutputMessage(type="message", **message)]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


try:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
except ImportError:  # Microsoft's venv
    pass
else:

    class OneToolLangChainModel(BaseChatModel):
        """Step 1: call the first ``list_notes`` tool bound. Step 2: answer from its result."""

        tool_name: str | None = None

        @property
        def _llm_type(self) -> str:
            return "scripted-host-bench"

        def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> OneToolLangChainModel:
            names = [getattr(t, "name", None) or t.get("name", "") for t in tools]
            return self.model_copy(update={"tool_name": pick_tool(names)})

        def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
            if isinstance(messages[-1], ToolMessage):
                message = AIMessage(content=answer_text(messages[-1].text))
            else:
                assert self.tool_name is not None, "bind_tools was not called"
                call = {"name": self.tool_name, "args": {}, "id": "call-1", "type": "tool_call"}
                message = AIMessage(content="", tool_calls=[call])
            return ChatResult(generations=[ChatGeneration(message=message)])

        async def _agenerate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
            return self._generate(messages)
