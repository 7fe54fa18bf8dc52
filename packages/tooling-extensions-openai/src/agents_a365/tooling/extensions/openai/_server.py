"""``MCPServerStreamableHttp`` whose connection lives in a task of its own, connected lazily when
its tool definitions are cached.

Two problems of the SDK server, solved here:

* The MCP transport (anyio task groups) must be entered and exited in one task. When a request
  fails inside the transport (a dropped connection during ``tools/call``), its task group cancels
  the task that entered it. The SDK server enters it in whichever task calls ``connect()``; here
  that is an owner task that exists only to hold the connection, notices the cancellation and
  closes the transport itself. ``connect()`` and ``cleanup()`` may then be called from any task.
* A warm turn should make no MCP request at registration. With a cached ``tools/list`` result
  for this server and these exact headers (the user's token included), ``connect()`` does not
  connect: the tools are listed from the cache, and the first tool call (or any other request)
  connects.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from agents.mcp import MCPServerStreamableHttp, MCPServerStreamableHttpParams
from agents.run_context import RunContextWrapper
from mcp import Tool as MCPTool
from mcp.types import (
    CallToolResult,
    GetPromptResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceResult,
)

from agents_a365.tooling import McpServerConnectionError, ToolDefinitionCache, prime_output_schemas
from agents_a365.tooling.extensibility import (
    MAX_LIST_PAGES,
    TurnIdentity,
    check_turn,
    mcp_session_span,
    scrubbed,
)

from ._telemetry import noting_call_id, traced_call_tool

__all__ = ["MAX_LIST_PAGES", "A365MCPServer"]

logger = logging.getLogger(__name__)

# The core's page cap on tools/list, passed to the SDK's own listing: a server returning a new
# nextCursor forever must not keep registration or the first model call busy.
# max_list_pages exists from openai-agents 0.2x on; older versions get the deadline only.
_SDK_CAPS_PAGES = "max_list_pages" in inspect.signature(MCPServerStreamableHttp.__init__).parameters


class A365MCPServer(MCPServerStreamableHttp):
    """An Agent 365 MCP server for the OpenAI Agents SDK (built by the registration service)."""

    def __init__(
        self,
        params: MCPServerStreamableHttpParams,
        *,
        tool_cache: ToolDefinitionCache | None = None,
        list_timeout: float | None = None,
        identity: TurnIdentity | None = None,
        **kwargs: Any,
    ) -> None:
        if "max_list_pages" not in kwargs and _SDK_CAPS_PAGES:
            kwargs["max_list_pages"] = MAX_LIST_PAGES
        super().__init__(params, **kwargs)
        self.identity = identity
        """The turn (tenant, user, agent) this server's headers were made for: it refuses any other."""
        # One total deadline for a whole tools/list (every page): the SDK bounds each request only.
        self._list_timeout = list_timeout
        # Without the SDK's own list cache the caller wants fresh lists: no lazy mode then.
        self._tool_cache = tool_cache if tool_cache is not None and self.cache_tools_list else None
        self._owner: asyncio.Task[None] | None = None
        self._release = asyncio.Event()
        self._connect_lock = asyncio.Lock()
        self._lazy = False
        self._abandoned = False
        self._cached: tuple[MCPTool, ...] | None = None
        self._published: list[MCPTool] | None = None  # the list last put in the cache

    @property
    def tool_meta_resolver(self) -> Any:
        """The SDK's ``_meta`` resolver hook, wrapped to note the tool call id for the span."""
        return self._meta_resolver

    @tool_meta_resolver.setter
    def tool_meta_resolver(self, resolver: Any) -> None:
        self._meta_resolver = noting_call_id(resolver)

    # -- what identifies this server's cache entry --------------------------------------------
    @property
    def _url(self) -> str:
        return str(self.params["url"])

    @property
    def _headers(self) -> Mapping[str, str]:
        return self.params.get("headers") or {}

    @property
    def is_connected(self) -> bool:
        """Whether an MCP session is open (a lazily registered server has none until first used)."""
        return self.session is not None

    # -- lifecycle ----------------------------------------------------------------------------
    async def connect(self) -> None:
        if self._tool_cache is not None and self._owner is None and self.session is None:
            cached = self._tool_cache.get(self._url, self._headers)
            if cached is not None:
                self._cached = cached
                # Seed the SDK's list cache: list_tools() and the required-argument check read it.
                self._tools_list = self._published = list(cached)  # from the cache: not put back
                self._cache_dirty = False
                self._lazy = True
                logger.debug("MCP server %r registered from cached tool definitions", self.name)
                return
        await self._connect_now()

    async def _connect_now(self) -> None:
        async with self._connect_lock:
            if self.session is not None:
                return
            loop = asyncio.get_running_loop()
            ready: asyncio.Future[None] = loop.create_future()
            self._release = asyncio.Event()
            owner = asyncio.create_task(self._own(ready), name=f"a365-mcp-server-{self.name}")
            self._owner = owner
            self._abandoned = False
            try:
                with mcp_session_span(self.name, self._url):
                    await asyncio.shield(ready)
            except BaseException:
                if not ready.done():  # we were cancelled while the owner is still connecting
                    self._abandoned = True
                    owner.cancel()
                await asyncio.wait({owner})
                self._owner = None
                if self._tool_cache is not None:
                    self._tool_cache.invalidate(self._url, self._headers)
                raise
            self._lazy = False  # only now: concurrent first calls wait on the lock above meanwhile

    def abort_connect(self) -> None:
        """Give up a connect in flight now (its caller was cancelled): the owner task is cancelled
        instead of waiting for the server to answer ``initialize``. A no-op once connected."""
        owner = self._owner
        if owner is not None and not owner.done() and self.session is None:
            self._abandoned = True
            owner.cancel()

    async def _own(self, ready: asyncio.Future[None]) -> None:
        """Connect, wait until released (or until the transport fails), then clean up: all in this task."""
        try:
            await super().connect()  # type: ignore[no-untyped-call]
        except BaseException as exc:
            if not ready.done():
                if isinstance(exc, asyncio.CancelledError) and self._abandoned:
                    ready.cancel()
                elif isinstance(exc, asyncio.CancelledError):
                    # The MCP v1 transport reports a failed request during connect (an HTTP error
                    # status, a dropped connection) by cancelling its host task: not our caller's
                    # cancellation, a connection failure.
                    ready.set_exception(
                        McpServerConnectionError(
                            f"MCP server {self.name!r} at {self._url} could not be connected: "
                            "the connection failed while initializing",
                            server_name=self.name,
                            url=self._url,
                        )
                    )
                else:
                    ready.set_exception(exc)
            return
        logger.debug("MCP server %r connected", self.name)
        try:
            if self._cached is not None and self.session is not None:
                prime_output_schemas(self.session, self._cached)
        except Exception as exc:  # never leave the caller waiting on `ready` (it would hang)
            ready.set_exception(exc)
            self._release.set()
        else:
            ready.set_result(None)
        try:
            await self._release.wait()
        except asyncio.CancelledError:
            # The transport's task group failed and cancelled its host (this task), or the
            # caller gave up on a connect: either way the transport is closed here, in its task.
            logger.debug("MCP server %r: connection ended early; closing it", self.name)
        try:
            await super().cleanup()  # type: ignore[no-untyped-call]
        except BaseException as exc:  # the SDK already logged it (credential-safe)
            logger.debug("MCP server %r: cleanup ended with %s", self.name, type(exc).__name__)
        else:
            logger.debug("MCP server %r closed", self.name)

    async def cleanup(self) -> None:
        owner = self._owner
        if owner is not None and owner is asyncio.current_task():
            await super().cleanup()  # type: ignore[no-untyped-call]  # the SDK's connect() cleaning up after a failure, in the owner
            return
        self._lazy = False
        self._owner = None
        if owner is None:
            await super().cleanup()  # type: ignore[no-untyped-call]  # nothing was connected: just resets the SDK's state
            return
        self._release.set()
        await asyncio.wait({owner})  # the owner never raises; the caller's cancellation does

    # -- requests -----------------------------------------------------------------------------
    async def _ensure_connected(self) -> None:
        if self.session is None and self._lazy:
            await self._connect_now()

    async def list_tools(
        self, run_context: RunContextWrapper[Any] | None = None, agent: Any | None = None
    ) -> list[MCPTool]:
        check_turn(self.identity, getattr(run_context, "context", None), what=f"MCP server {self.name!r}")
        if self.session is None and self._lazy and self._tools_list is not None:
            tools: Sequence[MCPTool] = self._tools_list
            if self.tool_filter is not None:
                tools = await self._apply_tool_filter(list(tools), run_context, agent)
            # Copies, as the SDK returns: callers must not be able to change the cache.
            return [tool.model_copy(deep=True) for tool in tools]
        deadline = asyncio.timeout(self._list_timeout)
        try:
            async with deadline:
                tools_list = await super().list_tools(run_context, agent)
        except TimeoutError:
            timed_out = True
        except Exception:
            # The deadline's cancellation can surface from the MCP transport as another error
            # (anyio ClosedResourceError/BrokenResourceError, seen under load): still the deadline.
            if not deadline.expired():
                raise
            timed_out = True
        else:
            timed_out = False
        if timed_out:  # raised outside the handler: no context chained to the SDK's internals
            raise McpServerConnectionError(
                f"MCP server {self.name!r} at {self._url} did not list its tools within {self._list_timeout} s",
                server_name=self.name,
                url=self._url,
            )
        fetched = self._tools_list
        # Only a list newly fetched from the server goes into the cache (the runner lists on every
        # model turn, mostly from the SDK's own cache).
        if (
            self._tool_cache is not None
            and fetched
            and not self._cache_dirty
            and fetched is not self._published
        ):
            self._tool_cache.put(self._url, self._headers, fetched)
            self._published = fetched
        return tools_list

    @traced_call_tool
    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None
    ) -> CallToolResult:
        check_turn(self.identity, what=f"MCP server {self.name!r}")
        await self._ensure_connected()
        try:
            return await super().call_tool(tool_name, arguments, meta)
        except Exception as exc:
            clean = scrubbed(exc)
            if clean is exc:
                raise
        # Raised outside the handler, so the original (with the server's text) is not its context.
        raise clean

    async def list_prompts(self) -> ListPromptsResult:
        await self._ensure_connected()
        return await super().list_prompts()

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None) -> GetPromptResult:
        await self._ensure_connected()
        return await super().get_prompt(name, arguments)

    async def list_resources(self, cursor: str | None = None) -> ListResourcesResult:
        await self._ensure_connected()
        return await super().list_resources(cursor)

    async def list_resource_templates(self, cursor: str | None = None) -> ListResourceTemplatesResult:
        await self._ensure_connected()
        return await super().list_resource_templates(cursor)

    async def read_resource(self, uri: str) -> ReadResourceResult:
        await self._ensure_connected()
        return await super().read_resource(uri)
