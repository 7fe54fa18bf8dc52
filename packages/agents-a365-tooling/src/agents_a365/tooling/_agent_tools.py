"""The MCP tools of an agent built once for every user: what both extensions' build-once forms share.

Each turn takes its user's servers (:class:`~agents_a365.tooling.TurnScope`) and their definitions from the
service's cache (content-addressed: equal definitions are one object, whoever listed them). Per agent identity
(the agentic app id, or the development manifest) it keeps the union of the servers its users were given;
that union is a new object only when a server or its definitions change, so an extension rebuilds what it
derives from it (converted tools, a graph) once per change, never per turn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from mcp.types import Tool

from ._turn_scope import CallTime, TurnScope
from .errors import McpServerConnectionError

__all__ = ["AgentTools"]

logger = logging.getLogger(__name__)

Definitions = tuple[Tool, ...]


class AgentTools:
    """``await tools.turn(context)``: the turn's scope, its user's definitions by server, and the agent's union
    (the same object until something changes). A server that cannot be listed is left out of the turn with
    a WARNING (``skip_unreachable``, the default), else its ``McpServerConnectionError`` is raised."""

    __slots__ = ("_unions", "calltime", "skip_unreachable", "urls")

    def __init__(self, calltime: CallTime, *, skip_unreachable: bool = True) -> None:
        self.calltime, self.skip_unreachable = calltime, skip_unreachable
        self.urls: dict[str, str] = {}  # each server's URL, by name, as last discovered
        self._unions: dict[str | None, dict[str, Definitions]] = {}

    async def turn(
        self, context: Any = None
    ) -> tuple[TurnScope, dict[str, Definitions], Mapping[str, Definitions]]:
        scope = self.calltime.scope(context)
        core = self.calltime.service
        cache, servers = core.tool_definitions, list((await scope.servers()).values())
        found: dict[str, Definitions | None] = {
            s.mcp_server_name: cache.get(s.url, s.headers) for s in servers
        }
        misses = [s for s in servers if found[s.mcp_server_name] is None]
        listings = (
            cache.get_or_list(s.url, s.headers, lambda s=s: core.get_mcp_client_tools(s.mcp_server_name, s))  # type: ignore[misc]
            for s in misses
        )
        for server, outcome in zip(
            misses, await asyncio.gather(*listings, return_exceptions=True), strict=True
        ):
            if isinstance(outcome, McpServerConnectionError) and self.skip_unreachable:
                logger.warning("MCP server %r left out of this turn: %s", server.mcp_server_name, outcome)
                del found[server.mcp_server_name]
            elif isinstance(outcome, BaseException):
                raise outcome
            else:
                found[server.mcp_server_name] = outcome
        self.urls.update((s.mcp_server_name, s.url) for s in servers)
        listed = {name: defs for name, defs in found.items() if defs is not None}
        key = scope.identity.agent_id if scope.identity is not None else None
        union = self._unions.get(key)
        if union is None or any(union.get(n) is not d and union.get(n) != d for n, d in listed.items()):
            union = self._unions[key] = {**(union or {}), **listed}  # a new object: a new version
            logger.debug("MCP tools of agent %r changed: %d server(s)", key, len(union))
        return scope, listed, union
