"""Odd server data, one answer for every extension: duplicate servers, clashing names, bad tools.

* **The same server listed twice** (same URL under two names): registered once, under the name
  discovered first (:func:`unique_servers`; URLs compare with scheme and host lower-cased and a
  trailing ``/`` ignored).
* **The same tool name twice** (on two servers, or a server's and one of the agent's own tools):
  :func:`resolve_tool_names`. The agent's own tools keep their names; an MCP tool keeps its name
  unless another tool has it; every MCP tool involved in a clash becomes ``<server>_<tool>`` (only
  ``[A-Za-z0-9_-]``), then ``_2``, ``_3`` … servers taken in name order. The result depends only
  on the names, never on discovery order, so a tool keeps its name from turn to turn.
* **A tool whose definition is unusable** (no name, a missing, null or non-object ``inputSchema``, one a
  framework or a model cannot take: :func:`schema_fault`), **or a name its server listed already** (a server is
  called by name: its first definition is kept, :func:`distinct_tools`): left out with one WARNING naming it and
  its server; the server's other tools stay (:func:`usable_tools`).
"""

from __future__ import annotations

import functools
import logging
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from mcp.types import Tool
from pydantic import ValidationError

from ._stepwise import Steps, run
from .models import MCPServerConfig

__all__ = ["normalize_url", "resolve_tool_names", "unique_server_steps", "unique_servers", "usable_tools"]

logger = logging.getLogger(__name__)

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
# Containers in an inputSchema, its $refs followed: the Agents SDK refuses a whole agent past 100 levels, and
# LangChain inlines every $ref for the model (an exponential fan-out of $refs would stall every model call).
MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES = 64, 10_000


@functools.lru_cache(maxsize=4096)  # every turn compares the same few URLs: parse each once
def normalize_url(url: str) -> str:
    """The URL compared for duplicates: scheme and host lower-cased, trailing ``/`` ignored."""
    text = url.strip()
    try:
        parts = urlsplit(text)
    except ValueError:
        return text.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path.rstrip("/"), parts.query, ""))


def unique_servers(
    servers: Iterable[MCPServerConfig], known_urls: Iterable[str] = ()
) -> list[MCPServerConfig]:
    """``servers`` without those whose URL is in ``known_urls`` or came earlier in the list."""
    return run(unique_server_steps(servers, known_urls))


def unique_server_steps(
    servers: Iterable[MCPServerConfig], known_urls: Iterable[str] = ()
) -> Steps[list[MCPServerConfig]]:
    """:func:`unique_servers` in steps (discovery runs it on the event loop for thousands of servers)."""
    seen = {normalize_url(url) for url in known_urls}
    result: list[MCPServerConfig] = []
    for server in servers:
        yield
        key = normalize_url(server.url)
        if key in seen:
            logger.debug("MCP server %r: its URL is listed already; registered once", server.mcp_server_name)
            continue
        seen.add(key)
        result.append(server)
    return result


def usable_tools(definitions: Iterable[Any], server_name: str) -> list[Tool]:
    """The tool definitions (``tools/list`` items: dicts or ``Tool``) a client can offer a model.

    One without a name or with an ``inputSchema`` that is missing, null or not an object is left out
    with a WARNING naming it (the server's own text is not logged beyond the tool's name).
    """
    return [tool for item in definitions if (tool := usable_tool(item, server_name)) is not None]


def usable_tool(item: Any, server_name: str) -> Tool | None:
    """One definition of :func:`usable_tools` (``None``: left out, with its WARNING)."""
    raw = item.model_dump(by_alias=True) if isinstance(item, Tool) else item  # mcp 2 too: wire names
    raw = raw if isinstance(raw, Mapping) else {}
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        reason = "it has no name"
    elif not isinstance(raw.get("inputSchema"), Mapping):
        reason = "its inputSchema is missing or not a JSON object"
    elif (fault := schema_fault(raw["inputSchema"])) is not None:
        reason = fault
    else:
        try:
            return item if isinstance(item, Tool) else Tool.model_validate(raw)
        except ValidationError:  # its text may quote the server's data: not logged
            reason = "its definition is invalid"
    label = name[:100] if isinstance(name, str) else "<unnamed>"
    logger.warning("MCP server %r: tool %r left out: %s", server_name, label, reason)
    return None


