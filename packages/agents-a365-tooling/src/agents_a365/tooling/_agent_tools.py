"""The MCP tools of an agent built once for every user: what both extensions' build-once forms share.

Each turn takes its user's servers (:class:`~agents_a365.tooling.TurnScope`) and their definitions from the
service's cache (content-addressed: equal definitions are one object, whoever listed them). Per agent identity
(the agentic app id, or the development manifest) it keeps the union of the servers its users were given;
that union is a new object only when a server or its definitions change, so an extension rebuilds what it
derives from it (converted tools, a graph) once per change, never per turn.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from mcp.types import Tool

from ._mcp_errors import list_servers
from ._turn_scope import CallTime, TurnScope

__all__ = ["AgentTools"]

logger = logging.getLogger(__name__)

Definitions = tuple[Tool, ...]


class AgentTools:
    """``await tools.turn(context)``: the turn's scope, its user's definitions by server, and the agent's union
    (the same object until something changes). A server that cannot be listed is left out of the turn with
    a WARNING (``skip_unreachable``, the default), else its ``McpServerConnectionError`` is raised; the
    definitions are the cache's (content-addressed) objects, so an unchanged turn compares them by identity."""

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
        servers = list((await scope.servers()).values())
        cache, skip = core.tool_definitions, self.skip_unreachable
        found, _ = await list_servers(core.list_mcp_tools, servers, skip_unreachable=skip, cache=cache)
        listed = {s.mcp_server_name: tuple(d) for s, d in found}  # tuple(): the cache's tuple itself, no copy
        self.urls.update((s.mcp_server_name, s.url) for s in servers)
        key = scope.identity.agent_id if scope.identity is not None else None
        union = self._unions.get(key)
        if union is None or any(union.get(n) != d for n, d in listed.items() if union.get(n) is not d):
            union = self._unions[key] = {**(union or {}), **listed}  # a new object: a new version
            logger.debug("MCP tools of agent %r changed: %d server(s)", key, len(union))
        else:  # the same content (maybe listed again): kept as the cache's objects, compared by identity next
            union.update(listed)
        return scope, listed, union
