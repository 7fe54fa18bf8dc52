"""scripts/bench/disturbance.py at toy size (issue 38): both modes run real turns through both hosts, and the
report has every window and every target row. No timing and no PASS is asserted (figures are for people)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "BENCH_GC_FREEZE": "1"}  # the hosts' collections skip the fork server's heap: less CPU
BENCH = ROOT / "scripts" / "bench" / "disturbance.py"


@pytest.mark.slow
def test_the_disturbance_bench_reports_every_window_and_target() -> None:
    command = [
        sys.executable,
        str(BENCH),
        "--orchestrators=langchain",
        "--conversations=2",
        "--think-ms=500",
        "--before=1",
        "--stop=1",
        "--after=2",
        "--window=1",
        "--recovery=2",  # the last window (resume +1..+2 s) is the one checked
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, cwd=ROOT, timeout=900, check=False, env=ENV
    )
    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    for mode in ("stop", "server"):
        section = out[out.index(f"\n{mode} / langchain (failed turns") :]
        rows = re.findall(r"^\| ([+-]\d+)\.\.[+-]\d+ s +\| (\w+) +\| (\d+) \+ (\d+) / (\d+) ", section, re.M)
        assert [(start, phase) for start, phase, *_ in rows[:4]] == [
            ("-1", "before"),
            ("+0", "during"),
            ("+1", "after"),
            ("+2", "after"),
        ]
        assert sum(int(turns) for *_, turns in rows[:4]) > 0  # ours answered turns in the run
    targets = re.findall(r"^target (\w+)/langchain: (.+): (PASS|MISS) \((.+)\)$", out, re.M)
    assert [(mode, name.split(":")[0]) for mode, name, *_ in targets] == [
        ("stop", "after the resume"),
        ("stop", "every window"),
        ("server", "notes_8 frozen"),
    ]
    assert "n/a" not in targets[0][3]  # a window late enough was measured
