"""Message, steps, text and reasoning parts of the UI stream state (tool parts: ``state.py``)."""

from __future__ import annotations

import uuid
from collections.abc import Hashable
from typing import Any

from . import chunks as c
from .chunks import FinishReason, UIChunk

__all__ = ["StepState"]


class StepState:
    """Which message, step, text and reasoning parts are open; emits the chunks that keep them valid."""

    __slots__ = (
        "_counter",
        "_finished",
        "_out",
        "_reasoning_id",
        "_reasoning_key",
        "_started",
        "_step_had_tool_calls",
        "_step_model_id",
        "_step_open",
        "_step_seen",
        "_text_id",
        "_text_key",
        "finish_reason",
        "message_id",
    )

    def __init__(self, message_id: str | None = None) -> None:
        self.message_id = message_id or f"msg_{uuid.uuid4().hex}"
        self.finish_reason: FinishReason | None = None
        """Set by converters from the provider's stop reason; ``finish()`` derives one otherwise."""
        self._out: list[UIChunk] = []
        self._counter = 0
        self._started = False
        self._finished = False
        self._step_open = False
        self._step_model_id: Hashable | None = None
        self._step_seen: set[Hashable] = set()
        self._step_had_tool_calls = False
        self._text_id: str | None = None
        self._text_key: Hashable | None = None
        self._reasoning_id: str | None = None
        self._reasoning_key: Hashable | None = None

    @property
    def finished(self) -> bool:
        return self._finished

    def drain(self) -> list[UIChunk]:
        """The chunks produced since the last call."""
        out = self._out
        self._out = []
        return out

    def _new_id(self, prefix: str) -> str:
        self._counter += 1
        return f"{prefix}_{self._counter}"

    # -- message and steps -----------------------------------------------------------------------------

    def start(self, metadata: Any = None) -> None:
        if not self._started:
            self._started = True
            self._out.append(c.start_chunk(self.message_id, metadata))

    def start_step(self) -> None:
        """Close the current step (if any) and open a new one."""
        self.start()
        if self._step_open:
            self._close_step()
        self._step_open = True
        self._step_model_id = None
        self._step_had_tool_calls = False
        self._out.append(c.start_step_chunk())

    def ensure_step(self) -> None:
        if not self._step_open:
            self.start_step()

    def _close_step(self) -> None:
        self.end_model_output()
        self._step_open = False
        self._step_seen.clear()
        self._out.append(c.finish_step_chunk())

    def model_message(self, message_id: Hashable | None) -> None:
        """Output of model message ``message_id`` follows: a new model message starts a new step.

        Tool results stay in the step of the model call that requested them, as in the AI SDK.
        """
        if message_id is not None and message_id == self._step_model_id:
            return
        if not self._step_open or self._step_model_id is not None:
            self.start_step()
        self._step_model_id = message_id

    def seen(self, key: Hashable) -> bool:
        """Whether ``key`` was marked in the current step (used to drop duplicate messages)."""
        return key in self._step_seen

    def mark_seen(self, key: Hashable) -> None:
        self._step_seen.add(key)

    def end_model_output(self) -> None:
        """The model finished its message: end open text and reasoning."""
        self.end_text()
        self.end_reasoning()

    # -- text and reasoning ----------------------------------------------------------------------------

    def text_delta(self, delta: str, key: Hashable | None = None) -> None:
        if not delta:
            return
        if self._text_id is None or key != self._text_key:
            self.end_text()
            self.end_reasoning()
            self.ensure_step()
            self._text_id = self._new_id("text")
            self._text_key = key
            self._out.append(c.text_start_chunk(self._text_id))
        self._out.append(c.text_delta_chunk(self._text_id, delta))

    def end_text(self) -> None:
        if self._text_id is not None:
            self._out.append(c.text_end_chunk(self._text_id))
            self._text_id = None
            self._text_key = None

    def reasoning_delta(self, delta: str, key: Hashable | None = None) -> None:
        if not delta:
            return
        if self._reasoning_id is None or key != self._reasoning_key:
            self.end_reasoning()
            self.end_text()
            self.ensure_step()
            self._reasoning_id = self._new_id("reasoning")
            self._reasoning_key = key
            self._out.append(c.reasoning_start_chunk(self._reasoning_id))
        self._out.append(c.reasoning_delta_chunk(self._reasoning_id, delta))

    def end_reasoning(self) -> None:
        if self._reasoning_id is not None:
            self._out.append(c.reasoning_end_chunk(self._reasoning_id))
            self._reasoning_id = None
            self._reasoning_key = None
