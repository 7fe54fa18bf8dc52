"""An Agent 365 MCP server for the OpenAI Agents SDK, built on its public ``agents.mcp.MCPServer``.

The tools are listed by the tooling core at registration (cached per server and token): ``list_tools``
answers from that list without any request, and without copying it (the SDK copies each schema it
converts). Requests go through the tooling service's session pool (``McpSessionPool``: one ``mcp``
``ClientSession`` per server and user token, opened by the first request and reused across turns until
idle): concurrent tool calls run concurrently on it; a session the server forgot is initialised again
once, then the call fails typed. Once the turn's servers are closed (``cleanup``) they refuse requests.
Nothing of the SDK's own servers is used, so no private attribute of openai-agents is read or written.

A tool whose name clashes with another tool is exposed under the tooling core's rule
(``<server>_<tool>``): the model sees that name, the server is called with its own.

Each tool call is one GenAI ``execute_tool`` span. The Agents SDK passes no call id to ``call_tool``; it
does pass the run's ``ToolContext`` (which has ``tool_call_id``) to the server's ``tool_meta_resolver``
just before, in the task that then starts the call: the resolver is wrapped to note that id (and the
tool's name, so a stale id is never used) in a context variable that the call's task inherits.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from agents.mcp import MCPServer, ToolFilter, ToolFilterContext
from agents.run_context import RunContextWrapper
from mcp import ClientSession
from mcp.types import (
    CallToolResult,
    GetPromptResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceResult,
    Tool,
)

from agents_a365.tooling import MCPServerConfig, ToolDefinitionCache, ToolServerNotGivenError
from agents_a365.tooling.extensibility import (
    CallTime,
    McpSessionPool,
    refusal,
    tool_call_result,
    tool_call_span,
)

__all__ = ["A365MCPServer", "NotesTurn", "output_schema"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
# (tool name, call id, run context) noted by the tool_meta_resolver for the call that follows in the same task.
_CALL: contextvars.ContextVar[tuple[Any, ...] | None] = contextvars.ContextVar("a365_mcp_call", default=None)
# mcp 1 names the field outputSchema, mcp 2 output_schema (a missing attribute of a model costs ~2 us).
_OUTPUT_SCHEMA = "outputSchema" if "outputSchema" in Tool.model_fields else "output_schema"


class NotesTurn(MCPServer):
    """An ``MCPServer`` whose ``tool_meta_resolver`` (called by the Agents SDK just before each ``call_tool``, in
    the task that starts it) also notes the call's id and the run's context for that call, and whose tool calls
    are made for that turn (:meth:`_call_for_turn`): a subclass says how it finds a server and its pool."""

    _tool_cache: ToolDefinitionCache | None = None

    @property
    def tool_meta_resolver(self) -> Any:
        """The SDK's ``_meta`` resolver hook, wrapped to note the tool call id for the span."""
        return self._resolver

    @tool_meta_resolver.setter
    def tool_meta_resolver(self, resolver: Any) -> None:
        def resolve(context: Any) -> Any:
            run_context = getattr(context, "run_context", None)
            tool_name = getattr(context, "tool_name", None)
            if isinstance(tool_name, str):  # the call's id and turn (the run's context) for call_tool
                _CALL.set((tool_name, *(getattr(run_context, a, None) for a in ("tool_call_id", "context"))))
            return None if resolver is None else resolver(context)

        self._resolver = resolve

    async def _server(self, name: str, context: Any = None) -> MCPServerConfig:
        """Server ``name``'s config in the turn ``context`` names, else the task's."""
        raise NotImplementedError

    async def _run(self, operation: Callable[[McpSessionPool], Awaitable[T]]) -> T:
        raise NotImplementedError

    async def _call_for_turn(
        self,
        server: str,
        tool_name: str,
        name: str,
        arguments: dict[str, Any] | None,
        meta: dict[str, Any] | None,
        schema: dict[str, Any] | None,
    ) -> CallToolResult:
        """One ``tools/call`` of ``name`` (exposed as ``tool_name``) on ``server`` for the turn it runs in: the
        run context the ``tool_meta_resolver`` noted, else the task's scope; a user not given the server gets a
        tool error, nothing sent."""
        noted = _CALL.get()
        call_id, context = noted[1:] if noted is not None and noted[0] == tool_name else (None, None)
        with tool_call_span(server, tool_name, call_id, arguments=arguments) as span:
            try:
                config = await self._server(server, context)
            except ToolServerNotGivenError as exc:
                return refusal(exc)
            call = self._run(
                lambda pool: pool.call_tool(config, name, arguments, meta=meta, output_schema=schema)
            )
            return await tool_call_result(call, span, config, self._tool_cache)


