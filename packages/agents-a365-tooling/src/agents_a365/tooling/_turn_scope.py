"""Identity at call time: every MCP request resolves the turn it runs in, then that user's servers.

A tool or server of this SDK holds no user's token: it holds a :class:`CallTime` (the service, the app's
authorization and handler name). Each request asks it for its server's config in the current turn: the run's
context (a :class:`TurnScope`, a hosting-core ``TurnContext``, a ``TurnIdentity`` made by ``turn_identity``,
or any object with a ``turn_context`` attribute), else the turn scope the task runs in (``with
service.turn_scope(...)``, or a per-turn registration's). That user's servers (discovery and tokens, both
cached) are resolved once per turn. An unknown turn raises :class:`UnknownTurnError` before anything is sent.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, Any, Self

from mcp.types import CallToolResult, TextContent

from ._session import token_lifetime
from ._turn import TurnIdentity, read_turn
from .errors import ToolServerNotGivenError, TurnMismatchError, UnknownTurnError
from .models import MCPServerConfig

if TYPE_CHECKING:
    from .service import McpToolServerConfigurationService

__all__ = ["CallTime", "TurnScope", "refusal"]

_current: ContextVar[TurnScope | None] = ContextVar("agents_a365_turn_scope", default=None)
_HOW = "pass the turn as the run's context (context=turn_identity(turn_context)) or use `with service.turn_scope(...)`"


class TurnScope:
    """One turn, for everything it runs: ``with service.turn_scope(turn_context, authorization, "AGENTIC"):``.

    Inside the block (and in the tasks started from it) MCP requests of this SDK's tools and servers are made
    for this turn's user, with that user's token for each server's audience. The user's servers are resolved
    once, by the first request that needs them (discovery and tokens come from the service's caches), again
    when a token in them expires. Blocks may nest.
    """

    __slots__ = ("_lock", "_resolved", "_tokens", "args", "identity", "service", "turn_context")

    def __init__(self, service: McpToolServerConfigurationService, turn_context: Any, *args: Any) -> None:
        if getattr(turn_context, "activity", None) is None:
            raise ValueError("turn_context is required (a hosting-core TurnContext with an activity)")
        self.service, self.turn_context, self.args = (
            service,
            turn_context,
            (*args, None, None, None, None)[:4],
        )
        """``args``: authorization, auth_handler_name, auth_token, options (as ``list_tool_servers`` takes them)."""
        self.identity = read_turn(turn_context).guarded
        self._resolved: tuple[dict[str, MCPServerConfig], float] | None = None
        self._lock, self._tokens = asyncio.Lock(), list[Token[TurnScope | None]]()

    async def servers(self) -> Mapping[str, MCPServerConfig]:
        """This turn's user's servers by name, each with its headers (its own audience's token)."""
        clock = self.service.clock
        while self._resolved is None or clock() >= self._resolved[1]:
            async with self._lock:  # one resolution per turn; a cancelled one leaves it to the next caller
                if self._resolved is None or clock() >= self._resolved[1]:
                    found = await self.service.list_tool_servers(self.turn_context, *self.args)
                    skew = self.service.configuration.token_expiry_skew
                    lifetime = min((token_lifetime(s.headers, skew) for s in found), default=math.inf)
                    self._resolved = ({s.mcp_server_name: s for s in found}, clock() + max(lifetime, 0.0))
                    return self._resolved[0]
        return self._resolved[0]

    def enter(self) -> None:
        """The calling task (and the tasks it starts from now on) runs this turn: what a per-turn registration
        does, so that its run needs no context. Prefer ``with``, which ends it."""
        _current.set(self)

    def __enter__(self) -> Self:
        self._tokens.append(_current.set(self))
        return self

    def __exit__(self, *_: object) -> None:
        _current.reset(self._tokens.pop())


def _who(identity: TurnIdentity | None) -> Any:
    return identity and (identity.tenant_id, identity.user_id, identity.agent_id)


class CallTime:
    """What a tool or server holds instead of a user's token: how to resolve the current turn's servers.

    ``args``: the app's authorization and auth handler name (one for every user) and the extension's
    options; ``registered``: the scope of the turn that registered the tools, if any (its ``auth_token``, if
    given, serves that turn only).
    """

    __slots__ = ("args", "registered", "service")

    def __init__(
        self, service: McpToolServerConfigurationService, *args: Any, registered: TurnScope | None = None
    ) -> None:
        self.service, self.args, self.registered = service, (*args, None, None, None)[:3], registered

    def scope(self, context: Any = None, *, what: str = "this MCP request") -> TurnScope:
        """The turn ``context`` names, else the task's; :class:`UnknownTurnError` when none is known."""
        if isinstance(context, TurnScope):
            return context
        current = _current.get()
        known = [s for s in (current, self.registered) if s is not None]
        turn = (
            context
            if getattr(context, "activity", None) is not None
            else getattr(context, "turn_context", None)
        )
        if turn is None and isinstance(context, TurnIdentity):  # an identity alone: a known turn it names
            if found := [s for s in known if _who(s.identity) == _who(context)]:
                return found[0]
            raise TurnMismatchError(f"{what} was not sent: no turn of this identity is known here; {_HOW}")
        if turn is None and current is None:  # the registration's turn is not this task's: never assumed
            raise UnknownTurnError(f"{what} was not sent: no turn is known for it; {_HOW}")
        turn = turn or current.turn_context  # type: ignore[union-attr]
        same = next((s for s in known if s.turn_context is turn), None)
        # The turn's own authorization, handler and token (a registration's auth_token serves its turn only),
        # else the binding's; this binding's options (the orchestrator in User-Agent).
        k_auth, k_handler, token, k_options = same.args if same is not None else (None,) * 4
        args = (k_auth or self.args[0], k_handler or self.args[1], token, self.args[2] or k_options)
        if same is not None and all(a is b for a, b in zip(args, same.args, strict=True)):
            return same
        # One scope per turn and binding, kept in the turn's own state: it lives and dies with the turn.
        state = getattr(turn, "turn_state", None)
        memo = state.setdefault("agents_a365.turn_scopes", {}) if isinstance(state, dict) else {}
        key = (id(self.service), *map(id, args))
        if (scope := memo.get(key)) is None:
            scope = memo[key] = TurnScope(self.service, turn, *args)
        return scope

    async def server(self, name: str, context: Any = None) -> MCPServerConfig:
        """``name``'s config in the current turn: its user's headers and token. Raises
        :class:`UnknownTurnError` (no turn known) or :class:`ToolServerNotGivenError` (not this user's)."""
        what = f"MCP server {name!r}"
        if (config := (await self.scope(context, what=what).servers()).get(name)) is None:
            raise ToolServerNotGivenError(f"{what} is not one of this user's servers: the call was not sent")
        return config


def refusal(error: Exception) -> CallToolResult:
    """A call refused before it was sent, as the tool error result the model gets."""
    return CallToolResult(content=[TextContent(type="text", text=str(error))], isError=True)
