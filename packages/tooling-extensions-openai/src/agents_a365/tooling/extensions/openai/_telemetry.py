"""One GenAI ``execute_tool`` span per MCP tool call of an :class:`A365MCPServer`.

The Agents SDK passes no call id to ``call_tool``; it does pass the run's ``ToolContext`` (which has
``tool_call_id``) to the server's ``tool_meta_resolver`` just before, in the task that then starts
the call. While telemetry is on, the server's resolver is wrapped to note that id (and the tool's
name, so a stale id is never used) in a context variable that the call's task inherits.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

from agents_a365.tooling.extensibility import tool_call_span

__all__ = ["noting_call_id", "traced_call_tool"]

_F = TypeVar("_F", bound=Callable[..., Awaitable[Any]])
_CALL: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar("a365_mcp_call", default=None)

Resolver = Callable[[Any], Any]


def noting_call_id(resolver: Resolver | None) -> Resolver:
    """``resolver`` (or none) that first notes the tool call's id for :func:`traced_call_tool`."""

    def resolve(context: Any) -> Any:
        call_id = getattr(getattr(context, "run_context", None), "tool_call_id", None)
        tool_name = getattr(context, "tool_name", None)
        if isinstance(call_id, str) and isinstance(tool_name, str):
            _CALL.set((tool_name, call_id))
        return None if resolver is None else resolver(context)

    return resolve


def traced_call_tool(method: _F) -> _F:
    """Wrap ``call_tool(self, tool_name, arguments, meta=None)`` in a tool call span."""

    @functools.wraps(method)
    async def call_tool(self: Any, tool_name: str, arguments: Any, *args: Any, **kwargs: Any) -> Any:
        noted = _CALL.get()
        call_id = noted[1] if noted is not None and noted[0] == tool_name else None
        with tool_call_span(str(self.name), tool_name, call_id, arguments=arguments) as span:
            result = await method(self, tool_name, arguments, *args, **kwargs)
            span.record_result(result, is_error=getattr(result, "isError", False) is True)
            return result

    return cast(_F, call_tool)
