"""What the session pool tells its callers about a failed MCP request, the check of a tool's structured
result (mcp's ``ClientSession.call_tool`` does it after listing the tools; we hold the definitions), and the
one rule of both extensions for servers that cannot be listed at registration (``list_servers``) and for a
tool call that fails (``tool_call_result``)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from mcp import types

from ._redact import McpErrorType, describe_error, leaf, scrub, scrubbed
from .errors import McpServerConnectionError, McpServerUnavailableError
from .models import MCPServerConfig

if TYPE_CHECKING:
    from ._spans import ToolCallSpan
    from ._tool_cache import ToolDefinitionCache

__all__ = [
    "DefinitionMismatch",
    "check_structured",
    "describe",
    "error_code",
    "failed",
    "list_servers",
    "tool_call_result",
]

logger = logging.getLogger(__name__)
T = TypeVar("T")


async def tool_call_result(
    call: Awaitable[T], span: ToolCallSpan, server: MCPServerConfig, cache: ToolDefinitionCache | None
) -> T:
    """``await call`` (one tool call) with ``span`` recording its result. A failure that shows the server's
    cached definitions wrong (an unknown tool, arguments or a result that break their schema) drops them, so
    the next turn lists it again; a transient one (timeout, connection, HTTP 5xx) keeps them. Raised with
    token-shaped text scrubbed: a server may echo the bearer token in its error."""
    try:
        result = await call
    except Exception as exc:
        if cache is not None and isinstance(exc, DefinitionMismatch):
            await cache.forget(server.url, server.headers)  # in every replica: the second level too
        clean = scrubbed(exc)
        if clean is exc:
            raise
    else:
        span.record_result(result)
        return result
    raise clean  # outside the handler: the original (with the server's text) is neither cause nor context


class DefinitionMismatch(McpServerConnectionError):
    """The server's answer shows the definitions we hold are wrong (JSON-RPC -32601/-32602: an unknown tool or
    invalid arguments; a result that breaks the output schema)."""


def failed(
    server: MCPServerConfig,
    text: str,
    *,
    transient: bool = False,
    kind: type[McpServerConnectionError] = McpServerConnectionError,
) -> McpServerConnectionError:
    return kind(
        f"MCP server {server.mcp_server_name!r} at {server.url} failed: {text}",
        server_name=server.mcp_server_name,
        url=server.url,
        transient=transient,
    )


def describe(exc: BaseException) -> str:
    """What went wrong, without the server's extra data or anything token-shaped."""
    exc = leaf(exc)
    if isinstance(exc, McpErrorType):
        return f"JSON-RPC error {exc.error.code}: {scrub(exc.error.message)[:300]}"  # type: ignore[attr-defined]
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(exc, Exception) and isinstance(status, int) and not isinstance(exc, ValueError):
        return f"HTTP {status}"
    if isinstance(exc, ValueError) and hasattr(exc, "error_count"):  # pydantic: its text may quote the input
        return f"the server's answer is invalid ({exc.error_count()} validation error(s))"
    return describe_error(exc)[:500]


def error_code(exc: BaseException) -> int | None:
    # mcp 1's McpError and mcp 2's MCPError both hold the JSON-RPC error's ErrorData as .error.
    return exc.error.code if isinstance(exc, McpErrorType) else None  # type: ignore[attr-defined]


def check_structured(
    server: MCPServerConfig, name: str, result: types.CallToolResult, schema: dict[str, Any]
) -> None:
    """What mcp's ``ClientSession.call_tool`` checks, from the definition we hold (no ``tools/list``)."""
    from jsonschema import ValidationError, validate  # type: ignore[import-untyped]

    # mcp 1 names the field structuredContent, mcp 2 structured_content (structuredContent on the wire only).
    structured = getattr(result, "structuredContent", getattr(result, "structured_content", None))
    if structured is None:
        problem = "has an output schema but returned no structured content"
    else:
        try:  # ``$ref``s resolve within the schema only: nothing is fetched
            validate(structured, schema)
            return
        except ValidationError as exc:
            problem = f"returned structured content that does not match its output schema: {scrub(exc.message)[:300]}"
        except Exception as exc:  # a broken schema, an unresolvable $ref
            problem = f"has an unusable output schema ({type(exc).__name__})"
    raise failed(server, f"tool {name!r} {problem}", kind=DefinitionMismatch)


async def list_servers(
    list_tools: Callable[[MCPServerConfig], Awaitable[list[types.Tool]]],
    servers: Sequence[MCPServerConfig],
    *,
    skip_unreachable: bool = False,
    cache: ToolDefinitionCache | None = None,
) -> tuple[list[tuple[MCPServerConfig, Sequence[types.Tool]]], list[McpServerConnectionError]]:
    """Every server's tools, listed concurrently by ``list_tools`` (the tooling service's ``list_mcp_tools``:
    cached per server and token, within ``request_timeout``). Servers with fresh definitions in ``cache``
    (the service's ``tool_definitions``) take them from it directly, at no task's cost.

    Returns the servers listed with their tools and, with ``skip_unreachable``, one error per server left
    out, each logged as a WARNING ("skipping MCP server …"); without it the first failure raises
    ``McpServerConnectionError``, naming the others. Cancelling the caller cancels every listing.
    """
    outcomes: list[Any] = [None if cache is None else cache.get(s.url, s.headers) for s in servers]
    misses = [index for index, found in enumerate(outcomes) if found is None]
    found = await asyncio.gather(*(list_tools(servers[i]) for i in misses), return_exceptions=True)
    for index, outcome in zip(misses, found, strict=True):
        outcomes[index] = outcome
    listed: list[tuple[MCPServerConfig, Sequence[types.Tool]]] = []
    failures: list[McpServerConnectionError] = []
    for server, outcome in zip(servers, outcomes, strict=True):
        if not isinstance(outcome, BaseException):
            listed.append((server, outcome))  # the cache's own object (a copy would defeat identity checks)
        elif isinstance(outcome, McpServerConnectionError):  # the core's: names the server and says why
            failures.append(outcome)
        elif isinstance(outcome, Exception):
            failures.append(failed(server, describe(outcome)))
        else:
            raise outcome  # a cancellation of a listing is ours
    if failures and not skip_unreachable:
        first = failures[0]
        if len(failures) > 1:
            others = ", ".join(repr(f.server_name) for f in failures[1:])
            raise McpServerConnectionError(
                f"{first} (also failed: {others})", server_name=first.server_name, url=first.url
            ) from first.__cause__
        raise first
    for failure in failures:  # a server known down: its breaker warned once for the outage
        unavailable = isinstance(failure, McpServerUnavailableError)
        logger.log(
            logging.DEBUG if unavailable else logging.WARNING,
            "skipping MCP server %r: %s",
            failure.server_name,
            failure,
        )
    return listed, failures
