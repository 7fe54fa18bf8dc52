"""The orchestrator-neutral state machine behind every converter.

It knows which text, reasoning and tool-input parts are open and emits the chunks that keep the client's
state machine valid (``*-start`` before ``*-delta``, every open part ended, every tool part finishing in a
terminal state). Memory is bounded by what is open: no text is accumulated, only the argument pieces of
tool calls whose input is still streaming, the ids of tool calls waiting for their output, and the ids seen
in the current step (to drop the duplicates some orchestrators emit in two stream modes).
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from . import chunks as c
from ._json import ArgumentsParser, output_as_json, parse_arguments
from ._steps import StepState
from .sse import to_jsonable

__all__ = ["UIMessageStreamState"]


_UNFINISHED_TOOL_TEXT = "The tool call did not complete."


def _dumps(value: Any) -> str:
    return json.dumps(value, default=to_jsonable, ensure_ascii=False)


@dataclass(slots=True)
class _ToolInput:
    """A tool call whose arguments are still streaming."""

    tool_call_id: str | None
    tool_name: str | None
    pieces: list[str] = field(default_factory=list)
    started: bool = False


class UIMessageStreamState(StepState):
    """Builds a valid chunk sequence for one assistant message; converters call it, then ``drain()``."""

    __slots__ = ("_awaiting", "_input_errors", "_parser", "_tool_inputs")

    def __init__(
        self, message_id: str | None = None, *, arguments_parser: ArgumentsParser | None = None
    ) -> None:
        super().__init__(message_id)
        self._parser = arguments_parser
        self._tool_inputs: dict[Hashable, _ToolInput] = {}
        self._awaiting: dict[str, str] = {}  # tool call id -> tool name, until its output arrives
        self._input_errors: set[str] = set()  # awaiting calls whose arguments were invalid

    # -- introspection (tests and benchmarks check that memory stays bounded) --------------------------

    @property
    def buffer_sizes(self) -> dict[str, int]:
        """How much is held right now: open tool inputs, their pieces, awaited outputs, ids seen this step."""
        return {
            "tool_inputs": len(self._tool_inputs),
            "tool_input_pieces": sum(len(t.pieces) for t in self._tool_inputs.values()),
            "awaiting_outputs": len(self._awaiting),
            "step_seen": len(self._step_seen),
            "pending_chunks": len(self._out),
        }

    def end_model_output(self) -> None:
        """The model finished its message: end open text/reasoning and finalize streamed tool inputs."""
        super().end_model_output()
        for key in list(self._tool_inputs):
            self.tool_input_end(key)

    # -- tool inputs -----------------------------------------------------------------------------------

    def tool_input_chunk(
        self,
        key: Hashable,
        *,
        tool_call_id: str | None = None,
        tool_name: str | None = None,
        delta: str | None = None,
    ) -> None:
        """One streamed piece of a tool call; ``key`` (e.g. the provider's index) correlates the pieces.

        Only the first piece usually carries the id and name: the call is announced as soon as both are
        known, pieces received before that are sent as one delta then.
        """
        call = self._tool_inputs.get(key)
        if call is None:
            self.end_text()
            self.end_reasoning()
            self.ensure_step()
            call = self._tool_inputs[key] = _ToolInput(tool_call_id or None, tool_name or None)
        else:
            if tool_call_id and call.tool_call_id is None:
                call.tool_call_id = tool_call_id
            if tool_name and call.tool_name is None:
                call.tool_name = tool_name
        if delta:
            call.pieces.append(delta)
        if call.started:
            if delta:
                self._out.append(c.tool_input_delta_chunk(call.tool_call_id or "", delta))
        elif call.tool_call_id is not None and call.tool_name is not None:
            self._announce(call)

    def _announce(self, call: _ToolInput) -> None:
        call.started = True
        self._step_had_tool_calls = True
        self._out.append(c.tool_input_start_chunk(call.tool_call_id or "", call.tool_name or ""))
        if call.pieces:
            buffered = "".join(call.pieces)
            call.pieces = [buffered]  # keep one piece: arguments are parsed once, at the end
            self._out.append(c.tool_input_delta_chunk(call.tool_call_id or "", buffered))

    def has_tool_input(self, key: Hashable) -> bool:
        return key in self._tool_inputs

    def tool_input_end(self, key: Hashable, arguments: str | None = None) -> str | None:
        """The arguments of ``key`` are complete: parse them once and emit ``tool-input-available``/``-error``.

        ``arguments`` (the provider's final argument text) wins over the streamed pieces when given.
        Returns the tool call id.
        """
        call = self._tool_inputs.pop(key, None)
        if call is None:
            return None
        if call.tool_call_id is None:
            # The provider never sent an id: invent a stable one so input and output still pair up.
            call.tool_call_id = self._new_id("call")
        if call.tool_name is None:
            call.tool_name = "unknown"
        if not call.started:
            self._announce(call)
        text = arguments if arguments is not None else "".join(call.pieces)
        call.pieces = []
        self._input_available(call.tool_call_id, call.tool_name, text)
        return call.tool_call_id

    def _input_available(self, tool_call_id: str, tool_name: str, arguments: str | Any) -> None:
        if isinstance(arguments, str):
            ok, value, error = parse_arguments(arguments, self._parser)
        else:
            ok, value, error = True, arguments, ""
        self._awaiting[tool_call_id] = tool_name
        self._step_seen.add(tool_call_id)
        if ok:
            self._out.append(c.tool_input_available_chunk(tool_call_id, tool_name, value))
        else:
            self._input_errors.add(tool_call_id)
            self._out.append(c.tool_input_error_chunk(tool_call_id, tool_name, value, error))

    def tool_call(self, tool_call_id: str, tool_name: str, arguments: str | Any) -> None:
        """A complete (non-streamed) tool call; ignored when this call was already announced."""
        if tool_call_id in self._awaiting or tool_call_id in self._step_seen:
            return
        for key, call in self._tool_inputs.items():
            if call.tool_call_id == tool_call_id:
                self.tool_input_end(key, arguments if isinstance(arguments, str) else None)
                return
        self.end_text()
        self.end_reasoning()
        self.ensure_step()
        self._step_had_tool_calls = True
        self._out.append(c.tool_input_start_chunk(tool_call_id, tool_name))
        self._input_available(tool_call_id, tool_name, arguments)

    # -- tool outputs ----------------------------------------------------------------------------------

    def tool_output(self, tool_call_id: str, output: Any, *, tool_name: str | None = None) -> None:
        """The tool returned; JSON text is sent as JSON. Duplicates (same id, same step) are dropped."""
        if not self._prepare_output(tool_call_id, tool_name):
            return
        self._awaiting.pop(tool_call_id, None)
        self._out.append(c.tool_output_available_chunk(tool_call_id, output_as_json(output)))

    def tool_error(self, tool_call_id: str, error_text: str, *, tool_name: str | None = None) -> None:
        """The tool failed; the part ends in state ``output-error``."""
        if not self._prepare_output(tool_call_id, tool_name):
            return
        self._input_errors.discard(tool_call_id)
        self._awaiting.pop(tool_call_id, None)
        self._out.append(c.tool_output_error_chunk(tool_call_id, error_text or "Tool error."))

    def tool_result(
        self, tool_call_id: str, output: Any, *, is_error: bool, tool_name: str | None = None
    ) -> None:
        """Output or error; a result for a call whose arguments were invalid is always an error."""
        if is_error or tool_call_id in self._input_errors:
            text = output if isinstance(output, str) else _dumps(output)
            self.tool_error(tool_call_id, text, tool_name=tool_name)
        else:
            self.tool_output(tool_call_id, output, tool_name=tool_name)

    def _prepare_output(self, tool_call_id: str, tool_name: str | None) -> bool:
        if tool_call_id in self._awaiting:
            self._step_seen.add(("output", tool_call_id))
            return True
        if ("output", tool_call_id) in self._step_seen:
            return False  # the same result reported twice (e.g. ``messages`` and ``updates`` modes)
        for key, call in self._tool_inputs.items():
            if call.tool_call_id == tool_call_id:
                self.tool_input_end(key)
                self._step_seen.add(("output", tool_call_id))
                return True
        # A result for a call the stream never showed (e.g. a tool the graph called by itself): announce
        # the call first, the client rejects outputs for unknown tool call ids.
        self.end_text()
        self.end_reasoning()
        self.ensure_step()
        name = tool_name or "unknown"
        self._out.append(c.tool_input_start_chunk(tool_call_id, name))
        self._out.append(c.tool_input_available_chunk(tool_call_id, name, {}))
        self._step_seen.add(("output", tool_call_id))
        return True

    # -- end of stream ---------------------------------------------------------------------------------

    def error(self, error_text: str) -> None:
        """Report a failure of the run; the message is still finished cleanly by ``finish()``."""
        self.start()
        self.end_model_output()
        self._out.append(c.error_chunk(error_text))
        self.finish_reason = "error"

    def finish(self, metadata: Any = None) -> None:
        """End every open part, fail calls that never got an output, close the step and the message."""
        if self._finished:
            return
        self.start()
        self.end_model_output()
        for tool_call_id in list(self._awaiting):
            self._awaiting.pop(tool_call_id)
            if tool_call_id in self._input_errors:
                self._input_errors.discard(tool_call_id)  # already terminal: keep the argument error
                continue
            self._out.append(c.tool_output_error_chunk(tool_call_id, _UNFINISHED_TOOL_TEXT))
        had_tool_calls = self._step_had_tool_calls
        if self._step_open:
            self._close_step()
        reason = self.finish_reason or ("tool-calls" if had_tool_calls else "stop")
        self._out.append(c.finish_chunk(reason, metadata))
        self._finished = True