def schema_fault(schema: Mapping[str, Any]) -> str | None:
    """Why a tool's ``inputSchema`` cannot be offered to a model (``None``: it can): a ``type`` other than
    ``object``, a ``$ref`` that does not point into it, or, its ``$ref`` s followed (each once on a path: a cycle
    is fine), more than ``MAX_SCHEMA_DEPTH`` levels or ``MAX_SCHEMA_NODES`` containers."""
    if schema.get("type", "object") != "object":
        return "its inputSchema is not of type object"
    root = dict(schema)
    stack: list[tuple[Any, int, frozenset[str]]] = [(root, 1, frozenset())]
    nodes = 0
    while stack:
        value, depth, followed = stack.pop()
        nodes += 1
        if depth > MAX_SCHEMA_DEPTH or nodes > MAX_SCHEMA_NODES:
            return "its inputSchema is too deeply nested or too large"
        if isinstance(value, dict) and "$ref" in value:
            if (target := _target(value["$ref"], root)) is None:
                return "its inputSchema has a $ref that points nowhere"
            if value["$ref"] not in followed and type(target) in (dict, list):
                stack.append((target, depth, followed | {value["$ref"]}))
        for child in value.values() if isinstance(value, dict) else value:  # JSON: dicts and lists only
            if type(child) is dict or type(child) is list:  # not isinstance: this loop is hot
                stack.append((child, depth + 1, followed))
    return None


def _target(ref: Any, root: dict[str, Any]) -> Any:
    """What ``ref`` points to in ``root``, read as LangChain reads it (``#/a/0/b``, no escapes), else ``None``."""
    if not isinstance(ref, str) or ref.split("/")[0] != "#":
        return None
    target: Any = root
    for key in ref.split("/")[1:]:
        if isinstance(target, dict):
            target = target.get(key)
        elif isinstance(target, list) and key.isdigit() and int(key) < len(target):
            target = target[int(key)]
        else:
            return None
    return target


def distinct_tools(tools: Iterable[Tool], server_name: str) -> list[Tool]:
    """``tools`` without a name listed before (one WARNING each): the server is called by name, so it runs one
    definition; the first is kept."""
    kept: dict[str, Tool] = {}
    for tool in tools:
        if tool.name in kept:
            logger.warning(
                "MCP server %r: tool %r left out: its name is listed twice", server_name, tool.name[:100]
            )
        else:
            kept[tool.name] = tool
    return list(kept.values())


def resolve_tool_names(
    reserved: Iterable[str], names_by_server: Mapping[str, Sequence[str]]
) -> dict[str, list[str]]:
    """The name each server's tool is exposed under (same order), so that no two tools share one.

    ``reserved`` are the names of the agent's own tools (they keep them). See the module's rule.
    """
    own = set(reserved)  # read once: any iterable (a generator too) reserves its names
    counts = Counter(name for names in names_by_server.values() for name in names)

    def keeps(name: str) -> bool:
        return counts[name] == 1 and name not in own

    # Names that stay as they are, claimed first so a prefixed name never steals them.
    taken = own | {n for names in names_by_server.values() for n in names if keeps(n)}
    exposed = {server: list(names) for server, names in names_by_server.items()}
    for server in sorted(names_by_server):
        for index, name in enumerate(names_by_server[server]):
            if keeps(name):
                continue
            base = _UNSAFE.sub("_", f"{server}_{name}")
            candidate, suffix = base, 1
            while candidate in taken:
                suffix += 1
                candidate = f"{base}_{suffix}"
            taken.add(candidate)
            exposed[server][index] = candidate
            logger.debug(
                "tool %r of MCP server %r clashes with another tool: exposed as %r", name, server, candidate
            )
    return exposed
