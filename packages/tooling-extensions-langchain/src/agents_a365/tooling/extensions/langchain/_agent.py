"""One ``create_agent`` graph for every user: built once per agent identity, rebuilt only when its tools change.

The graph's MCP tools hold no user's token: each call resolves the turn it runs in (the run's context, else the
task's turn scope) and takes that user's token for its server's audience. Each turn reads its user's servers
and definitions from the tooling service's caches (no request on a warm turn); the graph is rebuilt when a
server or its definitions change (``tool_cache_ttl``), once per change.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import Any

from agents_a365.tooling.extensibility import AgentTools, resolve_tool_names

from ._connections import to_langchain
from ._toolset import AgentFactory, McpToolset

__all__ = ["McpAgent"]


class McpAgent:
    """A LangChain agent built once (``service.create_agent(...)``) that every user, conversation and concurrent
    turn reuses. Run it as the graph::

        result = await agent.ainvoke({"messages": [...]}, config, context=turn_identity(turn_context))

    The turn comes from ``context`` (``turn_identity(turn_context)``, a ``TurnContext`` or a ``TurnScope``), else
    from the task's turn scope (``with service.turn_scope(...)``); with neither, ``UnknownTurnError`` and nothing
    is sent. :meth:`graph` gives the compiled graph of a turn for anything else (``astream_events``, …).
    """

    __slots__ = ("_graphs", "_lock", "_options", "_tools", "agent_factory", "builds")

    def __init__(
        self, tools: AgentTools, agent_options: Mapping[str, Any], agent_factory: AgentFactory
    ) -> None:
        self._tools, self._options, self.agent_factory = tools, dict(agent_options), agent_factory
        self._graphs: dict[
            str | None, tuple[Mapping[str, Any], Any]
        ] = {}  # per agent identity: (union, graph)
        self._lock = asyncio.Lock()
        self.builds = 0
        """How many graphs were built so far (one per agent identity and change of its tools)."""

    async def graph(self, context: Any = None) -> Any:
        """The compiled graph for this turn's agent identity, built or rebuilt only when its tools changed."""
        scope, _, union = await self._tools.turn(context)
        key = scope.identity.agent_id if scope.identity is not None else None  # the agent identity
        built = self._graphs.get(key)
        if built is None or built[0] is not union:
            async with self._lock:  # concurrent turns that see one change build it once
                built = self._graphs.get(key)
                if built is None or built[0] is not union:
                    built = self._graphs[key] = (union, await self._build(union))
                    self.builds += 1
        return built[1]

    async def _build(self, union: Mapping[str, Any]) -> Any:
        mcp_names = {name: [d.name for d in defs] for name, defs in union.items()}
        names = resolve_tool_names((), mcp_names)
        calltime, urls = self._tools.calltime, self._tools.urls
        by_server = {
            name: await to_langchain(defs, name, urls.get(name, name), calltime, names=names[name])
            for name, defs in union.items()
        }
        # create_agent parses every tool's schema at once (4.4 s for 3,000 large ones): in a worker thread, the
        # event loop keeps serving the other conversations (it gets the GIL back every switch interval).
        toolset = McpToolset([], by_server, mcp_names)
        return await asyncio.to_thread(toolset.create_agent, self._options, agent_factory=self.agent_factory)

    async def ainvoke(self, input: Any, config: Any = None, *, context: Any = None, **kwargs: Any) -> Any:
        return await (await self.graph(context)).ainvoke(input, config, context=context, **kwargs)

    async def astream(
        self, input: Any, config: Any = None, *, context: Any = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        async for chunk in (await self.graph(context)).astream(input, config, context=context, **kwargs):
            yield chunk

    async def aget_state(self, config: Any, *, subgraphs: bool = False) -> Any:
        """The thread's state (what ``send_chat_history(turn, agent, config)`` reads), from the checkpointer
        every graph of this agent shares; ``ValueError`` before any turn has built one."""
        graph = next((built[1] for built in self._graphs.values()), None)
        if graph is None:
            raise ValueError("the agent has not run yet: no state to read")
        return await graph.aget_state(config, subgraphs=subgraphs)

    def __repr__(self) -> str:
        return f"McpAgent(builds={self.builds})"
