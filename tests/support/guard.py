"""The leak and token-hygiene guard wrapped around every reliability scenario."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from agents_a365.emulator import Emulator
from agents_a365.emulator.trace_tree import TraceRecorder
from agents_a365.tooling import ToolingConfiguration, configure_telemetry

from .leaks import SERVER_SIDE, is_server_side, other_tasks
from .platform import AUTH_HANDLER, production_config

__all__ = ["AUTH_HANDLER", "MARGIN", "REQUEST_TIMEOUT", "Guard", "config", "elapsed_at_most", "open_fds"]

# Timeouts of the fault scenarios, and the margin a scenario may take beyond its configured timeout
# (the machine's 2 cores are shared: generous, but far below any "hang").
REQUEST_TIMEOUT = 1.0
MARGIN = 1.5


def config(emu: Emulator, **overrides: Any) -> ToolingConfiguration:
    """The production path (gateway + token exchange) against ``emu`` with short timeouts."""
    return production_config(emu, **{"request_timeout": REQUEST_TIMEOUT, **overrides})


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _async_generators() -> set[str]:
    """Client-side async generators not yet finalised, as ``file:name@id``.

    CPython's event loop keeps every live async generator in ``_asyncgens``; a transport that was
    never closed shows up there until the loop's shutdown finalises it (with errors).
    """
    found = set()
    for agen in list(getattr(asyncio.get_running_loop(), "_asyncgens", ())):
        code = agen.ag_code
        if agen.ag_frame is None:  # finished or closed (still referenced, e.g. by a traceback)
            continue
        if any(marker in code.co_filename for marker in SERVER_SIDE):
            continue
        found.add(f"{code.co_filename.rsplit('/', 2)[-1]}:{code.co_name}@{id(agen):x}")
    return found


def _texts_of(exc: BaseException, seen: set[int] | None = None) -> Iterator[str]:
    """``str``, ``repr`` and traceback text of ``exc``, its causes, contexts and group members."""
    seen = set() if seen is None else seen
    if id(exc) in seen:
        return
    seen.add(id(exc))
    yield str(exc)
    yield repr(exc)
    yield "".join(traceback.format_exception(exc))
    for attr in ("args",):
        yield repr(getattr(exc, attr, ()))
    for other in (exc.__cause__, exc.__context__):
        if other is not None:
            yield from _texts_of(other, seen)
    if isinstance(exc, BaseExceptionGroup):
        for member in exc.exceptions:
            yield from _texts_of(member, seen)


def _span_texts(recorder: TraceRecorder) -> Iterator[str]:
    """Everything an exporter would send of each span: name, attributes, events, status."""
    for span in recorder.spans():
        yield f"{span.name} {dict(span.attributes or {})} {span.status.description}"
        for event in span.events:
            yield f"{event.name} {dict(event.attributes or {})}"


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.texts: list[str] = []
        self._formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.texts.append(self._formatter.format(record))  # message, args and exc_info
            self.texts.append(repr(record.args))
        except Exception as exc:  # a record that cannot be formatted is still searched
            self.texts.append(f"unformattable record {record.msg!r} {record.args!r}: {exc!r}")


class Guard:
    """Wrapped around one scenario: captures every log record (root logger, DEBUG) and every error
    the scenario saw, records every token the emulators mint, and at the end checks that

    * no token appears in a log record, an exception's text/repr/traceback, a registered repr or
      any span the scenario recorded (telemetry is on, tool arguments and results included);
    * no task the scenario started is still running, no file descriptor (socket) stayed open and no
      async generator (MCP transport) was left for the loop's shutdown to finalise.
    """

    def __init__(self) -> None:
        self.tokens: set[str] = set()
        self.texts: list[str] = []
        self.errors: list[BaseException] = []
        self.emulators: list[Emulator] = []
        self._capture = _Capture()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._fds = 0
        self._asyncgens: set[str] = set()
        self._root_level = logging.NOTSET
        self.finished = False
        self.spans = TraceRecorder()

    # -- lifecycle (driven by the fixture) ------------------------------------------------------
    def start(self) -> None:
        root = logging.getLogger()
        self._root_level = root.level
        root.setLevel(logging.DEBUG)
        root.addHandler(self._capture)
        configure_telemetry(tracer_provider=self.spans.tracer_provider, record_tool_content=True)
        gc.collect()
        self._tasks = set(asyncio.all_tasks())
        self._fds = open_fds()
        self._asyncgens = _async_generators()

    def stop_capture(self) -> None:
        root = logging.getLogger()
        root.removeHandler(self._capture)
        root.setLevel(self._root_level)
        configure_telemetry()
        self.spans.shutdown()

    # -- recording --------------------------------------------------------------------------------
    def watch(self, emu: Emulator) -> Emulator:
        """Record every token ``emu`` mints (its issuer serves the gateway, servers and exchanges)."""
        issuer = emu.issuer
        mint = issuer.mint

        def recording_mint(*args: Any, **kwargs: Any) -> str:
            token = mint(*args, **kwargs)
            self.tokens.add(token)
            return token

        issuer.mint = recording_mint  # type: ignore[method-assign]
        self.emulators.append(emu)
        return emu

    def error(self, exc: BaseException) -> BaseException:
        """Keep an error the scenario raised, for the token search."""
        self.errors.append(exc)
        return exc

    @contextmanager
    def raises(self, *types: type[BaseException]) -> Iterator[list[BaseException]]:
        """Like ``pytest.raises`` (any of ``types``), keeping the error for the token search."""
        caught: list[BaseException] = []
        try:
            yield caught
        except types as exc:
            caught.append(self.error(exc))
        else:
            raise AssertionError(f"expected one of {[t.__name__ for t in types]} to be raised")

    def repr_of(self, *objects: object) -> None:
        self.texts.extend(repr(o) for o in objects)

    # -- checks -----------------------------------------------------------------------------------
    def _all_tokens(self) -> set[str]:
        tokens = set(self.tokens)
        for emu in self.emulators:
            for request in emu.requests:
                value = request.headers.get("authorization")
                if value:
                    tokens.add(value.split(" ", 1)[-1].strip())
        return {t for t in tokens if t}

    def token_leaks(self) -> list[str]:
        """Where a token (or its signature alone) appears; empty when clean."""
        texts = [*self._capture.texts, *self.texts]
        for exc in self.errors:
            texts.extend(_texts_of(exc))
        texts.extend(_span_texts(self.spans))
        leaks = []
        for token in self._all_tokens():
            needles = {token, token.rsplit(".", 1)[-1]} if token.count(".") == 2 else {token}
            for text in texts:
                if any(len(n) >= 16 and n in text for n in needles):
                    leaks.append(text[:300])
        return leaks

    def leftover_tasks(self) -> list[asyncio.Task[Any]]:
        return [t for t in other_tasks() - self._tasks if not is_server_side(t)]

    async def assert_clean(self, *, check_tokens: bool = True, check_leaks: bool = True) -> None:
        """All the checks; the fixture calls it at teardown unless the test already did."""
        self.finished = True
        if check_tokens:
            assert self._all_tokens(), "the scenario minted no token: the token search proves nothing"
            leaks = self.token_leaks()
            assert not leaks, f"tokens leaked into logs/errors/reprs: {leaks[:3]}"
        if not check_leaks:
            return
        deadline = time.monotonic() + 2.0
        pause = 0.0  # checked at once (callbacks already scheduled run first), then every 50 ms
        while True:  # the server side closes its end of a socket a moment after the client
            await asyncio.sleep(pause)
            gc.collect()
            tasks, fds, gens = self.leftover_tasks(), open_fds(), _async_generators()
            if (not tasks and fds <= self._fds and not gens - self._asyncgens) or time.monotonic() > deadline:
                break
            pause = 0.05
        assert not tasks, f"tasks left running: {[t.get_name() for t in tasks]}"
        assert fds <= self._fds, f"file descriptors left open: {fds} > {self._fds}"
        assert not gens - self._asyncgens, f"async generators left unclosed: {sorted(gens - self._asyncgens)}"


@contextmanager
def elapsed_at_most(seconds: float) -> Iterator[None]:
    started = time.monotonic()
    yield
    took = time.monotonic() - started
    assert took <= seconds, f"took {took:.2f} s, more than {seconds:.2f} s"
