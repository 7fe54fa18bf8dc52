"""The ``mail`` server kind: send, list and search emails in an in-memory mailbox."""

from __future__ import annotations

import itertools
import threading
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from agents_a365.emulator._tools._base import ToolFailure, ToolSpec, check_email

__all__ = ["Email", "MailState", "mail_tools"]

MAILBOX_OWNER = "agent@contoso.example"


@dataclass
class Email:
    """One email in the emulated mailbox."""

    id: str
    sender: str
    to: list[str]
    subject: str
    body: str
    folder: str
    timestamp: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _seed() -> list[Email]:
    rows = [
        ("alice@contoso.example", "Quarterly report", "Please review the Q3 report before Friday."),
        ("bob@contoso.example", "Lunch on Thursday?", "Are you free for lunch on Thursday at noon?"),
        ("it-support@contoso.example", "Password expiry", "Your password expires in 7 days."),
    ]
    return [
        Email(
            id=f"inbox-{i}",
            sender=sender,
            to=[MAILBOX_OWNER],
            subject=subject,
            body=body,
            folder="inbox",
            timestamp=f"2025-01-0{i}T09:00:00+00:00",
        )
        for i, (sender, subject, body) in enumerate(rows, start=1)
    ]


@dataclass
class MailState:
    """Mailbox of one ``mail`` server: ``inbox`` (seeded) and ``sent`` (filled by ``send_email``)."""

    inbox: list[Email] = field(default_factory=_seed)
    sent: list[Email] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1), repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def reset(self) -> None:
        with self._lock:
            self.inbox = _seed()
            self.sent = []
            self._ids = itertools.count(1)

    def send(self, to: list[str], subject: str, body: str) -> Email:
        with self._lock:
            email = Email(
                id=f"sent-{next(self._ids)}",
                sender=MAILBOX_OWNER,
                to=to,
                subject=subject,
                body=body,
                folder="sent",
                timestamp=datetime.now(UTC).isoformat(),
            )
            self.sent.append(email)
            return email

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {"inbox": [e.to_dict() for e in self.inbox], "sent": [e.to_dict() for e in self.sent]}


class SendEmailArgs(BaseModel):
    to: str = Field(description="Recipient address; several may be separated by commas or semicolons")
    subject: str
    body: str


class ListEmailsArgs(BaseModel):
    folder: Literal["inbox", "sent"] = "inbox"
    limit: int = Field(default=10, ge=1, le=100)


class SearchEmailsArgs(BaseModel):
    query: str = Field(min_length=1)


def mail_tools(state: MailState) -> list[ToolSpec]:
    """The tools of a ``mail`` server bound to ``state``."""

    def send_email(args: SendEmailArgs) -> dict[str, Any]:
        recipients = [part for part in args.to.replace(";", ",").split(",") if part.strip()]
        if not recipients:
            raise ToolFailure("Invalid email address: no recipient given")
        email = state.send([check_email(r) for r in recipients], args.subject, args.body)
        return {"status": "sent", "id": email.id, "to": email.to}

    def list_emails(args: ListEmailsArgs) -> list[dict[str, Any]]:
        emails = state.inbox if args.folder == "inbox" else state.sent
        return [e.to_dict() for e in list(emails)[: args.limit]]

    def search_emails(args: SearchEmailsArgs) -> list[dict[str, Any]]:
        needle = args.query.lower()
        return [
            e.to_dict()
            for e in [*state.inbox, *state.sent]
            if needle in e.subject.lower() or needle in e.body.lower() or needle in e.sender.lower()
        ]

    return [
        ToolSpec("send_email", "Send an email from the agent's mailbox.", SendEmailArgs, send_email),
        ToolSpec("list_emails", "List emails in a folder (inbox or sent).", ListEmailsArgs, list_emails),
        ToolSpec(
            "search_emails", "Search emails by subject, body or sender.", SearchEmailsArgs, search_emails
        ),
    ]
