"""The floor of the host benchmark: the same hosted turn with no Agent 365 SDK. Per user: the gateway's list (raw
aiohttp), one raw ``mcp`` session per server **kept** for later turns (tokens taken as given); each turn builds the
orchestrator's tools from them, runs the scripted model, replies and POSTs the history with raw aiohttp. On the SDK's
TTL (``A365_TOOL_CACHE_TTL``) a turn asks the gateway and lists every server again, in the background, as the SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import aiohttp
import anyio
import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Tool

from agents_a365.emulator import PLATFORM_AUDIENCE, TokenIssuer

_TLS = ssl.create_default_context()


@dataclass
class _Server:
    name: str
    session: ClientSession
    tools: list[Tool]


@dataclass
class FloorUser:
    """One user's kept MCP sessions; ``close()`` ends them."""

    token: str
    servers: list[_Server] = field(default_factory=list)
    listed_at: float = 0.0
    refreshing: asyncio.Task[None] | None = None
    _http: httpx.AsyncClient | None = None
    _closing: asyncio.Event = field(default_factory=asyncio.Event)
    _owners: list[asyncio.Task[None]] = field(default_factory=list)

    async def gateway(
        self, http: aiohttp.ClientSession, base_url: str, agent_id: str
    ) -> list[dict[str, str]]:
        headers = {"Authorization": f"Bearer {self.token}"}
        async with http.get(f"{base_url}/agents/v2/{agent_id}/mcpServers", headers=headers) as response:
            response.raise_for_status()
            servers: list[dict[str, str]] = (await response.json())["mcpServers"]
            return servers

    async def open(self, http: aiohttp.ClientSession, base_url: str, agent_id: str) -> None:
        entries = await self.gateway(http, base_url, agent_id)
        # Keep-alive expiry under the servers' 5 s (uvicorn's): a request on a connection the server is closing
        # fails, and the raw client does not retry (the SDK does the same: 4 s and one retry).
        limits = httpx.Limits(keepalive_expiry=4)
        headers = {"Authorization": f"Bearer {self.token}"}
        self._http = httpx.AsyncClient(
            headers=headers, verify=_TLS, timeout=httpx.Timeout(30, read=300), limits=limits
        )
        ready = [asyncio.get_running_loop().create_future() for _ in entries]
        for entry, future in zip(entries, ready, strict=True):
            self._owners.append(asyncio.create_task(self._own(entry["mcpServerName"], entry["url"], future)))
        self.servers = list(await asyncio.gather(*ready))

    async def _own(self, name: str, url: str, ready: asyncio.Future[_Server]) -> None:
        assert self._http is not None
        try:
            async with (
                streamable_http_client(url, http_client=self._http) as (read, write, _),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                ready.set_result(_Server(name, session, (await session.list_tools()).tools))
                await self._closing.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            if not isinstance(exc, Exception):
                raise

    async def refresh(self, http: aiohttp.ClientSession, base_url: str, agent_id: str) -> None:
        """What the SDK does when a user's cached server list and definitions expire: the list asked again (the
        kept sessions stay: the benchmark's list never changes) and every server's tools listed again, one after
        the other (all at once, a refresh opens a connection per server: p99 4.6 s at 200 users, paced). A failure
        is printed: as the SDK's, the next TTL tries again."""
        try:
            if len(listed := await self.gateway(http, base_url, agent_id)) != len(self.servers):
                print(
                    f"  ! the gateway now lists {len(listed)} servers, the floor keeps {len(self.servers)}",
                    flush=True,
                )
            for server in self.servers:
                server.tools = (await server.session.list_tools()).tools
        except Exception as exc:
            print(f"  ! the floor's refresh failed: {exc!r}", flush=True)
        finally:
            self.refreshing = None

    async def close(self) -> None:
        if self.refreshing is not None:
            self.refreshing.cancel()
            await asyncio.gather(self.refreshing, return_exceptions=True)
        self._closing.set()
        await asyncio.gather(*self._owners, return_exceptions=True)
        if self._http is not None:
            await self._http.aclose()

    def named_tools(self) -> list[tuple[str, _Server, Tool]]:
        """Every tool with the name a model sees: ``<server>_<tool>`` when several servers share it."""
        prefix = len(self.servers) > 1
        return [(f"{s.name}_{t.name}" if prefix else t.name, s, t) for s in self.servers for t in s.tools]


class Floor:
    """The floor's per-user state and its raw threat-protection POST."""

    def __init__(
        self,
        base_url: str,
        secret: str,
        *,
        ttl: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.base_url, self._clock, self._issuer = base_url, clock, TokenIssuer(secret)
        self.ttl = float(os.environ.get("A365_TOOL_CACHE_TTL", 300)) if ttl is None else ttl
        self._users: dict[str, FloorUser] = {}
        self._opening: dict[str, asyncio.Future[FloorUser]] = {}
        self.http = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=100, keepalive_timeout=4))

    async def user(self, user_id: str, agent_id: str) -> FloorUser:
        if user := self._users.get(user_id):
            if self.ttl > 0 and self._clock() - user.listed_at >= self.ttl and user.refreshing is None:
                user.listed_at = self._clock()
                user.refreshing = asyncio.create_task(user.refresh(self.http, self.base_url, agent_id))
            return user
        if user_id in self._opening:  # a concurrent first turn of the same user
            return await asyncio.shield(self._opening[user_id])
        self._opening[user_id] = future = asyncio.get_running_loop().create_future()
        try:
            token = self._issuer.mint(PLATFORM_AUDIENCE, app_id=agent_id, user_id=user_id)
            user = FloorUser(token, listed_at=self._clock())
            await user.open(self.http, self.base_url, agent_id)
            self._users[user_id] = user
            future.set_result(user)
            return user
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: nobody else may be waiting
            raise
        finally:
            del self._opening[user_id]

    async def call(self, user_id: str, agent_id: str, server: str, tool: str, arguments: Any) -> Any:
        """``tools/call`` on the user's kept session; a session whose transport died (the raw client does not
        reconnect) is reopened once, with the user's other sessions."""
        for attempt in (1, 2):
            user = await self.user(user_id, agent_id)
            session = next(s.session for s in user.servers if s.name == server)
            try:
                return await session.call_tool(tool, arguments)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, httpx.TransportError):
                if attempt == 2:
                    raise
                if self._users.get(user_id) is user:
                    del self._users[user_id]
                    await user.close()
        raise AssertionError("unreachable")

    async def send_history(self, user: FloorUser, activity: Any, history: list[dict[str, str]]) -> None:
        body = {
            "conversationId": activity.conversation.id,
            "messageId": activity.id,
            "userMessage": activity.text,
        }
        headers = {"Authorization": f"Bearer {user.token}", "Content-Type": "application/json"}
        url = f"{self.base_url}/agents/real-time-threat-protection/chat-message"
        async with self.http.post(
            url, data=json.dumps(body | {"chatHistory": history}), headers=headers
        ) as response:
            await response.read()
            response.raise_for_status()

    async def close(self) -> None:
        for user in list(self._users.values()):
            with contextlib.suppress(Exception):
                await user.close()
        await self.http.close()


