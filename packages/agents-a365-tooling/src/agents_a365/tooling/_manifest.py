"""Servers from a local ``ToolingManifest.json`` (development)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ._stepwise import Steps, run
from .errors import ToolServerDiscoveryError
from .models import ToolingManifestEntry

logger = logging.getLogger(__name__)


def entries_stepwise(data: Any, *, source: str, endpoint: str) -> Steps[dict[str, dict[str, Any]]]:
    """The entries of ``{"mcpServers": [...]}`` or a bare list, one per step (a gateway answer may hold
    thousands), as each name's :class:`ToolingManifestEntry` fields: plain dicts of strings, which the collector
    does not track (thousands of models kept to the end would be promoted, and trigger a full collection:
    docs/performance.md). Entries that are not objects or have no name are skipped with a warning. ``endpoint``
    is the error's ``endpoint``.

    Identical repeats collapse into one; two different servers under one name are an error: the name keys
    a server's tools, token and cache entry in both extensions, so keeping either one silently would serve
    one server's tools under the other's URL.
    """
    items = data.get("mcpServers") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ToolServerDiscoveryError(
            f"{source}: expected a JSON list or an object with an 'mcpServers' list", endpoint=endpoint
        )
    seen: dict[str, dict[str, Any]] = {}
    for index, item in enumerate(items):
        yield
        try:
            entry = ToolingManifestEntry.model_validate(item)
        except ValidationError as exc:
            logger.warning("%s: skipping server entry %d: %s", source, index, exc.errors()[0]["msg"])
            continue
        if entry.name is None:
            logger.warning("%s: skipping server entry %d without mcpServerName", source, index)
            continue
        if (first := seen.setdefault(entry.name, vars(entry))) is vars(entry):
            continue
        if first != vars(entry):
            raise ToolServerDiscoveryError(
                f"{source}: two different MCP servers are named {entry.name!r} "
                f"({first['url'] or 'default URL'} and {entry.url or 'default URL'}); server names must be unique",
                endpoint=endpoint,
            )
        logger.debug("%s: server %r listed twice; using it once", source, entry.name)
    return seen


# Paths already warned about: a missing manifest is said once per process, not on every turn.
_warned_missing: set[Path] = set()


def read_manifest(path: Path, *, required: bool = False) -> dict[str, dict[str, Any]]:
    """Entries of the manifest at ``path`` (as :func:`entries_stepwise`).

    A missing file gives no MCP servers and one WARNING (the agent would otherwise answer without its
    tools and nobody would notice), or a :class:`ToolServerDiscoveryError` when ``required``.
    """
    if not path.is_absolute() and not path.exists() and (Path("..") / path).exists():
        path = Path("..") / path  # one folder up, as Microsoft's SDK: a sample started from its subfolder
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        where = path.resolve()
        advice = (
            'create it ({"mcpServers": [{"mcpServerName": "mail"}]}), or set '
            "A365_USE_TOOLING_MANIFEST=false to discover servers through the tooling gateway"
        )
        if required:
            raise ToolServerDiscoveryError(
                f"no tooling manifest at {where} (A365_REQUIRE_TOOLING_MANIFEST is set): {advice}",
                endpoint=str(path),
            ) from None
        if where not in _warned_missing:
            _warned_missing.add(where)
            logger.warning(
                "no tooling manifest at %s: the agent gets NO MCP tools. To fix: %s "
                "(A365_REQUIRE_TOOLING_MANIFEST=true makes this an error)",
                where,
                advice,
            )
        else:
            logger.debug("no tooling manifest at %s: no MCP servers", where)
        return {}
    except OSError as exc:
        raise ToolServerDiscoveryError(f"cannot read {path}: {exc}", endpoint=str(path)) from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToolServerDiscoveryError(f"{path} is not valid JSON: {exc}", endpoint=str(path)) from exc
    return run(entries_stepwise(data, source=str(path), endpoint=str(path)))
