"""A short load run (the full 1,000-turn run is ``uv run python scripts/load.py``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

# Not serial: it bounds no time (records, mix-ups and its own process's memory), so other tests may run beside it;
# its request timeout is the script's, ample for a shared machine.
pytestmark = pytest.mark.slow
TURNS = 100  # all at once: enough to interleave every stage of every turn with others


def _load_script() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "scripts" / "load.py"
    spec = importlib.util.spec_from_file_location("a365_load_script", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


async def test_concurrent_turns_lose_no_record_and_mix_up_nothing() -> None:
    load = _load_script()
    report = await load.run_load(turns=TURNS, rounds=3, request_timeout=60.0)
    print(report.table())
    for result in report.rounds:
        assert result.failed_turns == []
        assert result.lost_records == 0
        assert result.duplicate_records == 0
        assert result.mixed_up == []
        assert result.tool_calls_checked == TURNS
    # Memory: bounded, not a precise figure on a shared machine at this size (the script checks < 10 %).
    assert report.memory_growth < 0.10
