"""The neutral conversation table, the scenarios, and what the platform must receive for each.

Every extension adapter turns these neutral messages into its native types; the contract is
that the emulator then receives exactly :func:`expected_history` from every one of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Image:
    url: str


Part = Text | Image


@dataclass(frozen=True)
class Message:
    role: Role
    content: str | tuple[Part, ...]
    id: str | None = None
    call_id: str = "call-1"  # tool results only


@dataclass(frozen=True)
class Scenario:
    name: str
    messages: tuple[Message, ...]
    limit: int | None = None
    tags: frozenset[str] = field(default_factory=frozenset)


GENERATED = "<generated>"


def expected_text(message: Message) -> str | None:
    """The rule both extensions follow: a string as is; text parts joined by one space;
    non-text parts ignored; blank text means the message is skipped."""
    if isinstance(message.content, str):
        text = message.content
    else:
        text = " ".join(p.text for p in message.content if isinstance(p, Text) and p.text.strip())
    return text if text.strip() else None


def expected_history(scenario: Scenario) -> list[tuple[str, str, str]]:
    """(role, content, id or GENERATED) for every message the platform must receive."""
    messages = scenario.messages
    if scenario.limit is not None:  # the most recent N messages, then skipping
        messages = messages[len(messages) - scenario.limit :] if scenario.limit else ()
    result: list[tuple[str, str, str]] = []
    for message in messages:
        text = expected_text(message)
        if text is not None:
            result.append((message.role, text, message.id or GENERATED))
    return result


def _long(n: int) -> tuple[Message, ...]:
    out: list[Message] = []
    for i in range(n):
        role: Role = "user" if i % 2 == 0 else "assistant"
        out.append(Message(role, f"message {i} " + "é" * (i % 7), id=f"long-{i}" if i % 3 else None))
    return tuple(out)


ROLES = (
    Message("system", "You are a scheduling assistant.", id="sys-1"),
    Message("user", "Book a meeting with Ada tomorrow at 10.", id="user-1"),
    Message("assistant", "Let me check the calendar.", id="asst-1"),
    Message("tool", '{"free": ["10:00-11:00"]}', id="tool-1", call_id="call-42"),
    Message("assistant", "Booked 10:00-11:00.", id="asst-2"),
)

SCENARIOS: tuple[Scenario, ...] = (
    Scenario("roles", ROLES),
    Scenario(
        "text_parts",
        (
            Message("user", (Text("first part"), Text("second part"), Text("third")), id="parts-1"),
            Message("assistant", (Text("answer"), Text("continued")), id="parts-2"),
        ),
    ),
    Scenario(
        "non_text_parts",
        (
            Message(
                "user", (Text("what is in this picture?"), Image("https://example.test/cat.png")), id="img-1"
            ),
            Message("user", (Image("https://example.test/only-image.png"),), id="img-2"),
            Message("assistant", "A cat.", id="img-3"),
        ),
    ),
    Scenario(
        "empty_messages",
        (
            Message("user", "hello", id="e-1"),
            Message("assistant", "", id="e-2"),
            Message("assistant", "   \n\t", id="e-3"),
            Message("user", (Text(""), Text("  ")), id="e-4"),
            Message("assistant", "still here", id="e-5"),
        ),
    ),
    Scenario(
        "ids_kept_or_generated",
        (
            Message("user", "with id", id="keep-me"),
            Message("assistant", "without id"),
            Message("tool", "tool output without id", call_id="call-7"),
            Message("user", "another with id", id="keep-me-too"),
        ),
    ),
    Scenario(
        "unicode",
        (
            Message("user", "Réunion à 10h ☕ — 会議 — اجتماع 🚀", id="u-1"),
            Message("assistant", "ok\nmulti-line\ttext", id="u-2"),
        ),
    ),
    Scenario("long_conversation", _long(400), tags=frozenset({"long"})),
    Scenario("limit_most_recent", _long(50) + ROLES, limit=4),
    Scenario("limit_over_empty", (*ROLES[:2], Message("assistant", "", id="blank")), limit=2),
    Scenario("limit_zero", ROLES, limit=0),
    Scenario("empty_list", ()),
)
