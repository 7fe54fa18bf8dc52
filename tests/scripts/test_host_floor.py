"""The host benchmark's floor keeps its tools as current as the SDK does (issue 26): a user's turn after the
SDK's TTL asks the gateway again and lists every kept session's tools again, in the background; before the
TTL it asks nothing. The clock is injected."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "bench"))
from _host_floor import Floor

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
