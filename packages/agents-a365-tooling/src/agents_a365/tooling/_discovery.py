"""Discovery: the agent's MCP servers (manifest or tooling gateway) and a token per audience.

Bearer stripping and validation of a caller's or exchanged token happen here, once, on every path (only
``BEARER_TOKEN*`` development values may be opaque); tokens and gateway answers are
cached per tenant, agent, user and scope with single flight (``_cache.py``).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import re
from collections.abc import Callable, Iterable
from typing import Any

import httpx

from agents_a365.runtime import AuthorizationLike, get_app_id_from_token

from ._bounded_http import ResponseTooLargeError, request_bounded
from ._cache import AsyncTTLCache
from ._deprecation import check_options
from ._manifest import entries_stepwise, read_manifest
from ._part import ServicePart, Shared
from ._redact import scrub
from ._spans import identity_attributes, operation, tracing
from ._stepwise import Steps, json_value, mapped, run_cooperatively
from ._tokens import Tokens, strip_bearer, usable_token
from ._tool_names import unique_server_steps
from ._turn import Turn, TurnKey
from ._urls import path_segment, validate_server_name, validate_token_url
from .constants import PLATFORM_APP_ID
from .errors import ToolServerDiscoveryError
from .headers import request_headers
from .models import MCPServerConfig, ToolOptions

logger = logging.getLogger("agents_a365.tooling.service")  # the name users already filter on

_Headers = Callable[..., dict[str, str]]  # request_headers for this turn and options
# A server's fields but its headers and identity: a dict of strings, which the collector does not track (a
# gateway lists thousands; tracked objects kept per server add up to a full collection: docs/performance.md).
_Server = dict[str, Any]
_Listed = tuple[_Server, dict[str, str]]  # a server and the headers to connect with
_FIELDS = set(MCPServerConfig.model_fields)  # every field set: one set shared by the servers, never changed


_V1_AUDIENCES = frozenset({PLATFORM_APP_ID, f"api://{PLATFORM_APP_ID}", "default"})


def _env_token_name(server_name: str) -> str:
    return "BEARER_TOKEN_" + re.sub(r"[^A-Z0-9]", "_", server_name.upper())


def is_v2_server(server: _Server) -> bool:
    return server["audience"] is not None and server["audience"].strip().lower() not in _V1_AUDIENCES


def token_scope_for(platform_scope: str, server: _Server) -> str:
    """Which token a server needs: ``{audience}/{scope}`` or ``{audience}/.default`` for a V2 server (its own
    audience), the platform scope for V1 (they share the platform token)."""
    if not is_v2_server(server):
        return platform_scope
    audience = (server["audience"] or "").strip().rstrip("/")
    scope = (server["scope"] or "").strip().lstrip("/")
    return f"{audience}/{scope or '.default'}"


class Discovery(ServicePart):
    """``list_tool_servers`` and what it needs; owned by :class:`McpToolServerConfigurationService`."""

    def __init__(self, shared: Shared) -> None:
        super().__init__(shared)
        self.tokens = Tokens(shared)
        self.entries: AsyncTTLCache[tuple[_Server, ...]] = shared.cache("discovery")

    async def list_tool_servers(
        self,
        turn: Turn,
        authorization: AuthorizationLike | None,
        auth_handler_name: str | None,
        auth_token: str | None = None,
        options: ToolOptions | None = None,
        agent_id: str | None = None,
    ) -> list[MCPServerConfig]:
        """See :meth:`McpToolServerConfigurationService.list_tool_servers` (``turn``: its turn, read once)."""
        manifest = self.configuration.use_tooling_manifest
        source = "manifest" if manifest else "gateway"
        attributes = (
            {"a365.discovery.source": source, **identity_attributes(turn.identity)} if tracing() else None
        )
        with operation(
            "a365.tooling.discovery",
            attributes=attributes,
            histogram="discovery",
            metric_attributes={"a365.discovery.source": source},
        ) as span:
            check_options(options, ToolOptions)
            if auth_token is not None and not (manifest and "." not in strip_bearer(auth_token)):
                # A token the caller passes fails fast when malformed or expired, on every path; in
                # development an opaque one (not a JWT) is sent as given.
                auth_token = usable_token(auth_token)[0]
            elif auth_token is not None:
                logger.debug("auth_token is not a JWT: sent as given, no expiry known")
                auth_token = strip_bearer(auth_token)
            headers = functools.partial(request_headers, turn, options)
            if manifest:
                listed = await self._from_manifest(auth_token, headers)
            else:
                listed = await self._from_gateway(
                    turn, authorization, auth_handler_name, auth_token, agent_id, headers
                )
            # Each server stamped with its headers and the turn's identity (what the extensions' turn guard
            # checks); the same URL under two names is one server, registered once. In steps: a gateway may
            # list thousands of servers, and other conversations share this loop.
            stamp = functools.partial(MCPServerConfig.model_construct, _FIELDS, identity=turn.guarded)
            stamped = (stamp(**s, headers=dict(h)) for s, h in listed)
            servers = await run_cooperatively(unique_server_steps(stamped))  # stamped one per step
            span.set("a365.discovery.server_count", len(servers))
            return servers

    async def _from_manifest(self, auth_token: str | None, headers: _Headers) -> Iterable[_Listed]:
        cfg = self.configuration
        logger.debug("discovery from the tooling manifest %s", cfg.manifest_path)
        manifest = await asyncio.to_thread(
            read_manifest, cfg.manifest_path, required=cfg.require_tooling_manifest
        )
        shared = os.environ.get("BEARER_TOKEN", "").strip() or (auth_token or "").strip()
        listed = []
        for server in map(self._to_server, manifest.items()):
            own = os.environ.get(_env_token_name(server["mcp_server_name"]), "").strip()
            if not own and shared and is_v2_server(server):
                logger.warning(
                    "MCP server %r has its own audience but %s is not set: using the shared "
                    "BEARER_TOKEN, which that server will likely reject",
                    server["mcp_server_name"],
                    _env_token_name(server["mcp_server_name"]),
                )
            token = strip_bearer(own or shared) or None
            listed.append((server, headers(auth_token=token, identity_token=shared or token)))
        return listed

    async def _from_gateway(
        self,
        turn: Turn,
        authorization: AuthorizationLike | None,
        auth_handler_name: str | None,
        auth_token: str | None,
        agent_id: str | None,
        headers: _Headers,
    ) -> Iterable[_Listed]:
        platform_scope = self.configuration.mcp_platform_authentication_scope
        exchange = functools.partial(self.tokens.exchange, authorization, auth_handler_name, turn)
        if auth_token is None:
            auth_token = await exchange(platform_scope, ("tooling gateway",))
        # The gateway's agent id: the agentic instance id, else the token's app id (appid, then azp).
        agent_id = agent_id or turn.gateway_agent_id or get_app_id_from_token(auth_token)
        if not agent_id:
            raise ToolServerDiscoveryError(
                "cannot resolve the agent identity: the activity is not agentic and the token "
                "has no appid/azp claim"
            )
        listed = await self._discover(auth_token, agent_id, turn.key, headers)

        # One exchange per distinct V2 scope, all at once; V1 servers share the platform token.
        scopes = await run_cooperatively(mapped(listed, functools.partial(token_scope_for, platform_scope)))
        names: dict[str, list[str]] = {}  # server names per scope, in order; one append each: no steps needed
        for server, scope in zip(listed, scopes, strict=True):
            names.setdefault(scope, []).append(server["mcp_server_name"])
        v2_scopes = [scope for scope in names if scope != platform_scope]
        if turn.context is None and v2_scopes:  # turnless (Microsoft's form): nothing to exchange with
            unsent = [name for scope in v2_scopes for name in names[scope]]
            logger.warning("no turn: MCP servers %s (own audience) get no token", unsent)
        exchanges = (exchange(scope, tuple(names[scope])) for scope in v2_scopes if turn.context is not None)
        v2_tokens: list[str | None] = [*await asyncio.gather(*exchanges)] or [None] * len(v2_scopes)
        tokens = {**dict(zip(v2_scopes, v2_tokens, strict=True)), platform_scope: auth_token}
        # Built once per token, not once per server.
        by_scope = {scope: headers(auth_token=tokens[scope], identity_token=auth_token) for scope in names}
        return zip(listed, map(by_scope.__getitem__, scopes), strict=True)  # a pair per step, none kept

    def _servers_from(self, content: bytes, source: str, url: str) -> Steps[tuple[_Server, ...]]:
        """A gateway answer as servers: parsed, validated and converted once (in steps), then cached."""
        try:
            data = yield from json_value(content)
        except ValueError as exc:
            raise ToolServerDiscoveryError(f"{source} answered malformed JSON", endpoint=url) from exc
        entries = yield from entries_stepwise(data, source=source, endpoint=url)
        return tuple((yield from mapped(entries.items(), self._to_server)))

    def _to_server(self, named: tuple[str, _Server]) -> _Server:
        """An entry's fields (:func:`entries_stepwise`), by its name, as a server's: its name and URL resolved."""
        name, entry = validate_server_name(named[0]), named[1]  # URL-safe: letters, digits, '.', '_', '-'
        url = entry["url"] or f"{self.configuration.mcp_platform_endpoint}/agents/servers/{name}/"
        validate_token_url(url, f"MCP server {name!r}", self.configuration)
        unique_name = entry["mcp_server_unique_name"] or name  # as Microsoft's SDK
        # The entry's fields are the server's (audience, scope, publisher), with its names and URL resolved.
        return {**entry, "mcp_server_name": name, "mcp_server_unique_name": unique_name, "url": url}

    async def _discover(
        self, auth_token: str, agent_id: str, key: TurnKey | None, headers: _Headers
    ) -> tuple[_Server, ...]:
        cfg = self.configuration
        url = f"{cfg.mcp_platform_endpoint}/agents/v2/{path_segment(agent_id)}/mcpServers"
        validate_token_url(url, "tooling gateway", cfg)
        source = f"tooling gateway {url}"

        def failure(reason: str, status_code: int | None = None) -> ToolServerDiscoveryError:
            return ToolServerDiscoveryError(f"{source} {reason}", endpoint=url, status_code=status_code)

        async def create() -> tuple[tuple[_Server, ...], float]:
            logger.debug("discovery for agent %s: cache miss, asking %s", agent_id, url)
            try:
                response = await request_bounded(
                    self.http_client,
                    "GET",
                    url,
                    headers=headers(auth_token=auth_token, correlation_id=True),
                    timeout=cfg.request_timeout,
                    max_bytes=cfg.max_gateway_response_bytes,
                )
            except ResponseTooLargeError as exc:
                raise failure(f"answered a {exc}") from exc
            except (TimeoutError, httpx.TimeoutException) as exc:
                raise failure(f"did not answer within {cfg.request_timeout} s") from exc
            except httpx.HTTPError as exc:
                raise failure(f"is unreachable: {type(exc).__name__}: {scrub(exc)}") from exc
            if not response.is_success:
                raise failure(f"answered HTTP {response.status_code}", response.status_code)
            entries = await run_cooperatively(self._servers_from(response.content, source, url))
            logger.debug(
                "discovered %d MCP server(s) for agent %s through %s", len(entries), agent_id, source
            )
            return entries, cfg.discovery_cache_ttl

        cache_key = None if key is None else ("discovery", url, key)
        # An expired answer serves one more TTL while it is refreshed: a gateway that is slow or down when
        # every user's entry expires at once (a host's users started together) fails no turn.
        entries, hit = await self.entries.get_or_create(cache_key, create, stale=True)
        if hit:
            logger.debug("discovery for agent %s: cache hit (%d server(s))", agent_id, len(entries))
        return entries
