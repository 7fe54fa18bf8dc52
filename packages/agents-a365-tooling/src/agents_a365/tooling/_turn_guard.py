"""No token crosses users: an MCP server or tool registered for one turn identity refuses another's turn.

Registration (``list_tool_servers``) stamps each server with its turn's identity and marks that identity as
the calling task's current turn (a ``ContextVar``: tasks the turn starts, the agent's run included, inherit
it). Before an MCP request, the extensions compare the server's identity with the run's context when it
carries one (a ``TurnIdentity`` or a ``TurnContext``), else with the task's current turn.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from ._turn import TurnIdentity, read_turn
from .errors import TurnMismatchError

__all__ = ["check_turn", "enter_turn", "identity_of"]

_current: ContextVar[TurnIdentity | None] = ContextVar("agents_a365_turn", default=None)


def enter_turn(identity: TurnIdentity | None) -> None:
    """The calling task (and the tasks it starts from now on) serves ``identity``'s turn."""
    if identity is not None:
        _current.set(identity)


def identity_of(context: Any) -> TurnIdentity | None:
    """The identity a run's context carries: a :class:`TurnIdentity`, or a ``TurnContext``'s activity (one that
    names no tenant, user or agent carries none)."""
    return context if isinstance(context, TurnIdentity) else read_turn(context).guarded


def _who(identity: TurnIdentity) -> tuple[str | None, str | None, str | None]:
    return identity.tenant_id, identity.user_id, identity.agent_id


def check_turn(bound: TurnIdentity | None, context: Any = None, *, what: str) -> None:
    """Raise :class:`TurnMismatchError` when ``what`` (registered for ``bound``) is used in another identity's
    turn: the one ``context`` carries, else the calling task's. Unknown identities are not compared."""
    current = identity_of(context) or _current.get()
    if bound is None or current is None or _who(current) == _who(bound):
        return
    differs = "; ".join(
        f"{name} {mine!r}, this turn's {theirs!r}"
        for name, mine, theirs in zip(("tenant", "user", "agent"), _who(bound), _who(current), strict=True)
        if mine != theirs
    )
    raise TurnMismatchError(
        f"{what} was registered for another turn ({differs}) and was not called: register the MCP servers "
        "in this turn (add_tool_servers_to_agent / get_mcp_tools) and run with context=turn_identity(turn_context)"
    )
