"""Issue 27: closing the service drains threat-protection sends; a send never raises for a closed service."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import httpx

from agents_a365.emulator import Emulator, Fault
from agents_a365.tooling import ChatHistoryMessage, ChatHistorySendError, McpToolServerConfigurationService
from support.clock import FakeClock
from support.guard import Guard
from support.platform import production_config
from support.turns import make_turn_context

HISTORY = [ChatHistoryMessage(id="h1", role="user", content="hi", timestamp=datetime(2026, 1, 1, tzinfo=UTC))]


async def until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait for something to happen (never for time to pass), bounded."""
    async with asyncio.timeout(timeout):
        while not condition():  # noqa: ASYNC110 - the emulator's recorder has no event to wait on
            await asyncio.sleep(0.01)


def sends(service: McpToolServerConfigurationService, count: int) -> list[Awaitable[object]]:
    return [
        service.send_chat_history(make_turn_context(activity_id=f"m-{i}", conversation_id=f"c-{i}"), HISTORY)
        for i in range(count)
    ]


async def test_close_waits_for_every_send_in_flight_and_queued(emu: Emulator, guard: Guard) -> None:
    # 200 sends, 64 slots, a slow endpoint: aclose() used to return at once, and every send raised.
    emu.faults.set("rtp", Fault(latency_ms=300))
    service = McpToolServerConfigurationService(production_config(emu))
    pending = [asyncio.ensure_future(s) for s in sends(service, 200)]
    await until(lambda: len(emu.requests_for("rtp")) >= 64)
    started = time.monotonic()
    await service.aclose()
    assert all(task.done() for task in pending)  # nothing is left running after close
    results = [task.result() for task in pending]  # .result(): none raised
    assert [str(r) for r in results if not r.succeeded] == []
    assert {m["messageId"] for m in emu.chat_messages} == {f"m-{i}" for i in range(200)}
    assert time.monotonic() - started < 10  # within the (default 10 s) drain deadline
    await guard.assert_clean(check_tokens=False)  # no task or socket left behind


async def test_past_the_drain_deadline_the_rest_fail_naming_their_records(
    emu: Emulator, guard: Guard
) -> None:
    emu.faults.set("rtp", Fault(latency_ms=30_000))  # never answers in time
    clock = FakeClock()
    config = production_config(emu, chat_history_concurrency=4, chat_history_drain_timeout=5)
    service = McpToolServerConfigurationService(config, clock=clock)
    pending = [asyncio.ensure_future(s) for s in sends(service, 10)]  # 4 on the wire, 6 queued
    await until(lambda: len(emu.requests_for("rtp")) == 4)
    closing = asyncio.ensure_future(service.aclose())
    await asyncio.sleep(0.2)
    assert not closing.done()  # draining: the deadline has not passed on the service's clock
    clock.advance(5.1)
    async with asyncio.timeout(5):
        await closing
    results = [task.result() for task in pending]
    assert not any(r.succeeded for r in results)
    for i, result in enumerate(results):
        error = result.errors[0].exception
        assert isinstance(error, ChatHistorySendError)
        assert (error.conversation_id, error.message_id) == (f"c-{i}", f"m-{i}")
        assert "not delivered" in str(error)
        assert "drain deadline" in str(error)
    assert len(emu.requests_for("rtp")) == 4  # the queued ones were never sent
    await guard.assert_clean(check_tokens=False)


async def test_a_send_after_close_is_a_failed_result_and_sends_nothing(emu: Emulator, guard: Guard) -> None:
    async with McpToolServerConfigurationService(production_config(emu)) as service:
        pass
    result = await service.send_chat_history(
        make_turn_context(activity_id="late", conversation_id="c"), HISTORY
    )
    assert not result.succeeded
    error = result.errors[0].exception
    assert isinstance(error, ChatHistorySendError)
    assert "the service is closed" in str(error)
    assert (error.conversation_id, error.message_id) == ("c", "late")
    assert emu.requests_for("rtp") == []
    await guard.assert_clean(check_tokens=False)


async def test_a_send_on_a_closed_client_of_the_caller_is_a_failed_result(
    emu: Emulator, guard: Guard
) -> None:
    client = httpx.AsyncClient()
    service = McpToolServerConfigurationService(production_config(emu), http_client=client)
    await client.aclose()  # the caller's client, closed under the service (it raised RuntimeError before)
    result = await service.send_chat_history(make_turn_context(activity_id="m", conversation_id="c"), HISTORY)
    assert not result.succeeded
    assert "not delivered: RuntimeError" in str(result.errors[0])
    await service.aclose()
    await guard.assert_clean(check_tokens=False)


async def test_close_leaves_the_callers_client_open_and_in_use(emu: Emulator, guard: Guard) -> None:
    client = httpx.AsyncClient()
    service = McpToolServerConfigurationService(production_config(emu), http_client=client)
    await service.aclose()
    assert not client.is_closed  # the caller's to close
    # Used again, the service still uses it: it made a client of its own before, that no aclose() closed.
    assert service.http_client is client
    await client.aclose()
    await guard.assert_clean(check_tokens=False)
