"""The host benchmark's host keeps answering however much it prints (issue 26, "a host that stops answering").

hosting-core's default ``on_turn_error`` ``print()``s each failed turn's traceback to stdout, on the event
loop. The benchmark read a host's stdout only up to its ``ready`` line: after 64 KiB of tracebacks (8 turns
failed in tool discovery here) the pipe was full, that ``print`` blocked in ``write`` and the host never
answered again. The benchmark now drains each host's stdout into its log, and the hosted example sets its own
``on_turn_error`` (a generic reply, nothing printed), so failed turns neither block nor leak.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "bench"))
from _common import agent_id_for, emulator_process
from _host_procs import Host, start_host, stop_host

from agents_a365.emulator import channel_activity

FAILED_TURNS = 30  # with the old plumbing the 9th failed turn never ended
TURN_TIMEOUT = aiohttp.ClientTimeout(total=30)  # a blocked host never answers: this fails the test


@pytest.fixture
async def host() -> AsyncIterator[tuple[Host, Any]]:
    with emulator_process(notes_servers=1, latency_ms=0, counts=[1]) as emu:
        served = await start_host(emu, "stdout-test", "ours", "langchain")
        try:
            yield served, emu
        finally:
            stop_host(served, keep_log=False)  # its turns failed on purpose


async def turn(http: aiohttp.ClientSession, host: Host, emu: Any, n: int) -> int:
    activity = channel_activity(
        f"What are my notes? ({n})",
        service_url=f"{emu.base_url}/",
        conversation_id="c-stdout",
        user_id="u-stdout",
        agent_id=agent_id_for(1),
    )
    try:
        async with http.post(host.messages_url, json=activity, timeout=TURN_TIMEOUT) as response:
            await response.read()
            return response.status
    except TimeoutError:
        pytest.fail(f"turn {n}: the host stopped answering (its event loop blocked?)")


@pytest.mark.slow
async def test_a_host_keeps_answering_after_many_failed_turns(
    host: tuple[Host, Any],
) -> None:
    served, emu = host
    emu.control("PUT", "/faults/gateway", {"status": 400})  # every turn fails in tool discovery
    async with aiohttp.ClientSession() as http:
        for n in range(FAILED_TURNS):
            assert await turn(http, served, emu, n) < 500  # hosting-core answers, the error as its reply
        emu.control("DELETE", "/faults/gateway")
        assert await turn(http, served, emu, FAILED_TURNS) == 202
    # Each failed turn's traceback was logged once (by AgentApplication; hosting-core's default handler printed
    # it too, and sent the error's text to the user).
    for _ in range(100):
        log = served.log.read_text(errors="replace")
        if log.count("Traceback (most recent call last)") >= FAILED_TURNS:
            break
        await asyncio.sleep(0.05)
    assert log.count("Traceback (most recent call last)") == FAILED_TURNS
    assert "Exception caught" not in log
    # The last turn ran whole: the tool answered and the history reached threat protection.
    records = emu.control("GET", "/chat-messages")
    assert len(records) == 1
    assert any("characters of notes" in m["content"] for m in records[0]["chatHistory"])
