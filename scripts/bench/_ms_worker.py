"""Baseline worker: Microsoft's published ``microsoft-agents-a365-tooling-extensions-openai`` 2.0.0.

Runs with the Python of the baseline venv (``.bench-venv/ms``, made by ``_common.ms_python()``), never
with the workspace's: it must not import ``agents_a365``. It reads one JSON command per line on stdin
and answers one JSON line on stdout, so the bench process can interleave its own measurements with
Microsoft's against the same emulator. Environment: ``MCP_PLATFORM_ENDPOINT`` (the emulator),
``ENVIRONMENT=Production`` (gateway path), ``BENCH_TOKEN_SECRET`` (the emulator's HS256 secret).

``make_openai_items`` is stdlib-only and also imported by the bench scripts, so both sides convert
exactly the same items.
"""

from __future__ import annotations

import gc
import json
import sys
import time
from typing import Any

PLATFORM_AUDIENCE = "ea9ffc3e-8a23-4a7d-836d-234d7c7565c1"
DEFAULT_AGENT_ID = "6f1c2b8e-5d4a-4e3b-9c7f-2a1b0c9d8e7f"


def make_openai_items(n: int) -> list[dict[str, Any]]:
    """``n`` OpenAI Agents SDK session items (what ``Session.get_items()`` returns): user messages
    and assistant output messages alternating, every one with text and an id."""
    items: list[dict[str, Any]] = []
    for i in range(n):
        if i % 2 == 0:
            items.append(
                {"id": f"msg_{i}", "role": "user", "content": f"question {i}: what is on my calendar?"}
            )
        else:
            items.append(
                {
                    "id": f"msg_{i}",
                    "type": "message",
                    "role": "assistant",
                    "status": "completed",
                    "content": [
                        {"type": "output_text", "text": f"answer {i}: two meetings", "annotations": []}
                    ],
                }
            )
    return items


# -- everything below runs only in the baseline venv ------------------------------------------------------


class _Authorization:
    """hosting-core's ``Authorization.exchange_token`` shape: mints an emulator token in-process, like
    the emulator's own ``EmulatorAuthorization`` the SDK side uses (no network on either side)."""

    def __init__(self, secret: str) -> None:
        self._secret = secret

    async def exchange_token(
        self, context: Any, scopes: Any = None, auth_handler_id: Any = None, *_: Any
    ) -> Any:
        import jwt
        from microsoft_agents.activity import TokenResponse

        scope = (scopes or [PLATFORM_AUDIENCE + "/.default"])[0]
        head, _, _ = scope.rpartition("/")
        user = context.activity.from_property.id
        now = int(time.time())
        claims = {
            "aud": head or scope,
            "appid": DEFAULT_AGENT_ID,
            "azp": DEFAULT_AGENT_ID,
            "iat": now,
            "nbf": now,
            "exp": now + 3600,
            "tid": "tenant-1",
            "oid": user,
            "sub": user,
            "ver": "2.0",
        }
        return TokenResponse(token=jwt.encode(claims, self._secret, algorithm="HS256"))


def _turn(agent_id: str, user: str) -> Any:
    from microsoft_agents.activity import Activity, ChannelAccount, ConversationAccount, RoleTypes
    from microsoft_agents.hosting.core import ChannelAdapter, TurnContext

    class _Adapter(ChannelAdapter):  # type: ignore[misc]
        async def send_activities(self, context: Any, activities: Any) -> list[Any]:
            return []

        async def update_activity(self, context: Any, activity: Any) -> None:
            raise NotImplementedError

        async def delete_activity(self, context: Any, reference: Any) -> None:
            raise NotImplementedError

    activity = Activity(
        type="message",
        channel_id="msteams:email",
        from_property=ChannelAccount(id=user, aad_object_id=user),
        recipient=ChannelAccount(
            id="agent-1", role=RoleTypes.agentic_identity, agentic_app_id=agent_id, tenant_id="tenant-1"
        ),
        conversation=ConversationAccount(id="conversation-1", tenant_id="tenant-1"),
        id="activity-1",
        text="What is on my calendar?",
    )
    return TurnContext(_Adapter(), activity)


