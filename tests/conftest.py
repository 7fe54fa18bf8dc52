"""Root test configuration: the emulator fixture comes from the agents-a365-emulator pytest plugin."""

from __future__ import annotations
