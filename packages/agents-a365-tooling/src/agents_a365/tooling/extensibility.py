"""What an extension author needs to build an orchestrator extension on the tooling core.

End users import from :mod:`agents_a365.tooling` and their extension's package; extension packages (ours,
and third parties') import the building blocks below, and nothing private. See docs/contract.md for the
behaviour every extension must share and the contract suite that checks it.
"""

from ._agent_tools import AgentTools
from ._deprecation import check_options, keyword_aliases, renamed_kwargs
from ._history import (
    PART_SEPARATOR,
    NativeMessage,
    NativeReader,
    build_chat_history,
    check_limit,
    coerce_timestamp,
    convert_native,
    join_parts,
    sendable,
)
from ._mcp_errors import list_servers, tool_call_result
from ._redact import describe_error, redact_headers, scrub, scrubbed
from ._sessions import MAX_LIST_PAGES, McpSessionPool
from ._spans import ToolCallSpan, tool_call_span
from ._telemetry_hooks import mcp_session_span
from ._tool_cache import ToolDefinitionCache
from ._tool_names import normalize_url, resolve_tool_names, unique_servers, usable_tools
from ._turn import TurnIdentity, turn_identity
from ._turn_scope import CallTime, refusal
from .extension_base import ExtensionServiceBase, require
from .mcp_http import mcp_http_client_factory, shared_ssl_context

__all__ = [
    "MAX_LIST_PAGES",
    "PART_SEPARATOR",
    "AgentTools",
    "CallTime",
    "ExtensionServiceBase",
    "McpSessionPool",
    "NativeMessage",
    "NativeReader",
    "ToolCallSpan",
    "ToolDefinitionCache",
    "TurnIdentity",
    "build_chat_history",
    "check_limit",
    "check_options",
    "coerce_timestamp",
    "convert_native",
    "describe_error",
    "join_parts",
    "keyword_aliases",
    "list_servers",
    "mcp_http_client_factory",
    "mcp_session_span",
    "normalize_url",
    "redact_headers",
    "refusal",
    "renamed_kwargs",
    "require",
    "resolve_tool_names",
    "scrub",
    "scrubbed",
    "sendable",
    "shared_ssl_context",
    "tool_call_result",
    "tool_call_span",
    "turn_identity",
    "unique_servers",
    "usable_tools",
]
