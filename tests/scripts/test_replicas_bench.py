"""scripts/bench/replicas.py at toy size: real replicas (processes of the hosted example), a real Redis, the
emulator's counts; every run is reported with its figures and no turn fails. No timing is asserted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.installs import ensure_redis_server

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "BENCH_GC_FREEZE": "1"}  # the hosts' collections skip the fork server's heap: less CPU


@pytest.mark.slow
def test_the_replicas_benchmark_reports_every_run_and_figure(tmp_path: Path) -> None:
    if ensure_redis_server()[0] is None:
        pytest.skip("no redis-server")
    out = tmp_path / "figures.json"
    command = [
        sys.executable,
        str(ROOT / "scripts/bench/replicas.py"),
        "--users=6",
        "--turns=2",
        "--replicas=2",
    ]
    # One user at a time: a user's two turns land on the two replicas. A deadline the loaded test machine meets.
    command += ["--concurrency=1", "--outage=1", "--warm-users=2", "--store-timeout=2", f"--json={out}"]
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False, env=ENV
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for row in (
        "with the store",
        "without",
        "Redis off 1 s",
        "users after return",
        "warm p50 with the store",
    ):
        assert row in done.stdout
    figures = json.loads(out.read_text())
    runs = {r["label"]: r for r in figures["runs"]}
    assert [r["failed"] for r in runs.values()] == [0, 0, 0]
    with_, without = runs["with the store"]["figures"], runs["without"]["figures"]
    # Counted at the emulator: every user exchanged, asked the gateway and (some replica) listed.
    assert all(f[k] >= 1 for f in (with_, without) for k in ("exchanges", "gateway", "lists"))
    # With the store a user's second turn (on the other replica) reads what the first wrote.
    assert with_["gateway"] == 1.0
    assert without["gateway"] == 2.0
    assert len(runs["with the store"]["warm"]) == 2
    assert figures["warm_p50_ratio"] > 0
