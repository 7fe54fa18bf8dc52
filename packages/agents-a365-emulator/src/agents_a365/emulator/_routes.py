"""Classification of request paths into route kinds."""

from __future__ import annotations

import re

from agents_a365.emulator._mcp_router import MCP_PATH

GATEWAY_PATH = re.compile(r"^/agents/v2/(?P<agent_id>[^/]+)/mcpServers/?$")
RTP_PATH = "/agents/real-time-threat-protection/chat-message"
CONTROL_PREFIX = "/_emulator"
MCP_PREFIX = "/agents/servers/"
CONNECTOR_PREFIX = "/v3/conversations/"


def classify(path: str) -> tuple[str, str | None]:
    """``(route kind, MCP server name or None)`` for a request path."""
    if path == CONTROL_PREFIX or path.startswith(CONTROL_PREFIX + "/"):
        return "control", None
    if path.startswith(MCP_PREFIX):
        match = MCP_PATH.match(path)
        return "mcp", match["name"] if match else path[len(MCP_PREFIX) :].split("/", 1)[0] or None
    if GATEWAY_PATH.match(path):
        return "gateway", None
    if path.rstrip("/") == RTP_PATH:
        return "rtp", None
    if path.startswith(CONNECTOR_PREFIX):
        return "connector", None
    return "unknown", None
