"""A fake monotonic clock for TTL tests: time passes when the test says so, never by sleeping."""

from __future__ import annotations

__all__ = ["FakeClock"]


class FakeClock:
    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