def history_entry(message_id: str, role: str, content: str) -> dict[str, str]:
    return {"id": message_id, "role": role, "content": content, "timestamp": datetime.now(UTC).isoformat()}


class _Calls:
    """What the LangChain adapter's tool calls (``call_tool``), routed through :meth:`Floor.call`."""

    def __init__(self, floor: Floor, user_id: str, agent_id: str, server: str) -> None:
        self._target = (floor, user_id, agent_id, server)

    async def call_tool(self, name: str, arguments: Any = None, *args: Any, **kwargs: Any) -> Any:
        floor, user_id, agent_id, server = self._target
        return await floor.call(user_id, agent_id, server, name, arguments)


# -- the two orchestrators over the kept sessions ----------------------------------------------------------


async def langchain_turn(floor: Floor, turn: Any, agent_id: str) -> None:
    from _host_models import OneToolLangChainModel
    from langchain.agents import create_agent
    from langchain_core.messages import HumanMessage
    from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool
    from langgraph.checkpoint.memory import InMemorySaver

    activity = turn.activity
    user_id = activity.from_property.aad_object_id or activity.from_property.id
    user = await floor.user(user_id, agent_id)
    tools = [
        convert_mcp_tool_to_langchain_tool(_Calls(floor, user_id, agent_id, server.name), tool).model_copy(  # type: ignore[arg-type]
            update={"name": name}
        )
        for name, server, tool in user.named_tools()
    ]
    model, prompt = OneToolLangChainModel(), "You schedule meetings."
    agent = create_agent(model=model, tools=tools, system_prompt=prompt, checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": activity.conversation.id}}
    result = await agent.ainvoke({"messages": [HumanMessage(activity.text)]}, config)
    await turn.send_activity(result["messages"][-1].text)
    history = [
        history_entry(m.id or f"m{i}", m.type, m.text) for i, m in enumerate(result["messages"]) if m.text
    ]
    await floor.send_history(user, activity, history)


async def openai_turn(floor: Floor, turn: Any, agent_id: str) -> None:
    from _host_models import OneToolOpenAIModel
    from agents import Agent, FunctionTool, Runner, SQLiteSession

    activity = turn.activity
    user_id = activity.from_property.aad_object_id or activity.from_property.id
    user = await floor.user(user_id, agent_id)

    def function_tool(name: str, server: _Server, tool: Tool) -> FunctionTool:
        async def invoke(_: Any, arguments: str) -> str:
            result = await floor.call(
                user_id, agent_id, server.name, tool.name, json.loads(arguments or "{}")
            )
            return json.dumps([c.model_dump(mode="json") for c in result.content])

        return FunctionTool(
            name=name,
            description=tool.description or "",
            params_json_schema=tool.inputSchema,
            on_invoke_tool=invoke,
            strict_json_schema=False,
        )

    tools: list[Any] = [function_tool(*t) for t in user.named_tools()]
    model, instructions = OneToolOpenAIModel(), "You send emails for the user."
    agent = Agent(name="Mailer", instructions=instructions, model=model, tools=tools)
    session = SQLiteSession(activity.conversation.id)
    try:
        result = await Runner.run(agent, activity.text, session=session)
        await turn.send_activity(str(result.final_output))
        history = [
            history_entry(str(item.get("id") or f"item-{i}"), str(item["role"]), _text(item["content"]))
            for i, item in enumerate(await session.get_items())
            if item.get("role") is not None and item.get("content") is not None
        ]
        await floor.send_history(user, activity, history)
    finally:
        session.close()


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content)
