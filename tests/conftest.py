"""Root test configuration: the emulator fixture comes from the agents-a365-emulator pytest plugin."""

from __future__ import annotations

import sys
from pathlib import Path

# tests/support is a plain folder of helpers, importable as ``support``.
sys.path.insert(0, str(Path(__file__).parent))
