"""What the user tests share: two users' turns, scripted models that write the user into the email they
send, and the check at the emulator of which user's token each MCP ``tools/call`` carried."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from agents import Model, ModelResponse, Usage
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import Emulator
from agents_a365.emulator.tokens import TokenIssuer
from support.scripted_langchain import ScriptedChatModel, call, calls
from support.scripted_openai import assistant_message, function_call, tool_outputs
from support.turns import make_turn_context

__all__ = ["langchain_mail_model", "mail_calls", "openai_mail_model", "user_turn"]


def user_turn(emu: Emulator, user: str, *, text: str | None = None) -> TurnContext:
    """A turn of ``user`` (own conversation); the text names the user, so the email sent names them too."""
    return make_turn_context(
        user_id=user,
        agentic_app_id=emu.config.agent_id,
        conversation_id=f"conversation-{user}",
        activity_id=f"activity-{user}",
        text=text or f"from {user}",
    )


def mail_calls(emu: Emulator) -> list[tuple[str, str]]:
    """``(user the email is from, user whose token the request carried)`` of every ``tools/call`` of the mail
    server, read at the emulator."""
    result = []
    for request in emu.requests_for("mcp", server="mail"):
        if request.jsonrpc_method != "tools/call":
            continue
        subject = request.json["params"]["arguments"]["subject"]
        token = request.headers["authorization"].split(" ", 1)[1]
        result.append((subject.removeprefix("from "), TokenIssuer.decode_unverified(token)["oid"]))
    return result


class _OpenAIMail(Model):
    """Sends one email whose subject is the user's text, then answers."""

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        items: Sequence[Any] = [{"role": "user", "content": input}] if isinstance(input, str) else input
        if tool_outputs(items):
            output: list[Any] = [assistant_message("sent")]
        else:
            text = next(i["content"] for i in items if isinstance(i, dict) and i.get("role") == "user")
            output = [function_call("send_email", {"to": "ada@contoso.com", "subject": text, "body": "hi"})]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


def openai_mail_model() -> Model:
    return _OpenAIMail()


def _langchain_step(messages: list[BaseMessage]) -> AIMessage:
    if isinstance(messages[-1], ToolMessage):
        return calls(text="sent")
    text = next(m.content for m in reversed(messages) if isinstance(m, HumanMessage))
    return calls(call("send_email", to="ada@contoso.com", subject=str(text), body="hi"))


def langchain_mail_model() -> ScriptedChatModel:
    return ScriptedChatModel(script=[_langchain_step], repeat_last=True)
