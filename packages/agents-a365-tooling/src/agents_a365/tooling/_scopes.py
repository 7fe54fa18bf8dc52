"""Which token each server needs: V1 servers share the platform token, V2 servers get their own."""

from __future__ import annotations

from .configuration import ToolingConfiguration
from .constants import PLATFORM_APP_ID
from .models import MCPServerConfig

_V1_AUDIENCES = frozenset({PLATFORM_APP_ID, f"api://{PLATFORM_APP_ID}", "default"})


def is_v2_server(server: MCPServerConfig) -> bool:
    return server.audience is not None and server.audience.strip().lower() not in _V1_AUDIENCES


def token_scope_for(server: MCPServerConfig, platform_scope: str) -> str:
    """``{audience}/{scope}`` or ``{audience}/.default`` for V2 servers, the platform scope for V1."""
    if not is_v2_server(server):
        return platform_scope
    audience = (server.audience or "").strip().rstrip("/")
    scope = (server.scope or "").strip().lstrip("/")
    return f"{audience}/{scope or '.default'}"


def get_mcp_platform_authentication_scope() -> list[str]:
    """The platform scope (``MCP_PLATFORM_AUTHENTICATION_SCOPE``, default ``ea9ffc3e-…/.default``) as a
    one-item list: what hosting-core's ``exchange_token`` takes (Microsoft's helper of the same name)."""
    return [ToolingConfiguration().mcp_platform_authentication_scope]
