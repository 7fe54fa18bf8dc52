"""The one header builder behind every outgoing request."""

from __future__ import annotations

import re
import uuid
from typing import Any
from urllib.parse import quote

from agents_a365.runtime import TurnContextLike, get_agent_id_from_token, get_application_name
from agents_a365.runtime import get_user_agent_header as _user_agent

from ._turn import Turn, read_turn
from .constants import Headers
from .models import ToolOptions

__all__ = ["TOOLING_DISTRIBUTION", "build_request_headers", "clean_header_value", "resolve_agent_id_header"]

TOOLING_DISTRIBUTION = "agents-a365-tooling"

# CR/LF would split a header (injection); other control characters are invalid in values.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


# Printable ASCII stays as is when a value must be percent-encoded (only its non-ASCII characters are).
_PRINTABLE_ASCII = "".join(chr(c) for c in range(0x20, 0x7F) if chr(c) != "%")


def clean_header_value(value: object) -> str:
    """The value with control characters (CR, LF, NUL, …) removed and whitespace trimmed.

    HTTP header values are ASCII (httpx raises ``UnicodeEncodeError`` otherwise): a value with
    non-ASCII text (a sub-channel, a blueprint id) is sent percent-encoded as UTF-8 instead.
    """
    cleaned = _CONTROL.sub("", str(value)).strip()
    if cleaned.isascii():
        return cleaned
    return quote(cleaned, safe=_PRINTABLE_ASCII, errors="surrogatepass")


def resolve_agent_id_header(
    turn_context: TurnContextLike | Turn | None, identity_token: str | None
) -> str | None:
    """``x-ms-agentid``: the sender's agentic app blueprint id, then token claims, then the app name."""
    turn = turn_context if isinstance(turn_context, Turn) else read_turn(turn_context)
    return turn.blueprint_id or get_agent_id_from_token(identity_token) or get_application_name()


def build_request_headers(
    turn_context: TurnContextLike | Turn | None,
    *,
    auth_token: str | None = None,
    identity_token: str | None = None,
    orchestrator_name: str | None = None,
    correlation_id: bool = False,
    distribution: str | None = None,
) -> dict[str, str]:
    """Headers for a request to the platform.

    ``auth_token`` is sent as ``Authorization: Bearer``; ``identity_token`` (default:
    ``auth_token``) is only read for the ``x-ms-agentid`` claims and never sent. With
    ``correlation_id``, ``x-ms-correlation-id`` carries the activity id (else a new uuid).
    ``User-Agent`` carries the version of ``distribution``, the sending package (default: tooling).
    Every value is stripped of control characters; empty values are left out.
    """
    # The service's parts pass the turn their API edge read (a Turn); anyone else a TurnContext, read here.
    turn = turn_context if isinstance(turn_context, Turn) else read_turn(turn_context)
    headers: dict[str, str] = {}

    def put(name: str, value: object) -> None:
        if value is not None and (cleaned := clean_header_value(value)):
            headers[name] = cleaned

    if auth_token:
        put(Headers.AUTHORIZATION, f"Bearer {auth_token}")
    put(Headers.USER_AGENT, _user_agent(orchestrator_name, distribution=distribution or TOOLING_DISTRIBUTION))
    put(Headers.AGENT_ID, resolve_agent_id_header(turn, identity_token or auth_token))
    if turn.identity is not None:
        put(Headers.CHANNEL_ID, turn.identity.channel)
        put(Headers.SUBCHANNEL_ID, turn.identity.sub_channel)
    if correlation_id:
        put(Headers.CORRELATION_ID, turn.message_id)
        headers.setdefault(Headers.CORRELATION_ID, str(uuid.uuid4()))  # no id, or one cleaned to nothing
    return headers


def request_headers(turn: Turn, options: ToolOptions | None, **fields: Any) -> dict[str, str]:
    """:func:`build_request_headers` for ``turn`` with the orchestrator name and distribution of ``options``
    (the service's parts: discovery, threat protection)."""
    if options is not None:
        fields.update(orchestrator_name=options.orchestrator_name, distribution=options.distribution)
    return build_request_headers(turn, **fields)
