"""The tooling core's facade: MCP server discovery, MCP listing and threat-protection chat history.

The work lives in ``_discovery.py`` (servers and tokens) and ``_threat_protection.py`` (the RTP send); this
class owns what they share (settings, one HTTP client per event loop, the tool-definition cache).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, Self

import httpx
from mcp.types import Tool

from agents_a365.runtime import AuthorizationLike, OperationResult, TurnContextLike, require

from ._discovery import Discovery
from ._part import Shared
from ._second_level import CacheStore, second_level
from ._sessions import McpSessionPool
from ._telemetry_hooks import SendTelemetry, mcp_session_span
from ._threat_protection import ThreatProtection
from ._tool_cache import ToolDefinitionCache
from ._transport import core_client
from ._turn import read_turn
from ._turn_scope import TurnScope
from ._urls import NAME, validate_token_url
from .configuration import ToolingConfiguration
from .mcp_http import shared_ssl_context
from .models import ChatHistoryMessage, MCPServerConfig, ToolOptions

__all__ = ["McpToolServerConfigurationService"]

logger = logging.getLogger(__name__)

# Positional arguments of list_tool_servers: ours, or Microsoft's when the first is a string (an agent id).
_ORDER = ("turn_context", "authorization", "auth_handler_name", "auth_token", "options")
_MICROSOFT_ORDER = (
    "agentic_app_id",
    "auth_token",
    "options",
    "authorization",
    "auth_handler_name",
    "turn_context",
)


class McpToolServerConfigurationService:
    """Finds the MCP servers configured for an agent and sends chat history to threat protection.

    Owns one ``httpx.AsyncClient`` (connection reuse); use it as an async context manager
    or call :meth:`aclose`. Keep one instance for the life of the process: discovery results
    and tokens are cached per tenant, agent, user and scope (tokens until their ``exp``
    minus ``token_expiry_skew``), so warm turns skip the gateway and the token exchange.
    """

    def __init__(
        self,
        configuration: ToolingConfiguration | None = None,
        *,
        http_client: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.monotonic,
        logger: logging.Logger | None = None,
        cache_store: CacheStore | None = None,
    ) -> None:
        # ``logger``: Microsoft's parameter, accepted; this SDK logs to the ``agents_a365.*`` loggers.
        if isinstance(configuration, logging.Logger):  # Microsoft's positional form: (logger)
            configuration = None
        if not callable(clock):
            raise TypeError("clock must be a callable returning seconds (like time.monotonic)")
        self.configuration = configuration or ToolingConfiguration()
        self.clock = clock
        """The monotonic clock of every cache's TTL (tests pass a fake one; never sleep for time to pass)."""
        self._client = http_client
        self._owns_client = http_client is None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._abandoned: list[httpx.AsyncClient] = []
        self._pool: McpSessionPool | None = None
        self._pool_loop: asyncio.AbstractEventLoop | None = None
        # The parts get the settings, the clock and the client getter (one client per event loop).
        # The caches' second level, shared with the host's other replicas: cache_store, else Redis at
        # cache_redis_url, else none (README "Running several replicas").
        self._second_level = second_level(self.configuration, cache_store, clock)
        shared = Shared(self.configuration, clock, lambda: self.http_client, self._second_level)
        self._discovery = Discovery(shared)
        self._threat_protection = ThreatProtection(shared)
        self.tool_definitions = ToolDefinitionCache(
            lambda: max(self.configuration.tool_cache_ttl, 0.0),
            max_entries=lambda: self.configuration.cache_max_entries,
            clock=clock,
            second_level=self._second_level,
        )
        """MCP ``tools/list`` results per server and headers, for the extensions' warm turns. Its TTL is
        ``tool_cache_ttl`` as read at each use (a change applies to the next turn); a cache of your own
        assigned here keeps its own TTL."""

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def http_client(self) -> httpx.AsyncClient:
        loop = _running_loop()
        if self._client is not None and self._owns_client and loop is not self._client_loop:
            # Used from another event loop (a second asyncio.run): the old client's connections
            # belong to the old loop and cannot be used or closed from this one. Start afresh.
            logger.debug("HTTP client created on another event loop: replacing it")
            # Kept, not closed (its loop is gone) nor dropped here: collected with the service, its
            # unclosed-session warning goes with it rather than into whatever runs now.
            self._abandoned = [*self._abandoned[-3:], self._client]
            self._client = None
        if self._client is None:
            self._client_loop = loop
            # aiohttp's pool under httpx's API: httpcore's pool scans cost more CPU than the send.
            self._client = core_client(
                verify=shared_ssl_context(),
                max_connections=self.configuration.max_connections,
                timeout=self.configuration.request_timeout,
            )
        return self._client

    async def aclose(self) -> None:
        """Stop accepting threat-protection sends, let those under way finish within
        ``chat_history_drain_timeout`` (the rest end with a failed result naming the record), then
        close the HTTP client. Sends after this return a failed result: the service is closed."""
        await self._threat_protection.drain()
        refreshes = self._discovery.entries.refreshes() + self.tool_definitions.refreshes()
        await asyncio.gather(*refreshes, return_exceptions=True)  # cancelled: nobody waits for them
        pool, self._pool = self._pool, None
        if pool is not None and self._pool_loop is _running_loop():
            await pool.aclose()  # a pool of another (closed) loop is dropped: its sessions ended with it
        # A client of another (maybe closed) event loop is kept, not closed: closing it from here would raise
        # "Event loop is closed"; its loop's end closed its sockets already (see http_client). The caller's
        # own client is the caller's to close, and stays this service's client.
        if self._client is not None and self._owns_client and self._client_loop is _running_loop():
            await self._client.aclose()
            self._client = None
        if self._second_level is not None:
            await self._second_level.aclose()  # a store of its own (cache_redis_url); yours stays open

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    def clear_caches(self) -> None:
        for cache in (self._discovery.tokens.cache, self._discovery.entries, self.tool_definitions):
            cache.clear()

    def __repr__(self) -> str:
        return f"McpToolServerConfigurationService({self.configuration!r})"

    # -- discovery -------------------------------------------------------------------------
    async def list_tool_servers(
        self,
        *args: Any,
        turn_context: TurnContextLike | None = None,
        authorization: AuthorizationLike | None = None,
        auth_handler_name: str | None = None,
        auth_token: str | None = None,
        options: ToolOptions | None = None,
        agentic_app_id: str | None = None,
    ) -> list[MCPServerConfig]:
        """The agent's MCP servers, each with the headers to connect with.

        Positional arguments: ``(turn_context, authorization, auth_handler_name, auth_token, options)``, or
        Microsoft's order ``(agentic_app_id, auth_token, options, authorization, auth_handler_name,
        turn_context)`` when the first is a string. ``agentic_app_id`` overrides the agent id resolved from
        the turn (production). Without a turn (Microsoft's ``list_tool_servers(agentic_app_id, auth_token)``),
        the servers carry the caller's token (a server of its own audience gets none: no exchange is possible)
        and no identity.

        Development (``use_tooling_manifest``): servers from ``ToolingManifest.json``,
        tokens from ``BEARER_TOKEN_<NAME>`` then ``BEARER_TOKEN``. Production: a token for
        the platform scope (exchanged when ``auth_token`` is not given), discovery through
        the tooling gateway, then one token per distinct V2 scope, exchanged concurrently.
        """
        # The keyword arguments (all of them: locals() holds nothing else yet), then the positional ones.
        given = {name: value for name, value in locals().items() if name not in {"self", "args"}}
        order = _MICROSOFT_ORDER if args and isinstance(args[0], str) else _ORDER
        if len(args) > len(order):
            raise TypeError(f"list_tool_servers() takes at most {len(order)} positional arguments")
        for name, value in zip(order, args, strict=False):
            if given[name] is not None:
                raise TypeError(f"list_tool_servers() got two values for {name!r}")
            given[name] = value
        app_id = given.pop("agentic_app_id") or None
        if app_id is not None and not (isinstance(app_id, str) and NAME.fullmatch(app_id)):
            raise ValueError("agentic_app_id must be an agent id: 1-128 letters, digits, '.', '_' or '-'")
        if given["turn_context"] is None and not (
            given["auth_token"] or self.configuration.use_tooling_manifest
        ):
            raise ValueError(
                "turn_context is required (with Microsoft's list_tool_servers(agentic_app_id, auth_token) "
                "form, pass auth_token, or add turn_context=context, authorization=auth, auth_handler_name=...)"
            )
        turn = read_turn(given.pop("turn_context"))  # the one read of the turn: its parts get this value
        return await self._discovery.list_tool_servers(turn, **given, agent_id=app_id)

    def turn_scope(
        self,
        turn_context: TurnContextLike,
        authorization: AuthorizationLike | None = None,
        auth_handler_name: str | None = None,
        auth_token: str | None = None,
        options: ToolOptions | None = None,
    ) -> TurnScope:
        """The turn ``turn_context`` is, for everything run inside ``with service.turn_scope(...):`` (and the
        tasks started there): the MCP requests of this SDK's tools and servers are made for this turn's
        user, with that user's token for each server's audience. See :class:`TurnScope`."""
        return TurnScope(self, turn_context, authorization, auth_handler_name, auth_token, options)

    # -- MCP -------------------------------------------------------------------------------
    @property
    def session_pool(self) -> McpSessionPool:
        """The MCP sessions of this service, shared by listings, both extensions' tool calls and turns.

        One session per server URL and request headers (so per user token), opened by its first request
        and reused by later ones, in this turn and the next, until it is idle for
        ``mcp_session_idle_timeout`` (``0``: closed as soon as its request returns), its token expires,
        ``max_mcp_sessions`` are open (the least recently used idle one goes) or :meth:`aclose`. A turn
        holds sessions only while its requests run: it leaves no task or connection of its own behind.
        One pool per event loop; settings are read at each use."""
        loop = _running_loop()
        if self._pool is None or self._pool_loop is not loop:
            self._pool, self._pool_loop = McpSessionPool(clock=self.clock, name="a365-mcp-pooled"), loop
        cfg = self.configuration
        pool = self._pool
        pool.timeout, pool.idle_timeout = cfg.request_timeout, max(cfg.mcp_session_idle_timeout, 0.0)
        pool.max_sessions, pool.max_response_bytes = cfg.max_mcp_sessions, cfg.max_mcp_response_bytes
        pool.token_expiry_skew = cfg.token_expiry_skew
        pool.breaker_threshold, pool.breaker_cooldown = cfg.mcp_breaker_threshold, cfg.mcp_breaker_cooldown
        pool.open_concurrency = cfg.mcp_session_open_concurrency
        return pool

    async def get_mcp_client_tools(self, server_name: str, server_config: MCPServerConfig) -> list[Tool]:
        """List one server's tools (every page), always from the server.

        Over the official MCP client, on the server's pooled session (:attr:`session_pool`: the session
        that lists is the one the turn's tool calls use), within ``request_timeout`` in total, each answer
        capped at ``max_mcp_response_bytes``; ``McpServerConnectionError`` naming the server when it
        cannot be listed.
        """
        if not server_name:
            raise ValueError("server_name is required")
        require(server_config, "server_config")
        validate_token_url(server_config.url, f"MCP server {server_name!r}", self.configuration)
        # One CLIENT span ``tools/list`` per listing (server, address, tool count, outcome).
        with mcp_session_span(server_name, str(server_config.url), method="tools/list") as span:
            tools = await self.session_pool.list_tools(server_config)
            span.set("a365.mcp.tool_count", len(tools))
        return tools

    async def list_mcp_tools(self, server: MCPServerConfig) -> list[Tool]:
        """``server``'s tools from :attr:`tool_definitions` when fresh, else listed and cached.

        The cache key is the server's URL and all its request headers (so its token): one user's
        entry never serves another; concurrent callers share one listing. What extensions call at
        registration; failed listings are not cached.
        """
        if not isinstance(server, MCPServerConfig):
            raise TypeError("server must be an MCPServerConfig")
        # tool_definitions' TTL is the settings' as read now: a change applies from the next listing.
        tools = await self.tool_definitions.get_or_list(
            server.url, server.headers, lambda: self.get_mcp_client_tools(server.mcp_server_name, server)
        )
        return list(tools)

    # -- threat protection -----------------------------------------------------------------
    async def send_chat_history(
        self,
        turn_context: TurnContextLike,
        chat_history_messages: Sequence[ChatHistoryMessage],
        options: ToolOptions | None = None,
    ) -> OperationResult:
        """POST the conversation to real-time threat protection.

        Always sends, even an empty list (the platform registers the user message from it).
        Retries 408/425/429/5xx and connection errors with jittered exponential backoff,
        honouring ``Retry-After``; ``chat_history_timeout`` bounds the time on the wire and
        ``chat_history_queue_timeout`` the wait for a send slot. Failures (also a send after
        :meth:`aclose`, or one still under way when its drain deadline passes) come back as a failed
        :class:`OperationResult` whose ``ChatHistorySendError`` names the record (``conversation_id``,
        ``message_id``); only bad arguments raise ``ValueError`` (missing values) or ``TypeError``
        (wrong types).
        """
        turn = read_turn(turn_context)  # the one read of the turn: its parts get this value
        send = SendTelemetry(turn)  # one span per send, its duration and outcome (delivered, or the cause)
        with send.span:
            result = await self._threat_protection.send_chat_history(
                turn, chat_history_messages, options, send
            )
            send.finish(result)
            return result


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
