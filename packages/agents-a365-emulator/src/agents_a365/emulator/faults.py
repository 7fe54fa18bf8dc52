"""Fault injection: per-route rules that delay, fail, drop or corrupt the emulator's answers."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

__all__ = ["Fault", "FaultController", "RouteKind", "validate_route_key"]

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

    @model_validator(mode="after")
    def _check_combination(self) -> Fault:
        if self.malformed and self.body is not None:
            raise ValueError("'malformed' and 'body' cannot be combined")
        return self

    @property
    def replaces_response(self) -> bool:
        """Whether the fault answers instead of the emulated service (or drops the connection)."""
        return self.drop or self.malformed or self.status is not None or self.body is not None


@dataclass
class _ActiveFault:
    fault: Fault
    remaining: int | None


class FaultController:
    """Thread-safe registry of the active faults, changeable while the emulator runs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: dict[str, _ActiveFault] = {}

    def set(self, route: str, fault: Fault) -> None:
        """Install ``fault`` on ``route`` (replacing any fault already there)."""
        key = validate_route_key(route)
        with self._lock:
            self._faults[key] = _ActiveFault(fault, fault.times)

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

    def take(self, kind: str, server: str | None, mcp_method: str | None) -> tuple[str, Fault] | None:
        """Find the fault for one request and consume one of its ``times``.

        For MCP requests ``mcp:<server>`` is consulted before ``mcp``; a fault whose ``mcp_method`` differs
        from the request's JSON-RPC method does not match (and is not consumed).
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
                return key, entry.fault
        return None
