"""Argument checks with the wording every Agent 365 package uses."""

from __future__ import annotations

from typing import TypeVar

__all__ = ["require"]

T = TypeVar("T")


def require(value: T | None, name: str) -> T:
    """``value``, or ``ValueError("<name> is required")`` when it is ``None``."""
    if value is None:
        raise ValueError(f"{name} is required")
    return value
