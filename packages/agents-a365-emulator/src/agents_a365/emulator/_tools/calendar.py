"""The ``calendar`` server kind: create and list events, find free time (09:00-17:00 UTC)."""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from pydantic import BaseModel, Field

from agents_a365.emulator._tools._base import ToolFailure, ToolSpec, check_email

__all__ = ["CalendarState", "Event", "calendar_tools"]

WORKDAY_START = time(9, 0)
WORKDAY_END = time(17, 0)


@dataclass
class Event:
    """One calendar event (times normalised to UTC)."""

    id: str
    title: str
    start: datetime
    end: datetime
    attendees: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            "attendees": list(self.attendees),
        }


@dataclass
class CalendarState:
    """Events of one ``calendar`` server (initially empty)."""

    events: list[Event] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1), repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def reset(self) -> None:
        with self._lock:
            self.events = []
            self._ids = itertools.count(1)

    def add(self, title: str, start: datetime, end: datetime, attendees: list[str]) -> Event:
        with self._lock:
            event = Event(f"event-{next(self._ids)}", title, start, end, attendees)
            self.events.append(event)
            return event

    def on(self, day: date) -> list[Event]:
        with self._lock:
            return sorted((e for e in self.events if e.start.date() == day), key=lambda e: e.start)

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {"events": [e.to_dict() for e in self.events]}


def _parse_datetime(value: str, field_name: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ToolFailure(f"'{field_name}' is not an ISO-8601 datetime: {value!r}") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def _parse_date(value: str) -> date:
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        raise ToolFailure(f"'date' is not an ISO-8601 date (YYYY-MM-DD): {value!r}") from None


class CreateEventArgs(BaseModel):
    title: str = Field(min_length=1)
    start: str = Field(description="ISO-8601 start datetime (UTC if no offset)")
    end: str = Field(description="ISO-8601 end datetime (UTC if no offset)")
    attendees: list[str] = Field(default_factory=list)


class ListEventsArgs(BaseModel):
    date: str = Field(description="Day as YYYY-MM-DD (UTC)")


class FindFreeTimeArgs(BaseModel):
    date: str = Field(description="Day as YYYY-MM-DD (UTC)")
    duration_minutes: int = Field(ge=1, le=480)


def free_slots(events: list[Event], day: date, duration: timedelta) -> list[tuple[datetime, datetime]]:
    """Gaps of at least ``duration`` between ``events`` within the working hours of ``day`` (UTC)."""
    cursor = datetime.combine(day, WORKDAY_START, tzinfo=UTC)
    day_end = datetime.combine(day, WORKDAY_END, tzinfo=UTC)
    slots: list[tuple[datetime, datetime]] = []
    for event in sorted(events, key=lambda e: e.start):
        if event.end <= cursor or event.start >= day_end:
            continue
        if event.start - cursor >= duration:
            slots.append((cursor, event.start))
        cursor = max(cursor, event.end)
    if day_end - cursor >= duration:
        slots.append((cursor, day_end))
    return slots


def calendar_tools(state: CalendarState) -> list[ToolSpec]:
    """The tools of a ``calendar`` server bound to ``state``."""

    def create_event(args: CreateEventArgs) -> dict[str, Any]:
        start = _parse_datetime(args.start, "start")
        end = _parse_datetime(args.end, "end")
        if end <= start:
            raise ToolFailure(f"Event end ({args.end}) must be after its start ({args.start})")
        attendees = [check_email(a) for a in args.attendees]
        return {"status": "created", **state.add(args.title, start, end, attendees).to_dict()}

    def list_events(args: ListEventsArgs) -> list[dict[str, Any]]:
        return [e.to_dict() for e in state.on(_parse_date(args.date))]

    def find_free_time(args: FindFreeTimeArgs) -> list[dict[str, str]]:
        day = _parse_date(args.date)
        slots = free_slots(state.on(day), day, timedelta(minutes=args.duration_minutes))
        return [{"start": s.isoformat(), "end": e.isoformat()} for s, e in slots]

    return [
        ToolSpec("create_event", "Create a calendar event.", CreateEventArgs, create_event),
        ToolSpec("list_events", "List the events of a day.", ListEventsArgs, list_events),
        ToolSpec(
            "find_free_time",
            "Find free slots of at least duration_minutes within working hours (09:00-17:00 UTC).",
            FindFreeTimeArgs,
            find_free_time,
        ),
    ]
