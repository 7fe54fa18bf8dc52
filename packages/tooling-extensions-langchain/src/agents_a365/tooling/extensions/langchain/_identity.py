"""The turn's identity as LangGraph runtime context (never as tool arguments).

The reader is tooling's, shared with the core's cache keys and the OpenAI extension.
"""

from __future__ import annotations

from agents_a365.tooling.extensibility import TurnIdentity, turn_identity

__all__ = ["TurnIdentity", "turn_identity"]
