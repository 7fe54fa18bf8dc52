"""Agent 365 tooling for LangChain and LangGraph agents.

- :class:`McpToolRegistrationService`: one agent for every user (``create_agent`` -> :class:`McpAgent`),
  MCP tools for custom graphs and ``bind_tools`` loops; chat history to real-time threat protection.
- :class:`TurnIdentity` / :func:`turn_identity`: the turn's identity as runtime context.
- :func:`convert_messages`: LangChain messages -> ``ChatHistoryMessage``.
"""

from agents_a365.tooling.extensibility import TurnIdentity, turn_identity

from ._agent import McpAgent
from ._conversion import convert_messages, extract_text, map_role
from ._toolset import AgentFactory, McpToolset, resolve_tool_names
from .service import ORCHESTRATOR_NAME, McpToolRegistrationService, StateGraphLike

__all__ = [
    "ORCHESTRATOR_NAME",
    "AgentFactory",
    "McpAgent",
    "McpToolRegistrationService",
    "McpToolset",
    "StateGraphLike",
    "TurnIdentity",
    "convert_messages",
    "extract_text",
    "map_role",
    "resolve_tool_names",
    "turn_identity",
]
