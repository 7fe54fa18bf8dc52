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
from .models import MCPServerConfig, ToolOptions

if TYPE_CHECKING:
    from .service import McpToolServerConfigurationService

__all__ = ["CallTime", "TurnScope", "current_scope", "refusal"]

_current: ContextVar[TurnScope | None] = ContextVar("agents_a365_turn_scope", default=None)
_MEMO = "agents_a365.turn_scopes"

_HOW = (
    "pass the turn as the run's context (agent.ainvoke(..., context=turn_identity(turn_context)), "
    "Runner.run(..., context=turn_context)) or run it inside `with service.turn_scope(turn_context, "
    "authorization, auth_handler_name):`"
)


def current_scope() -> TurnScope | None:
    """The turn scope the calling task runs in, if any."""
    return _current.get()


class TurnScope:
    """One turn, for everything it runs: ``with service.turn_scope(turn_context, authorization, "AGENTIC"):``.

    Inside the block (and in the tasks started from it) MCP requests of this SDK's tools and servers are made
    for this turn's user, with that user's token for each server's audience. The user's servers are resolved
    once, by the first request that needs them (discovery and tokens come from the service's caches), again
    when a token in them expires. Usable as ``with`` or ``async with``; blocks may nest.
    """

    __slots__ = ("_lock", "_resolved", "_tokens", "args", "identity", "service", "state", "turn_context")

    def __init__(
        self,
        service: McpToolServerConfigurationService,
        turn_context: Any,
        authorization: Any = None,
        auth_handler_name: str | None = None,
        auth_token: str | None = None,
        options: ToolOptions | None = None,
    ) -> None:
        if getattr(turn_context, "activity", None) is None:
            raise ValueError("turn_context is required (a hosting-core TurnContext with an activity)")
        self.service, self.turn_context = service, turn_context
        self.args = (authorization, auth_handler_name, auth_token, options)
        self.identity: TurnIdentity | None = read_turn(turn_context).guarded
        self.state: dict[Any, Any] = {}  # what an extension keeps for this turn (its tool routing)
        self._resolved: tuple[dict[str, MCPServerConfig], float] | None = None
        self._lock = asyncio.Lock()
        self._tokens: list[Token[TurnScope | None]] = []

    async def servers(self) -> Mapping[str, MCPServerConfig]:
        """This turn's user's servers by name, each with its headers (its own audience's token)."""
        clock = self.service.clock
        if self._resolved is None or clock() >= self._resolved[1]:
            async with self._lock:  # one resolution per turn; a cancelled one leaves it to the next caller
                if self._resolved is None or clock() >= self._resolved[1]:
                    found = await self.service.list_tool_servers(self.turn_context, *self.args)
                    skew = self.service.configuration.token_expiry_skew
                    lifetime = min((token_lifetime(s.headers, skew) for s in found), default=math.inf)
                    self._resolved = ({s.mcp_server_name: s for s in found}, clock() + max(lifetime, 0.0))
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

    async def __aenter__(self) -> Self:
        return self.__enter__()

    async def __aexit__(self, *_: object) -> None:
        self.__exit__()

    def __repr__(self) -> str:
        who = self.identity
        return f"TurnScope(user={who and who.user_id!r}, conversation={who and who.conversation_id!r})"


def _who(identity: TurnIdentity | None) -> tuple[str | None, ...] | None:
    return None if identity is None else (identity.tenant_id, identity.user_id, identity.agent_id)


class CallTime:
    """What a tool or server holds instead of a user's token: how to resolve the current turn's servers.

    ``authorization`` and ``auth_handler_name`` are the app's (one for every user); ``registered`` is the
    scope of the turn that registered the tools, if any (its ``auth_token``, if given, serves that turn only).
    """

    __slots__ = ("args", "registered", "service")

    def __init__(
        self,
        service: McpToolServerConfigurationService,
        authorization: Any = None,
        auth_handler_name: str | None = None,
        options: ToolOptions | None = None,
        registered: TurnScope | None = None,
    ) -> None:
        self.service, self.args, self.registered = (
            service,
            (authorization, auth_handler_name, options),
            registered,
        )

    def scope(self, context: Any = None, *, what: str = "this MCP request") -> TurnScope:
        """The turn ``context`` names, else the task's; :class:`UnknownTurnError` when none is known."""
        if isinstance(context, TurnScope):
            return context
        current = _current.get()
        turn_context = context if getattr(context, "activity", None) is not None else None
        turn_context = turn_context or getattr(context, "turn_context", None)
        if turn_context is None and isinstance(context, TurnIdentity):  # an identity alone: a scope it names
            found = next(
                (s for s in (current, self.registered) if s and _who(s.identity) == _who(context)), None
            )
            if found is None:
                raise TurnMismatchError(
                    f"{what} was not sent: no turn of this identity is known here; {_HOW}"
                )
            return found
        if turn_context is None:
            if current is None:
                raise UnknownTurnError(f"{what} was not sent: no turn is known for it; {_HOW}")
            turn_context = current.turn_context
        known = next((s for s in (current, self.registered) if s and s.turn_context is turn_context), None)
        return self._scope(turn_context, known)

    def _scope(self, turn_context: Any, known: TurnScope | None) -> TurnScope:
        # The turn's own authorization, handler and token (a registration's auth_token serves its turn only),
        # else the binding's; this binding's options (the orchestrator in User-Agent).
        k_auth, k_handler, token, k_options = known.args if known is not None else (None, None, None, None)
        auth, handler, options = self.args
        args = (k_auth or auth, k_handler or handler, token, options or k_options)
        if known is not None and all(a is b for a, b in zip(args, known.args, strict=True)):
            return known
        # One scope per turn and binding, kept in the turn's own state: it lives and dies with the turn.
        state = getattr(turn_context, "turn_state", None)
        memo = state.setdefault(_MEMO, {}) if isinstance(state, dict) else {}
        key = (id(self.service), *map(id, args))
        if (scope := memo.get(key)) is None:
            scope = memo[key] = TurnScope(self.service, turn_context, *args)
        return scope

    async def server(self, name: str, context: Any = None) -> MCPServerConfig:
        """``name``'s config in the current turn: its user's headers and token. Raises
        :class:`UnknownTurnError` (no turn known) or :class:`ToolServerNotGivenError` (not this user's)."""
        what = f"MCP server {name!r}"
        config = (await self.scope(context, what=what).servers()).get(name)
        if config is None:
            raise ToolServerNotGivenError(f"{what} is not one of this user's servers: the call was not sent")
        return config


def refusal(error: Exception) -> CallToolResult:
    """A call refused before it was sent, as the tool error result the model gets."""
    return CallToolResult(content=[TextContent(type="text", text=str(error))], isError=True)
