"""Parts of the host benchmarks. The floor keeps its tools as current as the SDK does: a user's turn after the
SDK's TTL asks the gateway again and lists every kept session's tools again, in the background; before the TTL it
asks nothing (the clock is injected). The OTLP collector counts an export cut off by a stopping host. The load
generator keeps a steady load until a time, and the windows report counts each turn in its window."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

import aiohttp
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "bench"))
from _common import emulator_process
from _host_floor import Floor
from _host_load import Phase, run_phase, windows, windows_table
from _host_procs import now, otlp_collector, running, start_host

from agents_a365.emulator import Emulator, EmulatorConfig, ServerConfig

SECRET = "a-secret-for-the-floor-test-of-32-bytes"
AGENT = "floor-agent"
# The benchmark's servers: notes servers on the platform's audience (the floor takes one token as given).
CONFIG = EmulatorConfig(
    servers=[ServerConfig(name=f"notes_{i}", kind="notes") for i in (1, 2)],
    agents={AGENT: ["notes_1", "notes_2"]},
    token_secret=SECRET,
)


def _asked(emulator: Emulator) -> tuple[int, int]:
    """Gateway GETs and ``tools/list`` requests the emulator has served."""
    listings = [
        r
        for r in emulator.requests_for("mcp")
        if isinstance(r.json, dict) and r.json.get("method") == "tools/list"
    ]
    return len(emulator.requests_for("gateway")), len(listings)


async def test_the_floor_lists_again_after_the_sdks_ttl_and_not_before() -> None:
    now = [1000.0]
    async with Emulator(CONFIG) as emulator:
        await _lists_again_after_the_ttl(
            emulator, Floor(emulator.base_url, SECRET, ttl=300.0, clock=lambda: now[0]), now
        )


async def _lists_again_after_the_ttl(emulator: Emulator, floor: Floor, now: list[float]) -> None:
    try:
        user = await floor.user("u1", AGENT)
        servers = len(user.servers)
        assert servers > 1
        first = _asked(emulator)
        assert first == (1, servers)

        now[0] += 299.0
        assert await floor.user("u1", AGENT) is user
        assert user.refreshing is None
        assert _asked(emulator) == first

        now[0] += 1.0
        assert await floor.user("u1", AGENT) is user  # served at once, refreshed in the background
        refreshing = user.refreshing
        assert refreshing is not None
        assert await floor.user("u1", AGENT) is user
        assert user.refreshing is refreshing
        await refreshing
        assert _asked(emulator) == (2, 2 * servers)
        assert user.refreshing is None
        assert user.listed_at == now[0]
    finally:
        await floor.close()


async def test_the_otlp_collector_counts_an_export_cut_off_by_a_stopping_host(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A host stopped in the middle of an export lost its connection: counted, and no traceback in the
    benchmark's output (three of them filled a `--full` run's log)."""
    async with otlp_collector() as collector:
        port = int(collector.url.rsplit(":", 1)[1])
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n" + b"x" * 10)
        await writer.drain()
        writer.close()
        await writer.wait_closed()
        for _ in range(200):  # the server notices the lost connection on its next loop turns
            if collector.received["/v1/traces cut off"]:
                break
            await asyncio.sleep(0.01)
    assert collector.received["/v1/traces cut off"] == 1
    assert collector.received["/v1/traces"] == 0
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_the_windows_report_counts_each_turn_in_the_window_it_started_in() -> None:
    """The report of a disturbance: turns by start, failed turns the load generator saw, failed turns the host logged
    (by when it logged them), each in its window around the disturbance (``t0``)."""
    t0 = 100.0
    ours = Phase(
        records=[(98.5, 0.2), (100.5, None), (101.9, 0.3), (102.0, 0.1), (105.0, 0.2)], logged=[101.0]
    )
    floor = Phase(records=[(99.0, 0.4), (100.1, None), (100.2, None)], logged=[103.5, 103.6])
    rows = windows({"ours": ours, "floor": floor}, t0, before=2, during=2, after=4, width=2)
    assert [(w.start, w.label) for w in rows] == [(-2, "before"), (0, "during"), (2, "after"), (4, "after")]
    assert [w.turns for w in rows] == [
        {"ours": 1, "floor": 1},
        {"ours": 2, "floor": 2},
        {"ours": 1, "floor": 0},
        {"ours": 1, "floor": 0},
    ]
    assert [(w.failed["ours"], w.logged["ours"]) for w in rows] == [(0, 0), (1, 1), (0, 0), (0, 0)]
    assert [(w.failed["floor"], w.logged["floor"]) for w in rows] == [(0, 0), (2, 0), (0, 2), (0, 0)]
    assert rows[1].rate("ours") == 1.0
    assert windows_table(rows, 2)[1] == ["+0..+2 s", "during", "1 + 1 / 2 (100.0%)", "2 + 0 / 2 (100.0%)"]


@pytest.mark.slow
async def test_a_phase_until_a_time_keeps_every_user_taking_turns_until_then() -> None:
    """``run_phase(until=...)``: each user thinks, then takes a turn, until the time has come (a steady load over a
    disturbance); every turn is recorded with its start."""
    with emulator_process(notes_servers=1, latency_ms=0, counts=[1]) as emu:
        async with (
            running(start_host(emu, "until-test", "ours", "langchain")) as (host,),
            aiohttp.ClientSession() as http,
        ):
            began = now()
            phase = await run_phase(http, host, emu, users=["a", "b"], servers=1, think=0.2, until=began + 2)
    assert phase.errors == 0
    assert phase.turns == len(phase.records) >= 4  # each user more than one turn
    assert all(latency is not None and began <= at < began + 2 for at, latency in phase.records)
