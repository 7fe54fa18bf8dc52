"""The orchestrator-neutral state machine behind every converter.

It knows which message, step, text, reasoning and tool-input parts are open and emits the chunks that keep
the client's state machine valid (``*-start`` before ``*-delta``, every open part ended, every tool part
finishing in a terminal state). Memory is bounded by what is open: no text is accumulated, only the argument
pieces of tool calls whose input is still streaming, the ids of tool calls waiting for their output, and the
ids seen in the current step (to drop the duplicates some orchestrators emit in two stream modes).
"""

from __future__ import annotations

import uuid
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Literal

from ._wire import ArgumentsParser, FinishReason, UIChunk, json_text, output_as_json, parse_arguments

_UNFINISHED_TOOL_TEXT = "The tool call did not complete."

PartKind = Literal["text", "reasoning"]

_NOT_STREAMED = object()


@dataclass(slots=True)
class _ToolInput:
    """A tool call whose arguments are still streaming."""

    tool_call_id: str | None = None
    tool_name: str | None = None
    pieces: list[str] = field(default_factory=list)
    started: bool = False


class UIMessageStreamState:
    """Builds a valid chunk sequence for one assistant message; converters call it, then ``drain()``."""

    def __init__(
        self, message_id: str | None = None, *, arguments_parser: ArgumentsParser | None = None
    ) -> None:
        self.message_id = message_id or f"msg_{uuid.uuid4().hex}"
        self.finish_reason: FinishReason | None = None
        """Set by converters from the provider's stop reason; ``finish()`` derives one otherwise."""
        self.finished = False
        # ``start`` is always the first chunk: the client sees the response begin before the agent's output.
        self._out: list[UIChunk] = [{"type": "start", "messageId": self.message_id}]
        self._counter = 0
        self._step_open = False
        self.step_model_id: Hashable | None = None
        """The model message the current step shows (see ``model_message``)."""
        self._step_seen: set[Hashable] = set()
        # The open text or reasoning part (at most one is open): (kind, part id, the converter's key).
        self._part: tuple[str, str, Hashable] | None = None
        self._parser = arguments_parser
        self._tool_inputs: dict[Hashable, _ToolInput] = {}
        # Tool call id -> whether its arguments were invalid, until its output arrives.
        self._awaiting: dict[str, bool] = {}

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

    def drain(self) -> list[UIChunk]:
        """The chunks produced since the last call."""
        out, self._out = self._out, []
        return out

    # -- message and steps -----------------------------------------------------------------------------

    def start_step(self) -> None:
        """Close the current step (if any) and open a new one."""
        self._close_step()
        self._step_open = True
        self.step_model_id = None
        self._out.append({"type": "start-step"})

    def _close_step(self) -> None:
        if self._step_open:
            self.end_model_output()
            self._step_open = False
            self._step_seen.clear()
            self._out.append({"type": "finish-step"})

    def _new_part(self) -> None:
        """End open text/reasoning and make sure a step is open before a new part starts."""
        self.end_part()
        if not self._step_open:
            self.start_step()

    def model_message(self, message_id: Hashable | None) -> None:
        """Output of model message ``message_id`` follows: a new model message starts a new step.

        Tool results stay in the step of the model call that requested them, as in the AI SDK.
        """
        if message_id is not None and message_id == self.step_model_id:
            return
        if not self._step_open or self.step_model_id is not None:
            self.start_step()
        self.step_model_id = message_id

    def end_model_output(self) -> None:
        """The model finished its message: end open text/reasoning and finalize streamed tool inputs."""
        self.end_part()
        for key in list(self._tool_inputs):
            self.tool_input_end(key)

    # -- text and reasoning ----------------------------------------------------------------------------

    def delta(self, kind: PartKind, delta: str, key: Hashable | None = None) -> None:
        """A piece of text or reasoning; a new part starts when the kind or the converter's ``key`` changes."""
        if not delta:
            return
        part = self._part
        if part is None or part[0] != kind or part[2] != key:
            self._new_part()
            self._counter += 1
            part = self._part = (kind, f"{kind}_{self._counter}", key)
            self._out.append({"type": f"{kind}-start", "id": part[1]})
        self._out.append({"type": f"{kind}-delta", "id": part[1], "delta": delta})

    def end_part(self) -> None:
        """End the open text or reasoning part, if any."""
        part = self._part
        if part is not None:
            self._out.append({"type": f"{part[0]}-end", "id": part[1]})
            self._part = None

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
            self._new_part()
            call = self._tool_inputs[key] = _ToolInput()
        call.tool_call_id = call.tool_call_id or tool_call_id or None
        call.tool_name = call.tool_name or tool_name or None
        if delta:
            call.pieces.append(delta)
            if call.started:
                self._tool("input-delta", call.tool_call_id, inputTextDelta=delta)
        if not call.started and call.tool_call_id is not None and call.tool_name is not None:
            self._announce(call)  # with every piece so far

    def _announce(self, call: _ToolInput) -> None:
        call.started = True
        self._tool("input-start", call.tool_call_id or "", toolName=call.tool_name or "")
        if call.pieces:
            self._tool("input-delta", call.tool_call_id, inputTextDelta="".join(call.pieces))

    def _tool(self, kind: str, tool_call_id: str | None, **fields: Any) -> None:
        self._out.append({"type": f"tool-{kind}", "toolCallId": tool_call_id, **fields})

    def tool_input_end(self, key: Hashable, arguments: str | Any = None) -> None:
        """The arguments of ``key`` are complete: parse them once and emit ``tool-input-available``/``-error``.

        ``arguments`` (the provider's final argument text, or its parsed value) wins over the streamed
        pieces when given.
        """
        call = self._tool_inputs.pop(key, None)
        if call is None:
            return
        tool_call_id = call.tool_call_id
        if tool_call_id is None:
            # The provider never sent an id: invent a stable one so input and output still pair up.
            self._counter += 1
            tool_call_id = call.tool_call_id = f"call_{self._counter}"
        call.tool_name = call.tool_name or "unknown"
        if not call.started:
            self._announce(call)
        if arguments is None:
            arguments = "".join(call.pieces)
        self._step_seen.add(tool_call_id)
        try:
            value = parse_arguments(arguments, self._parser) if isinstance(arguments, str) else arguments
        except ValueError as exc:
            self._awaiting[tool_call_id] = True
            error = f"Invalid JSON in tool arguments: {exc}"
            self._tool("input-error", tool_call_id, toolName=call.tool_name, input=arguments, errorText=error)
        else:
            self._awaiting[tool_call_id] = False
            self._tool("input-available", tool_call_id, toolName=call.tool_name, input=value)

    def tool_call(self, tool_call_id: str, tool_name: str, arguments: str | Any) -> None:
        """A complete tool call (arguments as text or parsed); ignored when this call was already announced.

        A call whose arguments are still streaming ends with them (its streamed text wins over parsed
        arguments: it is what the provider parsed).
        """
        if tool_call_id in self._awaiting or tool_call_id in self._step_seen:
            return
        streaming = (key for key, call in self._tool_inputs.items() if call.tool_call_id == tool_call_id)
        key = next(streaming, (_NOT_STREAMED, tool_call_id))
        if key not in self._tool_inputs:
            self.tool_input_chunk(key, tool_call_id=tool_call_id, tool_name=tool_name)
        elif not isinstance(arguments, str):
            arguments = None
        self.tool_input_end(key, arguments)

    # -- tool outputs ----------------------------------------------------------------------------------

    def tool_result(
        self, tool_call_id: str, output: Any, *, is_error: bool = False, tool_name: str | None = None
    ) -> None:
        """The tool returned (JSON text is sent as JSON) or failed (``is_error``: the part ends in state
        ``output-error``). A result for a call whose arguments were invalid is always an error; the same
        result reported twice in a step (e.g. ``messages`` and ``updates`` modes) is sent once."""
        if tool_call_id not in self._awaiting:
            if ("output", tool_call_id) in self._step_seen:
                return
            # A result for a call still streaming, or one the stream never showed (e.g. a tool the graph
            # called by itself): the call is completed or announced first, the client rejects outputs for
            # unknown tool call ids.
            self.tool_call(tool_call_id, tool_name or "unknown", {})
        self._step_seen.add(("output", tool_call_id))
        if self._awaiting.pop(tool_call_id, False) or is_error:
            self._tool("output-error", tool_call_id, errorText=json_text(output) or "Tool error.")
        else:
            self._tool("output-available", tool_call_id, output=output_as_json(output))

    # -- end of stream ---------------------------------------------------------------------------------

    def error(self, error_text: str) -> None:
        """Report a failure of the run; the message is still finished cleanly by ``finish()``."""
        self.end_model_output()
        self._out.append({"type": "error", "errorText": error_text})
        self.finish_reason = "error"

    def finish(self) -> None:
        """End every open part, fail calls that never got an output, close the step and the message."""
        if self.finished:
            return
        self.end_model_output()
        for tool_call_id, invalid_input in self._awaiting.items():
            if not invalid_input:  # an argument error is already terminal
                self._tool("output-error", tool_call_id, errorText=_UNFINISHED_TOOL_TEXT)
        self._awaiting.clear()
        # Every tool call of the last step has been ended above, so it is among the ids seen in the step.
        reason = self.finish_reason or ("tool-calls" if self._step_seen else "stop")
        self._close_step()
        self._out.append({"type": "finish", "finishReason": reason})
        self.finished = True
