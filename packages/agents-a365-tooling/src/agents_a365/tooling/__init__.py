"""Agent 365 tooling: MCP tool server discovery, per-audience tokens and threat-protection chat history."""

# The extension distributions install ``agents_a365.tooling.extensions.*`` from other
# directories; extend the package path so editable installs find them too.
__path__ = __import__("pkgutil").extend_path(__path__, __name__)

from ._second_level import CacheStore
from ._telemetry import configure_telemetry
from ._tool_cache import ToolDefinitionCache
from ._turn_scope import TurnScope
from .configuration import ToolingConfiguration, get_mcp_platform_authentication_scope
from .constants import DEFAULT_PLATFORM_ENDPOINT, DEFAULT_PLATFORM_SCOPE, PLATFORM_APP_ID, Headers
from .errors import (
    ChatHistorySendError,
    McpServerConnectionError,
    McpServerUnavailableError,
    SendFailureCause,
    TokenAcquisitionError,
    ToolingError,
    ToolServerConfigurationError,
    ToolServerDiscoveryError,
    ToolServerNotGivenError,
    TurnMismatchError,
    UnknownTurnError,
)
from .headers import build_request_headers, clean_header_value, resolve_agent_id_header
from .mcp_http import mcp_http_client_factory, shared_ssl_context
from .models import ChatHistoryMessage, ChatMessageRequest, MCPServerConfig, ToolingManifestEntry, ToolOptions
from .service import McpToolServerConfigurationService

__all__ = [
    "DEFAULT_PLATFORM_ENDPOINT",
    "DEFAULT_PLATFORM_SCOPE",
    "PLATFORM_APP_ID",
    "CacheStore",
    "ChatHistoryMessage",
    "ChatHistorySendError",
    "ChatMessageRequest",
    "Headers",
    "MCPServerConfig",
    "McpServerConnectionError",
    "McpServerUnavailableError",
    "McpToolServerConfigurationService",
    "SendFailureCause",
    "TokenAcquisitionError",
    "ToolDefinitionCache",
    "ToolOptions",
    "ToolServerConfigurationError",
    "ToolServerDiscoveryError",
    "ToolServerNotGivenError",
    "ToolingConfiguration",
    "ToolingError",
    "ToolingManifestEntry",
    "TurnMismatchError",
    "TurnScope",
    "UnknownTurnError",
    "build_request_headers",
    "clean_header_value",
    "configure_telemetry",
    "get_mcp_platform_authentication_scope",
    "mcp_http_client_factory",
    "resolve_agent_id_header",
    "shared_ssl_context",
]
