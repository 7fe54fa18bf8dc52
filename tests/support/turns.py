"""Real hosting-core turn contexts for tests (shipped by the emulator distribution for scripts and docs too)."""

from agents_a365.emulator.turns import RecordingAdapter, make_turn_context

__all__ = ["RecordingAdapter", "make_turn_context"]
