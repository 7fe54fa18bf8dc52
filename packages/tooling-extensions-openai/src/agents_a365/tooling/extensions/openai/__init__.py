"""Agent 365 tooling for the OpenAI Agents SDK.

:class:`McpToolRegistrationService` gives an ``agents.Agent`` the current user's Agent 365 MCP
tool servers (one :class:`A365MCPServer`, an ``agents.mcp.MCPServer``, each; listed at registration,
connected by their first call) and sends
the conversation of an ``agents`` ``Session`` to real-time threat protection.
"""

from ._agent_servers import A365AgentServers
from ._conversion import TOOL_OUTPUT_ROLE, extract_text, to_chat_history_message, to_chat_history_messages
from ._server import A365MCPServer
from .service import ORCHESTRATOR_NAME, McpToolRegistrationService

__all__ = [
    "ORCHESTRATOR_NAME",
    "TOOL_OUTPUT_ROLE",
    "A365AgentServers",
    "A365MCPServer",
    "McpToolRegistrationService",
    "extract_text",
    "to_chat_history_message",
    "to_chat_history_messages",
]
