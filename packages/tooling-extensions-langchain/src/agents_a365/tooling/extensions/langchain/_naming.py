"""Duplicate tool names: the tooling core's rule (``resolve_tool_names``), applied to LangChain tools."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.tools import BaseTool

from agents_a365.tooling.extensibility import resolve_tool_names as resolve_names

__all__ = ["resolve_tool_names", "tool_name"]


def tool_name(tool: Any) -> str | None:
    """The name a model sees for ``tool`` (a ``BaseTool``, a function or a tool dict)."""
    name = getattr(tool, "name", None)
    if isinstance(name, str):
        return name
    if isinstance(tool, Mapping):
        function = tool.get("function")
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            return str(function["name"])
        if isinstance(tool.get("name"), str):
            return str(tool["name"])
    name = getattr(tool, "__name__", None)
    return name if isinstance(name, str) else None


def resolve_tool_names(
    existing: Iterable[Any], tools_by_server: Mapping[str, Sequence[BaseTool]]
) -> list[BaseTool]:
    """The MCP tools of every server (in server order), renamed so no two tools share a name: the agent's
    own tools keep theirs, a clashing MCP tool becomes ``<server>_<tool>`` (see the tooling core's rule)."""
    reserved = [n for n in (tool_name(t) for t in existing) if n is not None]
    exposed = resolve_names(reserved, {s: [t.name for t in tools] for s, tools in tools_by_server.items()})
    # The MCP adapter's coroutine calls the server with the original MCP name it closed over,
    # so only the name the model sees changes.
    return [
        tool if name == tool.name else tool.model_copy(update={"name": name})
        for server, tools in tools_by_server.items()
        for tool, name in zip(tools, exposed[server], strict=True)
    ]