class A365MCPServer(NotesTurn):
    """One Agent 365 MCP server (built by the registration service). With a ``calltime``, every request is made
    for the turn it runs in: the run's context, else the task's turn scope (``UnknownTurnError`` when none);
    without, with ``config``'s headers as given.

    ``tool_filter`` and ``cache_tools_list`` mean what they mean for ``MCPServerStreamableHttp``
    (``cache_tools_list=False``: every ``list_tools`` asks the server); the other keyword arguments
    are ``MCPServer``'s (``use_structured_content``, ``require_approval``, ``tool_meta_resolver`` …).
    """

    def __init__(
        self,
        config: MCPServerConfig,
        tools: Sequence[Tool],
        *,
        pool: McpSessionPool,
        tool_cache: ToolDefinitionCache | None = None,
        exposed_names: Sequence[str] | None = None,
        calltime: CallTime | None = None,
        cache_tools_list: bool = True,
        tool_filter: ToolFilter = None,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        self.config, self.cache_tools_list, self.tool_filter = config, cache_tools_list, tool_filter
        self._pool, self._tool_cache, self._connected, self._closed = pool, tool_cache, False, False
        self._calltime = calltime  # how each request finds its turn's config (None: ``config`` as given)
        names = list(exposed_names) if exposed_names is not None else [t.name for t in tools]
        # exposed name -> the server's own; computed once, the same on every list_tools of the turn.
        self._originals = {n: t.name for n, t in zip(names, tools, strict=True) if n != t.name}
        self._exposed = {t.name: n for n, t in zip(names, tools, strict=True) if n != t.name}
        self._tools = [self._expose(t) for t in tools]
        self._output_schemas = {t.name: output_schema(t) for t in tools}

    @property
    def name(self) -> str:
        return self.config.mcp_server_name

    @property
    def url(self) -> str:
        return self.config.url

    @property
    def is_connected(self) -> bool:
        """Whether it has made a request (its pooled session is open) and is not closed yet."""
        return self._connected and not self._closed and not self._pool.closed

    def __repr__(self) -> str:
        return f"A365MCPServer({self.name!r}, url={self.url!r}, tools={len(self._tools)})"

    def _expose(self, tool: Tool) -> Tool:
        name = self._exposed.get(tool.name)
        return tool if name is None else tool.model_copy(update={"name": name})

    # -- lifecycle: connected by the first request, closed when the turn ends -----------------------
    async def connect(self) -> None:
        """Nothing to do: the pooled session opens on the first request."""

    def close(self) -> None:
        """Refuse later requests (the registration service does it when the turn ends). The pooled
        session stays for the user's next turn; the tooling service closes it when idle."""
        self._closed = True

    async def cleanup(self) -> None:
        """:meth:`close` (the SDK's name)."""
        self.close()

    def _refuse_if_closed(self) -> None:
        if self._closed:
            raise RuntimeError(f"MCP server {self.name!r} is closed: its turn ended")

    async def _run(self, operation: Callable[[McpSessionPool], Awaitable[T]]) -> T:
        self._refuse_if_closed()
        result = await operation(self._pool)
        self._connected = True
        return result

    async def _server(self, name: str, context: Any = None) -> MCPServerConfig:
        return self.config if self._calltime is None else await self._calltime.server(name, context)

    # -- tools ------------------------------------------------------------------------------------
    async def list_tools(
        self, run_context: RunContextWrapper[Any] | None = None, agent: Any | None = None
    ) -> list[Tool]:
        # No token crosses users: the run's context (else the task) says whose turn this is; a user not given
        # this server is offered none of its tools.
        context, what = getattr(run_context, "context", None), f"MCP server {self.name!r}"
        scope = self._calltime.scope(context, what=what) if self._calltime is not None else None
        if scope is not None and self.name not in await scope.servers():
            return []
        tools = self._tools if self.cache_tools_list else await self._list_now()
        if self.tool_filter is None:
            return list(tools)
        return await self._filtered(tools, run_context, agent)

    async def _list_now(self) -> list[Tool]:
        config = await self._server(self.name)
        listed = await self._run(lambda pool: pool.list_tools(config))  # page cap, one deadline
        self._output_schemas.update({t.name: output_schema(t) for t in listed})
        return [self._expose(t) for t in listed]

    async def _filtered(self, tools: Sequence[Tool], run_context: Any, agent: Any) -> list[Tool]:
        """``tool_filter`` applied as the SDK applies it: a static allow/block list of the server's
        names, or a callable (a failing one leaves the tool out). An async one has ``request_timeout`` for all
        the server's tools together: past it, a call that still has to wait leaves its tool out."""
        spec = self.tool_filter
        if isinstance(spec, Mapping):
            allowed, blocked = spec.get("allowed_tool_names"), spec.get("blocked_tool_names") or ()
            # The filter names the server's own tool names.
            named = [(t, self._originals.get(t.name, t.name)) for t in tools]
            return [t for t, name in named if (allowed is None or name in allowed) and name not in blocked]
        if run_context is None or agent is None:
            raise ValueError("run_context and agent are required for a callable tool_filter")
        context = ToolFilterContext(run_context=run_context, agent=agent, server_name=self.name)
        kept, ends = [], self._pool.timeout and asyncio.get_running_loop().time() + self._pool.timeout
        for tool in tools:
            try:
                keep = spec(context, tool)  # type: ignore[misc]
                if inspect.isawaitable(keep):
                    async with asyncio.timeout_at(ends or None):  # user code: one deadline, as a request's
                        keep = await keep
            except Exception as exc:
                why = type(exc).__name__
                logger.warning(
                    "tool_filter failed for tool %r of %r (%s): left out", tool.name, self.name, why
                )
                keep = False
            if keep:
                kept.append(tool)
        return kept

    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None
    ) -> CallToolResult:
        self._refuse_if_closed()  # before the span: a refused call is not a failed one (the cache stays)
        name = self._originals.get(tool_name, tool_name)
        schema = self._output_schemas.get(name)
        return await self._call_for_turn(self.name, tool_name, name, arguments, meta, schema)

    # -- prompts and resources: straight to the session ------------------------------------------
    async def _session(self, operation: Callable[[ClientSession], Awaitable[T]]) -> T:
        config = await self._server(self.name)
        return await self._run(lambda pool: pool.run(config, operation, idempotent=True))

    async def list_prompts(self) -> ListPromptsResult:
        return await self._session(lambda s: s.list_prompts())

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None) -> GetPromptResult:
        return await self._session(lambda s: s.get_prompt(name, arguments))

    async def list_resources(self, cursor: str | None = None) -> ListResourcesResult:
        return await self._session(lambda s: s.list_resources(cursor))

    async def list_resource_templates(self, cursor: str | None = None) -> ListResourceTemplatesResult:
        return await self._session(lambda s: s.list_resource_templates(cursor))

    async def read_resource(self, uri: str) -> ReadResourceResult:
        return await self._session(lambda s: s.read_resource(uri))  # type: ignore[arg-type]


def output_schema(tool: Tool) -> dict[str, Any] | None:
    schema = getattr(tool, _OUTPUT_SCHEMA, None)
    return schema if isinstance(schema, dict) else None
