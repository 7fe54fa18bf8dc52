"""The registration-time turn guard, kept for extensions built on it: compare a server's stamped identity with
the run's context, else the task's turn scope. This SDK's own extensions resolve identity at call time
(``_turn_scope.py``) and no longer need it.
"""

from __future__ import annotations

from typing import Any

from ._turn import TurnIdentity, read_turn
from ._turn_scope import current_scope
from .errors import TurnMismatchError

__all__ = ["check_turn", "identity_of"]


def identity_of(context: Any) -> TurnIdentity | None:
    """The identity a run's context carries: a :class:`TurnIdentity`, or a ``TurnContext``'s activity (one that
    names no tenant, user or agent carries none)."""
    return context if isinstance(context, TurnIdentity) else read_turn(context).guarded


def _who(identity: TurnIdentity) -> tuple[str | None, str | None, str | None]:
    return identity.tenant_id, identity.user_id, identity.agent_id


def check_turn(bound: TurnIdentity | None, context: Any = None, *, what: str) -> None:
    """Raise :class:`TurnMismatchError` when ``what`` (registered for ``bound``) is used in another identity's
    turn: the one ``context`` carries, else the calling task's. Unknown identities are not compared."""
    scope = current_scope()
    current = identity_of(context) or (scope.identity if scope is not None else None)
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
