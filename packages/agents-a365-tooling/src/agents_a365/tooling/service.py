"""The tooling core's facade: MCP server discovery, MCP listing and threat-protection chat history.

The work lives in ``_discovery.py`` (servers and tokens) and ``_threat_protection.py`` (the RTP send); this
class owns what they share (settings, one HTTP client per event loop, the tool-definition cache).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Self

import httpx
from mcp.types import Tool

from agents_a365.runtime import AuthorizationLike, OperationResult, TurnContextLike

from ._discovery import Discovery
from ._mcp_client import list_server_tools
from ._threat_protection import ThreatProtection
from ._transport import CoreClient, CoreTransport
from ._urls import validate_token_url
from .configuration import ToolingConfiguration
from .mcp_http import shared_ssl_context
from .models import ChatHistoryMessage, MCPServerConfig, ToolOptions
from .tool_cache import ToolDefinitionCache

__all__ = ["McpToolServerConfigurationService"]

logger = logging.getLogger(__name__)


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
    ) -> None:
        if not callable(clock):
            raise TypeError("clock must be a callable returning seconds (like time.monotonic)")
        self.configuration = configuration or ToolingConfiguration()
        self.clock = clock
        """The monotonic clock of every cache's TTL (tests pass a fake one; never sleep for time to pass)."""
        self._client = http_client
        self._owns_client = http_client is None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._abandoned: list[httpx.AsyncClient] = []
        self._discovery = Discovery(self)
        self._threat_protection = ThreatProtection(self)
        self._tool_definitions = ToolDefinitionCache(max(self.configuration.tool_cache_ttl, 0.0), clock=clock)
        self._tool_cache_ttl_from_settings = True

    @property
    def tool_definitions(self) -> ToolDefinitionCache:
        """MCP ``tools/list`` results per server and headers, for the extensions' warm turns. Its TTL is
        ``tool_cache_ttl`` as read at each use (a change applies to the next turn), unless you assigned a
        cache of your own: that one keeps its TTL."""
        if self._tool_cache_ttl_from_settings:
            self._tool_definitions.ttl = max(self.configuration.tool_cache_ttl, 0.0)
        return self._tool_definitions

    @tool_definitions.setter
    def tool_definitions(self, cache: ToolDefinitionCache) -> None:
        self._tool_definitions = cache
        self._tool_cache_ttl_from_settings = False

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
            self._threat_protection.reset()
        if self._client is None:
            self._client_loop = loop
            cfg = self.configuration
            limits = httpx.Limits(
                max_connections=cfg.max_connections,
                max_keepalive_connections=cfg.max_connections,
                # Under the 5 s idle timeout of Node's and uvicorn's servers: we drop an idle connection
                # before the server does, instead of racing its close with our next request.
                keepalive_expiry=4.0,
            )
            self._client = CoreClient(
                # aiohttp's pool under httpx's API: httpcore's pool scans cost more CPU than the send.
                transport=CoreTransport(verify=shared_ssl_context(), limits=limits),
                timeout=httpx.Timeout(cfg.request_timeout),
                limits=limits,
                follow_redirects=False,  # a redirect must never carry a token elsewhere
                verify=shared_ssl_context(),
            )
        return self._client

    async def aclose(self) -> None:
        """Stop accepting threat-protection sends, let those under way finish within
        ``chat_history_drain_timeout`` (the rest end with a failed result naming the record), then
        close the HTTP client. Sends after this return a failed result: the service is closed."""
        if self._client_loop is not _running_loop():
            self._threat_protection.reset()  # sends of another event loop cannot be awaited from this one
        await self._threat_protection.drain(self.clock)
        # A client of another (maybe closed) event loop is dropped, not closed: closing it from
        # here would raise "Event loop is closed"; its loop's end closed its sockets already.
        if self._client is not None and self._owns_client:
            if self._client_loop is _running_loop():
                await self._client.aclose()
            else:  # kept until the service is collected (see http_client)
                self._abandoned = [*self._abandoned[-3:], self._client]
        self._client = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def clear_caches(self) -> None:
        self._discovery.clear()
        self._tool_definitions.clear()

    def __repr__(self) -> str:
        return f"McpToolServerConfigurationService({self.configuration!r})"

    # -- discovery -------------------------------------------------------------------------
    async def list_tool_servers(
        self,
        turn_context: TurnContextLike,
        authorization: AuthorizationLike | None,
        auth_handler_name: str | None,
        auth_token: str | None = None,
        options: ToolOptions | None = None,
    ) -> list[MCPServerConfig]:
        """The agent's MCP servers, each with the headers to connect with.

        Development (``use_tooling_manifest``): servers from ``ToolingManifest.json``,
        tokens from ``BEARER_TOKEN_<NAME>`` then ``BEARER_TOKEN``. Production: a token for
        the platform scope (exchanged when ``auth_token`` is not given), discovery through
        the tooling gateway, then one token per distinct V2 scope, exchanged concurrently.
        """
        return await self._discovery.list_tool_servers(
            turn_context, authorization, auth_handler_name, auth_token, options
        )

    # -- MCP -------------------------------------------------------------------------------
    async def get_mcp_client_tools(self, server_name: str, server_config: MCPServerConfig) -> list[Tool]:
        """List one server's tools (every page), always from the server.

        Within ``request_timeout`` in total, each answer capped at ``max_mcp_response_bytes``, over
        this service's pooled HTTP client; ``McpServerConnectionError`` naming the server when it
        cannot be listed.
        """
        if not server_name:
            raise ValueError("server_name is required")
        if server_config is None:
            raise ValueError("server_config is required")
        validate_token_url(
            server_config.url,
            allow_insecure_http=self.configuration.allow_insecure_http,
            what=f"MCP server {server_name!r}",
        )
        cfg = self.configuration
        return await list_server_tools(
            server_name,
            server_config,
            client=self.http_client,
            timeout=cfg.request_timeout,
            max_bytes=cfg.max_mcp_response_bytes,
        )

    async def list_mcp_tools(self, server: MCPServerConfig) -> list[Tool]:
        """``server``'s tools from :attr:`tool_definitions` when fresh, else listed and cached.

        The cache key is the server's URL and all its request headers (so its token): one user's
        entry never serves another. What extensions call at registration; failed listings are not cached.
        """
        if not isinstance(server, MCPServerConfig):
            raise TypeError("server must be an MCPServerConfig")
        cached = self.tool_definitions.get(server.url, server.headers)
        if cached is not None:
            return list(cached)
        tools = await self.get_mcp_client_tools(server.mcp_server_name, server)
        self.tool_definitions.put(server.url, server.headers, tools)
        return tools

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
        return await self._threat_protection.send_chat_history(turn_context, chat_history_messages, options)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
