"""The ``notes`` server kind: a trivial note list (useful for benchmarks needing many servers)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from agents_a365.emulator._tools._base import ToolSpec

__all__ = ["NotesState", "notes_tools"]


@dataclass
class NotesState:
    """Notes of one ``notes`` server."""

    notes: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def reset(self) -> None:
        with self._lock:
            self.notes = []

    def add(self, text: str) -> dict[str, Any]:
        with self._lock:
            note = {"id": len(self.notes) + 1, "text": text}
            self.notes.append(note)
            return note

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {"notes": [dict(n) for n in self.notes]}


class AddNoteArgs(BaseModel):
    text: str = Field(min_length=1)


class ListNotesArgs(BaseModel):
    pass


def notes_tools(state: NotesState) -> list[ToolSpec]:
    """The tools of a ``notes`` server bound to ``state``."""

    def add_note(args: AddNoteArgs) -> dict[str, Any]:
        return state.add(args.text)

    def list_notes(_: ListNotesArgs) -> list[dict[str, Any]]:
        return [dict(n) for n in state.notes]

    return [
        ToolSpec("add_note", "Add a note.", AddNoteArgs, add_note),
        ToolSpec("list_notes", "List all notes.", ListNotesArgs, list_notes),
    ]
