"""Discovery of MCP tool servers, their tokens, and threat-protection chat history."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self

import httpx
from mcp.types import Tool
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from agents_a365.runtime import (
    AgenticAuthenticationService,
    AuthorizationLike,
    OperationResult,
    TurnContextLike,
    decode_token_payload,
    resolve_agent_identity,
    validate_token,
)

from ._bounded_http import ResponseTooLargeError, parse_json, request_bounded
from ._cache import AsyncTTLCache
from ._deprecation import check_options
from ._manifest import parse_entries, read_manifest
from ._mcp_client import list_server_tools
from ._redact import scrub
from ._rtp_send import RtpSendSettings, send_chat_history_request
from ._scopes import is_v2_server, token_scope_for
from ._turn import TurnKey
from ._urls import path_segment, validate_server_name, validate_token_url
from .configuration import ToolingConfiguration
from .constants import CHAT_HISTORY_PATH
from .errors import TokenAcquisitionError, ToolServerDiscoveryError
from .headers import build_request_headers
from .mcp_http import shared_ssl_context
from .models import (
    ChatHistoryMessage,
    ChatMessageRequest,
    MCPServerConfig,
    ToolingManifestEntry,
    ToolOptions,
    as_utc,
)
from .tool_cache import ToolDefinitionCache

__all__ = ["McpToolServerConfigurationService"]

logger = logging.getLogger(__name__)


def _env_token_name(server_name: str) -> str:
    return "BEARER_TOKEN_" + re.sub(r"[^A-Z0-9]", "_", server_name.upper())


def _strip_bearer(token: str) -> str:
    token = token.strip()
    return token[7:].strip() if token[:7].lower() == "bearer " else token


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
    ) -> None:
        self.configuration = configuration or ToolingConfiguration()
        self._client = http_client
        self._owns_client = http_client is None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._rtp_semaphore: asyncio.Semaphore | None = None
        self._tokens: AsyncTTLCache[str] = AsyncTTLCache()
        self._discovery: AsyncTTLCache[tuple[ToolingManifestEntry, ...]] = AsyncTTLCache()
        self.tool_definitions = ToolDefinitionCache(max(self.configuration.tool_cache_ttl, 0.0))
        """MCP ``tools/list`` results per server and headers, for the extensions' warm turns."""

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def http_client(self) -> httpx.AsyncClient:
        loop = _running_loop()
        if self._client is not None and self._owns_client and loop is not self._client_loop:
            # Used from another event loop (a second asyncio.run): the old client's connections
            # belong to the old loop and cannot be used or closed from this one. Start afresh.
            logger.debug("HTTP client created on another event loop: replacing it")
            self._client = None
            self._rtp_semaphore = None
        if self._client is None:
            self._client_loop = loop
            cfg = self.configuration
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(cfg.request_timeout),
                limits=httpx.Limits(
                    max_connections=cfg.max_connections, max_keepalive_connections=cfg.max_connections
                ),
                follow_redirects=False,  # a redirect must never carry a token elsewhere
                verify=shared_ssl_context(),
            )
        return self._client

    async def aclose(self) -> None:
        # A client of another (maybe closed) event loop is dropped, not closed: closing it from
        # here would raise "Event loop is closed"; its loop's end closed its sockets already.
        if self._client is not None and self._owns_client and self._client_loop is _running_loop():
            await self._client.aclose()
        self._client = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def clear_caches(self) -> None:
        self._tokens.clear()
        self._discovery.clear()
        self.tool_definitions.clear()

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
        if turn_context is None:
            raise ValueError("turn_context is required")
        check_options(options, ToolOptions)
        orchestrator = options.orchestrator_name if options else None
        distribution = options.distribution if options else None
        cfg = self.configuration
        if cfg.use_tooling_manifest:
            logger.debug("discovery from the tooling manifest %s", cfg.manifest_path)
            manifest = await asyncio.to_thread(
                read_manifest, cfg.manifest_path, required=cfg.require_tooling_manifest
            )
            servers = [self._to_server(entry) for entry in manifest]
            return self._attach_dev_tokens(servers, turn_context, auth_token, orchestrator, distribution)

        key = TurnKey.of(turn_context)
        platform_scope = cfg.mcp_platform_authentication_scope
        if auth_token is None:
            auth_token = await self._exchange(
                authorization, auth_handler_name, turn_context, platform_scope, key, ("tooling gateway",)
            )
        auth_token = _strip_bearer(auth_token)
        validate_token(auth_token)
        agent_id = resolve_agent_identity(turn_context, auth_token)
        if not agent_id:
            raise ToolServerDiscoveryError(
                "cannot resolve the agent identity: the activity is not agentic and the token "
                "has no appid/azp claim"
            )
        entries = await self._discover(turn_context, auth_token, agent_id, orchestrator, key, distribution)
        servers = [self._to_server(entry) for entry in entries]

        # One exchange per distinct V2 scope, all at once; V1 servers share the platform token.
        by_scope: dict[str, list[MCPServerConfig]] = {}
        for server in servers:
            by_scope.setdefault(token_scope_for(server, platform_scope), []).append(server)
        tokens: dict[str, str] = {platform_scope: auth_token}
        v2_scopes = [scope for scope in by_scope if scope != platform_scope]
        if v2_scopes:
            names = {s: tuple(x.mcp_server_name for x in by_scope[s]) for s in v2_scopes}
            results = await asyncio.gather(
                *(
                    self._exchange(authorization, auth_handler_name, turn_context, s, key, names[s])
                    for s in v2_scopes
                )
            )
            tokens.update(zip(v2_scopes, results, strict=True))
        return [
            server.model_copy(
                update={
                    "headers": build_request_headers(
                        turn_context,
                        auth_token=tokens[token_scope_for(server, platform_scope)],
                        identity_token=auth_token,
                        orchestrator_name=orchestrator,
                        distribution=distribution,
                    )
                }
            )
            for server in servers
        ]

    def _to_server(self, entry: ToolingManifestEntry) -> MCPServerConfig:
        name = validate_server_name(entry.name or "")
        url = entry.url or (
            f"{self.configuration.mcp_platform_endpoint}/agents/servers/{path_segment(name)}/"
        )
        validate_token_url(
            url, allow_insecure_http=self.configuration.allow_insecure_http, what=f"MCP server {name!r}"
        )
        return MCPServerConfig(
            mcp_server_name=name,
            mcp_server_unique_name=entry.mcp_server_unique_name,
            url=url,
            audience=entry.audience,
            scope=entry.scope,
            publisher=entry.publisher,
        )

    def _attach_dev_tokens(
        self,
        servers: list[MCPServerConfig],
        turn_context: TurnContextLike,
        auth_token: str | None,
        orchestrator: str | None,
        distribution: str | None = None,
    ) -> list[MCPServerConfig]:
        shared = os.environ.get("BEARER_TOKEN", "").strip() or (auth_token or "").strip()
        result = []
        for server in servers:
            own = os.environ.get(_env_token_name(server.mcp_server_name), "").strip()
            if not own and shared and is_v2_server(server):
                logger.warning(
                    "MCP server %r has its own audience but %s is not set: using the shared "
                    "BEARER_TOKEN, which that server will likely reject",
                    server.mcp_server_name,
                    _env_token_name(server.mcp_server_name),
                )
            token = _strip_bearer(own or shared) or None
            headers = build_request_headers(
                turn_context,
                auth_token=token,
                identity_token=shared or token,
                orchestrator_name=orchestrator,
                distribution=distribution,
            )
            result.append(server.model_copy(update={"headers": headers}))
        return result

    async def _exchange(
        self,
        authorization: AuthorizationLike | None,
        auth_handler_name: str | None,
        turn_context: TurnContextLike,
        scope: str,
        key: TurnKey | None,
        servers: tuple[str, ...],
    ) -> str:
        what = ", ".join(servers)
        if authorization is None or not auth_handler_name:
            raise TokenAcquisitionError(
                f"a token for scope {scope!r} ({what}) is needed but no authorization and "
                "auth_handler_name were given",
                scope=scope,
                servers=servers,
            )

        exchanged = False

        async def create() -> tuple[str, float]:
            nonlocal exchanged
            exchanged = True
            logger.debug("token for scope %r (%s): cache miss, exchanging", scope, what)
            timeout = self.configuration.token_exchange_timeout
            try:
                async with asyncio.timeout(timeout):
                    token = await AgenticAuthenticationService.get_agentic_user_token(
                        authorization, auth_handler_name, turn_context, [scope]
                    )
            except TimeoutError as exc:
                raise TokenAcquisitionError(
                    f"token exchange for scope {scope!r} ({what}) did not answer within {timeout} s",
                    scope=scope,
                    servers=servers,
                ) from exc
            except Exception as exc:
                raise TokenAcquisitionError(
                    f"token exchange for scope {scope!r} ({what}) failed: {type(exc).__name__}: {scrub(exc)}",
                    scope=scope,
                    servers=servers,
                ) from exc
            if not token:
                raise TokenAcquisitionError(
                    f"token exchange for scope {scope!r} ({what}) returned no token",
                    scope=scope,
                    servers=servers,
                )
            return token, self._token_ttl(token)

        if key is None:
            return (await create())[0]
        token = await self._tokens.get_or_create(("token", key, auth_handler_name, scope), create)
        if not exchanged:
            logger.debug("token for scope %r (%s): cache hit", scope, what)
        return token

    def _token_ttl(self, token: str) -> float:
        try:
            exp = decode_token_payload(token).get("exp")
        except ValueError:
            return 0.0
        if not isinstance(exp, int | float):
            return 0.0
        return float(exp) - time.time() - self.configuration.token_expiry_skew

    async def _discover(
        self,
        turn_context: TurnContextLike,
        auth_token: str,
        agent_id: str,
        orchestrator: str | None,
        key: TurnKey | None,
        distribution: str | None = None,
    ) -> tuple[ToolingManifestEntry, ...]:
        cfg = self.configuration
        url = f"{cfg.mcp_platform_endpoint}/agents/v2/{path_segment(agent_id)}/mcpServers"
        validate_token_url(url, allow_insecure_http=cfg.allow_insecure_http, what="tooling gateway")

        fetched = False

        async def create() -> tuple[tuple[ToolingManifestEntry, ...], float]:
            nonlocal fetched
            fetched = True
            logger.debug("discovery for agent %s: cache miss, asking %s", agent_id, url)
            headers = build_request_headers(
                turn_context,
                auth_token=auth_token,
                orchestrator_name=orchestrator,
                correlation_id=True,
                distribution=distribution,
            )
            source = f"tooling gateway {url}"
            try:
                response = await request_bounded(
                    self.http_client,
                    "GET",
                    url,
                    headers=headers,
                    timeout=cfg.request_timeout,
                    max_bytes=cfg.max_gateway_response_bytes,
                    read_body=True,
                )
            except ResponseTooLargeError as exc:
                raise ToolServerDiscoveryError(f"{source} answered a {exc}", endpoint=url) from exc
            except (TimeoutError, httpx.TimeoutException) as exc:
                raise ToolServerDiscoveryError(
                    f"{source} did not answer within {cfg.request_timeout} s", endpoint=url
                ) from exc
            except httpx.HTTPError as exc:
                raise ToolServerDiscoveryError(
                    f"{source} is unreachable: {type(exc).__name__}: {scrub(exc)}", endpoint=url
                ) from exc
            if not response.is_success:
                raise ToolServerDiscoveryError(
                    f"{source} answered HTTP {response.status_code}",
                    endpoint=url,
                    status_code=response.status_code,
                )
            try:
                data = parse_json(response.content)
            except ValueError as exc:
                raise ToolServerDiscoveryError(f"{source} answered malformed JSON", endpoint=url) from exc
            entries = tuple(parse_entries(data, source=source, endpoint=url))
            logger.debug(
                "discovered %d MCP server(s) for agent %s through %s", len(entries), agent_id, source
            )
            return entries, cfg.discovery_cache_ttl

        if key is None:
            return (await create())[0]
        entries = await self._discovery.get_or_create(("discovery", url, key), create)
        if not fetched:
            logger.debug("discovery for agent %s: cache hit (%d server(s))", agent_id, len(entries))
        return entries

    # -- MCP -------------------------------------------------------------------------------
    async def get_mcp_client_tools(self, server_name: str, server_config: MCPServerConfig) -> list[Tool]:
        """Connect to one server with the official MCP client and list its tools."""
        if not server_name:
            raise ValueError("server_name is required")
        if server_config is None:
            raise ValueError("server_config is required")
        validate_token_url(
            server_config.url,
            allow_insecure_http=self.configuration.allow_insecure_http,
            what=f"MCP server {server_name!r}",
        )
        return await list_server_tools(server_name, server_config, timeout=self.configuration.request_timeout)

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
        honouring ``Retry-After``, within one deadline (``chat_history_timeout``). Failures
        come back as a failed :class:`OperationResult`; only bad arguments raise ``ValueError``
        (missing values) or ``TypeError`` (wrong types).
        """
        check_options(options, ToolOptions)
        request = _chat_message_request(turn_context, chat_history_messages)
        body = _serialize(request)
        headers = build_request_headers(
            turn_context,
            orchestrator_name=options.orchestrator_name if options else None,
            distribution=options.distribution if options else None,
        )
        headers["Content-Type"] = "application/json"
        return await self._post_with_retries(
            f"{self.configuration.mcp_platform_endpoint}{CHAT_HISTORY_PATH}", body, headers
        )

    def _rtp_slots(self) -> asyncio.Semaphore:
        # Bounded in-flight sends: under a burst, waiting here is O(1) and fair, while a
        # thousand requests queued inside the connection pool are rescanned on every release
        # and starve the gateway calls that share it (scripts/load.py, scripts/bench).
        if self._rtp_semaphore is None:
            self._rtp_semaphore = asyncio.Semaphore(max(1, self.configuration.chat_history_concurrency))
        return self._rtp_semaphore

    async def _post_with_retries(self, url: str, body: bytes, headers: dict[str, str]) -> OperationResult:
        cfg = self.configuration
        settings = RtpSendSettings(
            wire_timeout=cfg.chat_history_timeout,
            queue_timeout=cfg.chat_history_queue_timeout,
            max_attempts=cfg.chat_history_max_attempts,
            max_response_bytes=cfg.max_rtp_response_bytes,
        )
        return await send_chat_history_request(
            self.http_client, url, body, headers, settings, self._rtp_slots()
        )


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _serialize(request: ChatMessageRequest) -> bytes:
    try:
        return request.model_dump_json(by_alias=True).encode()
    except PydanticSerializationError:
        # Lone surrogates (e.g. from JSON-decoded history) are not encodable as UTF-8:
        # send U+FFFD in their place rather than lose the whole record.
        data = request.model_dump(by_alias=True, mode="json")  # timestamps as "...Z" strings
        return json.dumps(_replace_surrogates(data), ensure_ascii=False).encode()


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {k: _replace_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_surrogates(v) for v in value]
    return value


def _required_text(value: Any, message: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(message)
    return value


def _chat_message_request(
    turn_context: TurnContextLike, messages: Sequence[ChatHistoryMessage]
) -> ChatMessageRequest:
    if turn_context is None:
        raise ValueError("turn_context is required")
    if messages is None:
        raise ValueError("chat_history_messages is required")
    if not isinstance(messages, list | tuple):
        raise TypeError(
            f"chat_history_messages must be a list of ChatHistoryMessage, got {type(messages).__name__}"
        )
    activity = getattr(turn_context, "activity", None)
    if activity is None:
        raise ValueError("turn_context.activity is required")
    conversation = getattr(activity, "conversation", None)
    conversation_id = _required_text(
        getattr(conversation, "id", None), "turn_context.activity.conversation.id is required"
    )
    message_id = _required_text(getattr(activity, "id", None), "turn_context.activity.id is required")
    user_message = _required_text(getattr(activity, "text", None), "turn_context.activity.text is required")
    # Messages made with model_construct skip the UTC normalisation of validation: do it here.
    history = [
        m.model_copy(update={"timestamp": as_utc(m.timestamp)})
        if type(m) is ChatHistoryMessage
        and isinstance(m.timestamp, datetime)
        and m.timestamp.tzinfo is not UTC
        else m
        for m in messages
    ]
    if all(type(m) is ChatHistoryMessage for m in history):
        # Already validated models: skip re-validation on the hot path.
        return ChatMessageRequest.model_construct(
            conversation_id=conversation_id,
            message_id=message_id,
            user_message=user_message,
            chat_history=history,
        )
    try:
        return ChatMessageRequest(
            conversation_id=conversation_id,
            message_id=message_id,
            user_message=user_message,
            chat_history=history,
        )
    except ValidationError as exc:
        raise ValueError(f"invalid chat history message: {exc.errors()[0]['msg']}") from exc
