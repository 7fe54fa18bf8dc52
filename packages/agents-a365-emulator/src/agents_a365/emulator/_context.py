"""Shared state of one running emulator, handed to every route handler."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from starlette.types import Receive, Scope

from agents_a365.emulator.config import EmulatorConfig
from agents_a365.emulator.faults import FaultController
from agents_a365.emulator.recording import RequestRecorder
from agents_a365.emulator.servers import EmulatedServer
from agents_a365.emulator.tokens import TokenIssuer

ConnectionDropper = Callable[[Scope, Receive], Awaitable[bool]]
"""Closes the TCP connection of a request without an HTTP response; returns False if it could not."""


@dataclass
class EmulatorContext:
    config: EmulatorConfig
    issuer: TokenIssuer
    servers: dict[str, EmulatedServer]
    recorder: RequestRecorder
    faults: FaultController
    drop_connection: ConnectionDropper
    reset: Callable[[], None]
