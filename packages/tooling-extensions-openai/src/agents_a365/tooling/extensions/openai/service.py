"""Registration of Agent 365 MCP tool servers with OpenAI Agents SDK agents, and chat history."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import weakref
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any, Final, TypeVar

from agents import Agent, RunContextWrapper, default_tool_error_function
from agents.mcp import MCPUtil
from agents.memory import Session

from agents_a365.runtime import AuthorizationLike, OperationResult, TurnContextLike
from agents_a365.tooling import ToolOptions
from agents_a365.tooling.extensibility import (
    AgentTools,
    CallTime,
    check_limit,
    keyword_aliases,
    list_servers,
    unique_servers,
)
from agents_a365.tooling.extension_base import ExtensionServiceBase, require

from ._agent_servers import A365AgentServers
from ._connections import build_servers, check_server_options, server_url
from ._conversion import to_chat_history_messages
from ._server import A365MCPServer

__all__ = ["ORCHESTRATOR_NAME", "McpToolRegistrationService"]

logger = logging.getLogger(__name__)

ORCHESTRATOR_NAME: Final = "OpenAI"
"""Sent in ``User-Agent`` on every request this extension makes."""

TContext = TypeVar("TContext")


class McpToolRegistrationService(ExtensionServiceBase):
    """Gives OpenAI Agents SDK agents the Agent 365 MCP tool servers of the current user.

    Long-lived: keep one per process (discovery results and tokens are cached by the tooling
    service). Use it as an async context manager or call :meth:`aclose`, which closes the tooling
    service it created and any MCP servers it connected that are still open.

    Per turn, prefer :meth:`connected_agent`::

        async with service.connected_agent(agent, authorization, "agentic", turn_context) as turn_agent:
            result = await Runner.run(turn_agent, turn_context.activity.text, session=session)

    :meth:`add_tool_servers_to_agent` does the same without the ``async with``; the servers it
    connects then stay open until :meth:`close_tool_servers` (or :meth:`aclose`).
    """

    orchestrator_name = ORCHESTRATOR_NAME
    distribution = "agents-a365-tooling-extensions-openai"

    @functools.cached_property
    def _servers(self) -> weakref.WeakSet[A365MCPServer]:
        # Every server this service registered and has not closed, held weakly (the agent clones carrying them
        # hold them), for close_tool_servers / cleanup_all_servers. A server holds no user's token, so one an
        # earlier turn registered needs no closing when a later registration replaces it.
        return weakref.WeakSet()

    def __repr__(self) -> str:
        return f"McpToolRegistrationService({self.configuration!r}, open_servers={len(self._servers)})"

    # -- lifecycle -------------------------------------------------------------------------
    async def aclose(self) -> None:
        """Close every MCP server still open, then the tooling service if this service created it."""
        await self.cleanup_all_servers()  # cannot fail: it only marks servers closed
        await super().aclose()

    async def cleanup_all_servers(self) -> None:
        """Close every MCP server this service connected (Microsoft's name); the service stays usable."""
        self._close(list(self._servers))

    def _close(self, servers: Iterable[A365MCPServer]) -> None:
        for server in servers:
            self._servers.discard(server)
            server.close()

    def _registered(self, agent: Agent[Any]) -> list[A365MCPServer]:
        """The servers on ``agent`` that add_tool_servers_to_agent registered and that are still open."""
        return [s for s in agent.mcp_servers or [] if isinstance(s, A365MCPServer) and s in self._servers]

    # -- registration ----------------------------------------------------------------------
    def agent_servers(
        self,
        authorization: AuthorizationLike | None = None,
        auth_handler_name: str | None = None,
        *,
        skip_unreachable: bool = True,
        **server_options: Any,
    ) -> A365AgentServers:
        """The agent's Agent 365 MCP servers as one ``MCPServer``, for an ``Agent`` built once (recommended)::

            agent = Agent(name="mailer", mcp_servers=[service.agent_servers(app.auth, "AGENTIC")])
            result = await Runner.run(agent, text, context=turn_context)

        Every user, conversation and concurrent turn reuses it: each request resolves its run's turn (the run
        context, else the task's turn scope; neither: ``UnknownTurnError``, nothing sent) and that user's
        token for its server's audience. ``authorization`` and ``auth_handler_name`` are the app's. A server that
        cannot be listed is left out of the turn with a WARNING (``skip_unreachable=False``: raised).
        ``server_options``: ``MCPServer``'s keyword arguments (``require_approval``, ``use_structured_content``…).
        """
        calltime = CallTime(
            self.configuration_service, authorization, auth_handler_name, self.tool_options(None)
        )
        return A365AgentServers(AgentTools(calltime, skip_unreachable=skip_unreachable), **server_options)

    @keyword_aliases(auth="authorization", context="turn_context")  # Microsoft's keywords
    async def add_tool_servers_to_agent(
        self,
        agent: Agent[TContext],
        authorization: AuthorizationLike | None,
        auth_handler_name: str | None,
        turn_context: TurnContextLike,
        auth_token: str | None = None,
        *,
        skip_unreachable: bool = False,
        server_options: Mapping[str, Any] | None = None,
    ) -> Agent[TContext]:
        """A **clone** of ``agent`` whose ``mcp_servers`` also hold the user's Agent 365 servers.

        ``agent`` itself is never changed, so one template agent can serve concurrent turns of
        different users (each clone's servers carry that user's tokens). Servers already on the
        agent are kept first, untouched (you connect and close those); a discovered server whose
        URL is already there, or listed twice, is added once. A tool name that clashes with another
        tool (of the agent or another server) is exposed as ``<server>_<tool>`` (README, "Tool names").
        Agent 365 servers on ``agent`` from an earlier turn
        (``self.agent = await service.add_tool_servers_to_agent(self.agent, ...)``) are replaced by this
        turn's; each request of a server is made for the turn it runs in (the run's context, else this
        task's turn), with that user's token (:class:`~agents_a365.tooling.UnknownTurnError` when none is known). Microsoft's keywords
        ``auth=`` and ``context=`` are accepted for ``authorization=`` and ``turn_context=``.

        The new servers' tools are listed concurrently before this returns (by the tooling core, cached
        per server and token); their requests use the tooling service's pooled MCP sessions (per server
        and user token, reused by the user's next turns until idle). Close the servers with
        ``await service.close_tool_servers(returned_agent)`` when the turn ends (or use
        :meth:`connected_agent`, which does it for you): they then refuse requests.

        Raises ``ValueError`` for a missing agent or turn context, the tooling errors of discovery
        (``ToolServerDiscoveryError``, ``TokenAcquisitionError`` …) and
        ``McpServerConnectionError`` naming a server that cannot be reached; with
        ``skip_unreachable=True`` such a server is left out with a warning instead.
        ``server_options`` are arguments of every new server: ``MCPServer``'s (``require_approval``,
        ``use_structured_content``, ``tool_meta_resolver`` …), ``tool_filter`` and ``cache_tools_list``.
        """
        clone, servers = await self._register(
            agent,
            authorization,
            auth_handler_name,
            turn_context,
            auth_token,
            skip_unreachable,
            server_options,
        )
        self._servers.update(servers)
        return clone

    async def close_tool_servers(self, agent: Agent[Any]) -> None:
        """Close the MCP servers :meth:`add_tool_servers_to_agent` connected for ``agent`` (the
        returned clone). Idempotent; an agent this service did not return is ignored."""
        servers = self._registered(agent)
        if not servers:
            logger.debug("close_tool_servers: no MCP servers open for this agent")
        self._close(servers)

    @contextlib.asynccontextmanager
    async def connected_agent(
        self,
        agent: Agent[TContext],
        authorization: AuthorizationLike | None,
        auth_handler_name: str | None,
        turn_context: TurnContextLike,
        auth_token: str | None = None,
        *,
        skip_unreachable: bool = False,
        server_options: Mapping[str, Any] | None = None,
        function_tools: bool = False,
    ) -> AsyncIterator[Agent[TContext]]:
        """``async with``: the clone of :meth:`add_tool_servers_to_agent`, its servers closed on exit.

        ``function_tools=True``: the servers' tools join the clone's ``tools``, converted to ``FunctionTool`` s
        once, here, by the Agents SDK's own ``MCPUtil.to_function_tool``, instead of joining its ``mcp_servers``,
        whose tools the Agents SDK converts again before every model call (~33 µs a tool a call). They behave
        the same (names, approvals, ``agent.mcp_config``'s strict schemas and error function, spans). A
        ``tool_filter`` is applied once, here: a callable one gets a run context without your ``context``.
        The servers' resources and prompts are not on ``mcp_servers``."""
        clone, servers = await self._register(
            agent,
            authorization,
            auth_handler_name,
            turn_context,
            auth_token,
            skip_unreachable,
            server_options,
            function_tools,
        )
        self._servers.update(servers)
        try:
            yield clone
        finally:
            self._close(servers)

    async def _register(
        self,
        agent: Agent[TContext],
        authorization: AuthorizationLike | None,
        auth_handler_name: str | None,
        turn_context: TurnContextLike,
        auth_token: str | None,
        skip_unreachable: bool,
        server_options: Mapping[str, Any] | None,
        function_tools: bool = False,
    ) -> tuple[Agent[TContext], list[A365MCPServer]]:
        require(agent, "agent")
        require(turn_context, "turn_context")
        options = check_server_options(server_options)
        existing = [s for s in agent.mcp_servers or [] if not isinstance(s, A365MCPServer)]
        if replaced := [s.name for s in agent.mcp_servers or [] if isinstance(s, A365MCPServer)]:
            logger.debug("replacing the Agent 365 MCP servers of an earlier turn: %s", ", ".join(replaced))
        core, tool_options = self.configuration_service, self.tool_options(None)
        scope = core.turn_scope(turn_context, authorization, auth_handler_name, auth_token, tool_options)
        discovered = list((await scope.servers()).values())
        scope.enter()  # this task's turn from now on: its run needs no context (requests still resolve theirs)
        known = [url for url in map(server_url, existing) if url is not None]
        configs = unique_servers(discovered, known)  # a server already on the agent is not added again
        # Listed by the core (cached per server and token: a warm turn makes no request) on the pooled
        # sessions the calls then use.
        listed, _ = await list_servers(
            core.list_mcp_tools, configs, skip_unreachable=skip_unreachable, cache=core.tool_definitions
        )
        calltime = CallTime(core, authorization, auth_handler_name, tool_options, registered=scope)
        servers = build_servers(listed, own_tools=agent.tools, core=core, options=options, calltime=calltime)
        names = ", ".join(s.name for s in servers) or "none"
        logger.info("added MCP servers to agent %r: %s (%d discovered)", agent.name, names, len(discovered))
        if not function_tools:
            return agent.clone(mcp_servers=[*existing, *servers]), servers
        clone = agent.clone(mcp_servers=existing)  # converted for the running agent, as get_mcp_tools does
        strict = clone.mcp_config.get("convert_schemas_to_strict", False)
        failure = clone.mcp_config.get("failure_error_function", default_tool_error_function)
        found = await asyncio.gather(*(s.list_tools(RunContextWrapper(context=None), clone) for s in servers))
        offered = [(s, t) for s, tools in zip(servers, found, strict=True) for t in tools]
        clone.tools = [
            *clone.tools,
            *(MCPUtil.to_function_tool(t, s, strict, clone, failure) for s, t in offered),
        ]
        return clone, servers

    # -- chat history ----------------------------------------------------------------------
    async def send_chat_history(
        self,
        turn_context: TurnContextLike,
        session: Session,
        limit: int | None = None,
        options: ToolOptions | None = None,
    ) -> OperationResult:
        """Send the items of an OpenAI Agents SDK ``session`` to threat protection.

        ``limit`` keeps the most recent N items (``Session.get_items`` semantics; ``None`` =
        the session's default, usually all). A session that fails (or does not answer within
        ``chat_history_timeout``) gives a failed :class:`OperationResult`, as do remote failures;
        ``ValueError`` for a missing turn context (``turn_context is required``) or session
        (``session is required``) or a bad ``limit``.
        """
        require(turn_context, "turn_context")
        require(session, "session")
        if not callable(getattr(session, "get_items", None)):
            raise ValueError("session must be an agents Session (it has no get_items)")
        check_limit(limit)
        if limit == 0:  # the most recent 0 items: nothing to read, an empty history is still sent
            return await self.send_history(turn_context, [], options)
        return await self.send_history_from_store(
            turn_context,
            lambda: session.get_items(limit),
            to_chat_history_messages,
            options,
            store="the session",
        )

    async def send_chat_history_messages(
        self,
        turn_context: TurnContextLike,
        messages: Sequence[Any],
        options: ToolOptions | None = None,
        *,
        limit: int | None = None,
    ) -> OperationResult:
        """Convert OpenAI Agents SDK items (dicts or models) and send them to threat protection.

        ``limit`` keeps the most recent N items (as ``send_chat_history`` with a session does).

        Always sends, even an empty list (the platform registers the user message from it).
        ``ValueError`` for a missing turn context or messages (``messages is required``); remote
        failures come back as a failed :class:`OperationResult`.
        """
        require(turn_context, "turn_context")
        # The history builder checks ``messages`` (``messages is required`` …).
        return await self.send_history(turn_context, to_chat_history_messages(messages, limit=limit), options)
