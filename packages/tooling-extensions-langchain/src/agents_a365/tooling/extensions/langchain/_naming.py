"""Deterministic resolution of duplicate tool names.

Rule (documented in the README):

1. The agent's own tools keep their names (code and prompts refer to them).
2. An MCP tool keeps its name unless another tool has it.
3. Every MCP tool whose name is taken by another tool (one of the agent's own, or a tool of
   another server) is renamed ``<server>_<tool>``, on every server involved, so the result
   does not depend on the order servers were discovered in.
4. If that name is still taken, ``_2``, ``_3``, … is appended, servers taken in name order.

Names are restricted to ``[A-Za-z0-9_-]`` (what model providers accept) when renamed.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.tools import BaseTool

__all__ = ["resolve_tool_names", "tool_name"]

logger = logging.getLogger(__name__)

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


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


def _rename(tool: BaseTool, name: str) -> BaseTool:
    # The MCP adapter's coroutine calls the server with the original MCP name it closed
    # over, so only the name the model sees changes.
    return tool.model_copy(update={"name": name})


def resolve_tool_names(
    existing: Iterable[Any], tools_by_server: Mapping[str, Sequence[BaseTool]]
) -> list[BaseTool]:
    """The MCP tools of every server (in server order), renamed so no two tools share a name."""
    reserved = {n for n in (tool_name(t) for t in existing) if n is not None}
    counts = Counter(t.name for tools in tools_by_server.values() for t in tools)
    taken = set(reserved)
    # Names that stay as they are, claimed first so a prefixed name never steals them.
    for tools in tools_by_server.values():
        for tool in tools:
            if counts[tool.name] == 1 and tool.name not in reserved:
                taken.add(tool.name)
    renamed: dict[tuple[str, int], str] = {}
    for server in sorted(tools_by_server):
        for index, tool in enumerate(tools_by_server[server]):
            if counts[tool.name] == 1 and tool.name not in reserved:
                continue
            base = _UNSAFE.sub("_", f"{server}_{tool.name}")
            candidate, suffix = base, 1
            while candidate in taken:
                suffix += 1
                candidate = f"{base}_{suffix}"
            taken.add(candidate)
            renamed[(server, index)] = candidate
            logger.warning(
                "tool name %r of MCP server %r clashes with another tool; exposed as %r",
                tool.name,
                server,
                candidate,
            )
    result: list[BaseTool] = []
    for server, tools in tools_by_server.items():
        for index, tool in enumerate(tools):
            new_name = renamed.get((server, index))
            result.append(tool if new_name is None else _rename(tool, new_name))
    return result
