"""Fault injection: per-route rules that hold, delay, fail, drop or corrupt the emulator's answers."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

__all__ = ["Fault", "FaultController", "RequestBarrier", "RouteKind", "validate_route_key"]

RouteKind = Literal["gateway", "mcp", "rtp", "control", "unknown"]

_FAULTABLE = ("gateway", "rtp", "mcp")


def validate_route_key(route: str) -> str:
    """Return ``route`` if it is a valid fault key (``gateway``, ``rtp``, ``mcp`` or ``mcp:<name>``)."""
    if route in _FAULTABLE:
        return route
    if route.startswith("mcp:") and len(route) > len("mcp:"):
        return route
    raise ValueError(
        f"unknown fault route {route!r}: expected 'gateway', 'rtp', 'mcp' or 'mcp:<server name>'"
    )


class Fault(BaseModel):
    """What to do to requests on a route.

    ``latency_ms`` is added before answering, also when combined with another effect. ``drop`` closes the
    TCP connection without any HTTP response. Otherwise ``status``, ``malformed`` and ``body`` shape the
    answer: the status defaults to 200 when only ``malformed``/``body`` is set, and the body defaults to a
    JSON error object when only ``status`` is set. ``times`` limits the fault to the next N matching requests
    (``None`` = until cleared); ``mcp_method`` restricts it to MCP requests with that JSON-RPC method.

    ``hold_until_concurrent=N`` makes the fault a barrier, applied before every other effect: each matching
    request is held until N matching requests are held at once, then they all go on together; a request
    still held after ``hold_timeout_ms`` goes on without the others. Each request records how many were
    released together (:attr:`RecordedRequest.held_together`), so a test proves that requests were in flight
    at the same time by a count instead of by timing them (which flakes on a loaded machine).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    latency_ms: float = Field(default=0, ge=0)
    status: int | None = Field(default=None, ge=100, le=599)
    retry_after: str | None = None
    drop: bool = False
    malformed: bool = False
    body: JsonValue = None
    times: int | None = Field(default=None, ge=1)
    mcp_method: str | None = None
    hold_until_concurrent: int | None = Field(default=None, ge=2)
    hold_timeout_ms: float = Field(default=3_000, gt=0)

    @model_validator(mode="after")
    def _check_combination(self) -> Fault:
        if self.malformed and self.body is not None:
            raise ValueError("'malformed' and 'body' cannot be combined")
        held, times = self.hold_until_concurrent, self.times
        if held is not None and times is not None and times < held:
            # Fewer applications than the barrier needs: it could never fill, every request would wait out
            # the timeout.
            raise ValueError("'times' must be at least 'hold_until_concurrent'")
        return self

    @property
    def replaces_response(self) -> bool:
        """Whether the fault answers instead of the emulated service (or drops the connection)."""
        return self.drop or self.malformed or self.status is not None or self.body is not None


class RequestBarrier:
    """Holds requests until ``size`` of them wait at once, then releases them together (and starts over).

    Only the emulator's event loop touches it (the middleware awaits :meth:`wait`), so it needs no lock: the
    check-and-release in :meth:`wait` runs without an ``await`` in between.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._waiting: list[asyncio.Future[int]] = []

    async def wait(self, timeout: float) -> int:
        """Wait until ``size`` requests wait, or ``timeout`` seconds pass (or the request is cancelled).

        Returns how many requests were released together: ``size``, or on timeout how many were waiting
        then, this one included (the others keep waiting for the barrier to fill).
        """
        waiter: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        if len(self._waiting) >= self.size:
            released, self._waiting = self._waiting, []
            for each in released:
                each.set_result(len(released))
        try:
            # asyncio.wait, not wait_for: it leaves the future alone on timeout, so a waiter in the list is
            # never cancelled and a release never meets a finished future.
            await asyncio.wait([waiter], timeout=timeout)
        finally:
            if not waiter.done():  # timed out (or cancelled): leave the barrier alone
                waiter.set_result(len(self._waiting))
                self._waiting.remove(waiter)
        return waiter.result()


@dataclass
class _ActiveFault:
    fault: Fault
    remaining: int | None
    # One barrier per installed fault: the requests it holds are those matching this fault, on any server
    # the route key covers (``mcp`` holds requests to every MCP server together).
    barrier: RequestBarrier | None


class FaultController:
    """Thread-safe registry of the active faults, changeable while the emulator runs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: dict[str, _ActiveFault] = {}

    def set(self, route: str, fault: Fault) -> None:
        """Install ``fault`` on ``route`` (replacing any fault already there)."""
        key = validate_route_key(route)
        with self._lock:
            # Requests held by a replaced fault's barrier keep waiting for it until their timeout.
            barrier = RequestBarrier(fault.hold_until_concurrent) if fault.hold_until_concurrent else None
            self._faults[key] = _ActiveFault(fault, fault.times, barrier)

    def clear(self, route: str | None = None) -> None:
        """Remove the fault on ``route``, or every fault when ``route`` is ``None``."""
        with self._lock:
            if route is None:
                self._faults.clear()
            else:
                self._faults.pop(validate_route_key(route), None)

    def get(self, route: str) -> Fault | None:
        """The fault currently installed on ``route``, if any."""
        with self._lock:
            active = self._faults.get(validate_route_key(route))
            return active.fault if active else None

    def active(self) -> dict[str, dict[str, Any]]:
        """A JSON-ready snapshot: route -> fault fields plus ``remaining`` applications."""
        with self._lock:
            return {
                key: {**entry.fault.model_dump(), "remaining": entry.remaining}
                for key, entry in self._faults.items()
            }

    def take(
        self, kind: str, server: str | None, mcp_method: str | None
    ) -> tuple[str, Fault, RequestBarrier | None] | None:
        """Find the fault for one request and consume one of its ``times``.

        Returns the route key, the fault and its barrier (``None`` without ``hold_until_concurrent``); the
        barrier comes along because the fault may be gone from the registry (``times`` used up) by the time
        the request waits at it. For MCP requests ``mcp:<server>`` is consulted before ``mcp``; a fault whose
        ``mcp_method`` differs from the request's JSON-RPC method does not match (and is not consumed).
        """
        keys = [f"mcp:{server}", "mcp"] if kind == "mcp" and server else [kind]
        with self._lock:
            for key in keys:
                entry = self._faults.get(key)
                if entry is None:
                    continue
                wanted = entry.fault.mcp_method
                if wanted is not None and (kind != "mcp" or wanted != mcp_method):
                    continue
                if entry.remaining is not None:
                    entry.remaining -= 1
                    if entry.remaining <= 0:
                        del self._faults[key]
                return key, entry.fault, entry.barrier
        return None