async def _register(service: Any, auth: Any, agent_id: str, user: str) -> dict[str, Any]:
    from agents import Agent, RunContextWrapper
    from agents.mcp.util import MCPUtil

    turn = _turn(agent_id, user)
    template = Agent(name="bench", instructions="bench", model="gpt-4o")
    gc.collect()  # as on our side: no full collection inside the measurement
    t0 = time.perf_counter()
    agent = await service.add_tool_servers_to_agent(template, auth, "AGENTIC", turn)
    t1 = time.perf_counter()
    # What Runner.run does before the first model call (servers listed one by one); server-prefixed
    # names because every notes server has the same tools (Microsoft's clone drops mcp_config).
    tools = await MCPUtil.get_all_function_tools(
        agent.mcp_servers, False, RunContextWrapper(context=None), agent, include_server_in_tool_names=True
    )
    t2 = time.perf_counter()
    # Their cleanup_all_servers() closes in connect order, which breaks anyio's nested cancel scopes
    # (all servers were connected in this task) and cancels the task: close in reverse order instead.
    for server in reversed(getattr(service, "_connected_servers", [])):
        await server.cleanup()
    service._connected_servers = []
    return {
        "add": t1 - t0,
        "list": t2 - t1,
        "total": t2 - t0,
        "tools": len(tools),
        "servers": len(agent.mcp_servers),
    }


def _convert(service: Any, n: int, repeats: int) -> dict[str, Any]:
    from microsoft_agents_a365.tooling.models import ChatMessageRequest

    items = make_openai_items(n)
    conv: list[float] = []
    both: list[float] = []
    size = 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        history = service._convert_openai_messages_to_chat_history(items)
        t1 = time.perf_counter()
        # What their send_chat_history does with it (request model + json.dumps of model_dump).
        request = ChatMessageRequest(
            conversation_id="conversation-1", message_id="activity-1", user_message="hi", chat_history=history
        )
        json.dumps(request.model_dump(by_alias=True, mode="json")).encode()
        t2 = time.perf_counter()
        conv.append(t1 - t0)
        both.append(t2 - t0)
        size = len(history)
    return {"convert": conv, "convert_serialize": both, "converted": size}


async def _send(service: Any, n: int) -> dict[str, Any]:
    import asyncio
    import socket

    from microsoft_agents_a365.tooling.models import ToolOptions

    connects = 0

    def hook(event: str, args: Any) -> None:
        nonlocal connects
        if (
            event == "socket.connect"
            and isinstance(args[0], socket.socket)
            and args[0].family == socket.AF_INET
        ):
            connects += 1

    if not getattr(_send, "_hooked", False):
        sys.addaudithook(hook)
        _send._hooked = True  # type: ignore[attr-defined]
        _send._count = lambda: connects  # type: ignore[attr-defined]
    before = _send._count()  # type: ignore[attr-defined]
    turn = _turn(DEFAULT_AGENT_ID, "user-1")
    options = ToolOptions(orchestrator_name="OpenAI")
    t0, c0 = time.perf_counter(), time.process_time()
    results = await asyncio.gather(
        *(service.config_service.send_chat_history(turn, [], options) for _ in range(n))
    )
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    ok = sum(1 for r in results if r.succeeded)
    return {"elapsed": elapsed, "cpu": cpu, "succeeded": ok, "connections": _send._count() - before}  # type: ignore[attr-defined]


async def _main() -> None:
    import asyncio
    import logging
    import os

    logging.basicConfig(level=logging.CRITICAL)
    from microsoft_agents_a365.tooling.extensions.openai import McpToolRegistrationService

    service = McpToolRegistrationService(logger=logging.getLogger("ms-baseline"))
    auth = _Authorization(os.environ["BENCH_TOKEN_SECRET"])
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    print(json.dumps({"ready": True}), flush=True)
    while line := await reader.readline():
        cmd = json.loads(line)
        op = cmd["op"]
        try:
            if op == "register":
                result = await _register(service, auth, cmd["agent_id"], cmd["user"])
            elif op == "convert":
                result = _convert(service, cmd["n"], cmd["repeats"])
            elif op == "send":
                result = await _send(service, cmd["n"])
            elif op == "quit":
                break
            else:
                result = {"error": f"unknown op {op}"}
        except Exception as exc:
            result = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    import asyncio

    asyncio.run(_main())
