"""What an extension author needs to build an orchestrator extension on the tooling core.

End users import from :mod:`agents_a365.tooling` and their extension's package; extension packages (ours,
and third parties') import the building blocks below, and nothing private. See docs/contract.md for the
behaviour every extension must share and the contract suite that checks it.
"""

from ._deprecation import check_options, renamed_kwargs
from ._redact import describe_error, redact_headers, scrub, scrubbed
from ._telemetry import ToolCallSpan, tool_call_span
from ._turn import TurnIdentity, turn_identity
from .extension_base import ExtensionServiceBase
from .mcp_http import mcp_http_client_factory, shared_ssl_context
from .message_construction import trusted_message
from .tool_cache import ToolDefinitionCache, prime_output_schemas

__all__ = [
    "ExtensionServiceBase",
    "ToolCallSpan",
    "ToolDefinitionCache",
    "TurnIdentity",
    "check_options",
    "describe_error",
    "mcp_http_client_factory",
    "prime_output_schemas",
    "redact_headers",
    "renamed_kwargs",
    "scrub",
    "scrubbed",
    "shared_ssl_context",
    "tool_call_span",
    "trusted_message",
    "turn_identity",
]
