from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import timedelta

import httpx
import pytest
from mcp import ClientSession
from pydantic import ValidationError

from agents_a365.emulator import Emulator, EmulatorConfig, Fault
from agents_a365.emulator.faults import RequestBarrier

McpSessionFactory = Callable[..., AbstractAsyncContextManager[ClientSession]]


async def test_latency_is_added(
    emulator: Emulator, http: httpx.AsyncClient, platform_headers: dict[str, str]
) -> None:
    emulator.faults.set("gateway", Fault(latency_ms=300))
    started = time.monotonic()
    response = await http.get(emulator.gateway_url(), headers=platform_headers)
    elapsed = time.monotonic() - started
    assert response.status_code == 200
    assert "mcpServers" in response.json()
    assert elapsed >= 0.28
    emulator.faults.clear("gateway")
    started = time.monotonic()
    await http.get(emulator.gateway_url(), headers=platform_headers)
    assert time.monotonic() - started < 0.28


async def test_status_with_retry_after_and_latency(emulator: Emulator, http: httpx.AsyncClient) -> None:
    emulator.faults.set("rtp", Fault(status=429, retry_after="7", latency_ms=100))
    started = time.monotonic()
    response = await http.post(emulator.rtp_url, json={})
    assert time.monotonic() - started >= 0.09
    assert response.status_code == 429
    assert response.headers["retry-after"] == "7"
    assert response.json()["error"] == "fault_injected"
    recorded = emulator.requests_for("rtp")[0]
    assert (recorded.status, recorded.fault) == (429, "rtp")


async def test_drop_closes_connection(
    emulator: Emulator, http: httpx.AsyncClient, platform_headers: dict[str, str]
) -> None:
    emulator.faults.set("gateway", Fault(drop=True, times=1))
    with pytest.raises(httpx.TransportError):
        await http.get(emulator.gateway_url(), headers=platform_headers)
    assert emulator.requests_for("gateway")[0].dropped
    assert emulator.requests_for("gateway")[0].status is None
    # times=1: the next request is answered normally
    response = await http.get(emulator.gateway_url(), headers=platform_headers)
    assert response.status_code == 200


async def test_malformed_body(
    emulator: Emulator, http: httpx.AsyncClient, platform_headers: dict[str, str]
) -> None:
    emulator.faults.set("gateway", Fault(malformed=True))
    response = await http.get(emulator.gateway_url(), headers=platform_headers)
    assert response.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        response.json()


async def test_body_replacement(
    emulator: Emulator, http: httpx.AsyncClient, platform_headers: dict[str, str]
) -> None:
    emulator.faults.set("gateway", Fault(body={"servers": "unexpected"}))
    response = await http.get(emulator.gateway_url(), headers=platform_headers)
    assert response.status_code == 200
    assert response.json() == {"servers": "unexpected"}
    emulator.faults.set("gateway", Fault(status=503, body=["x"]))
    response = await http.get(emulator.gateway_url(), headers=platform_headers)
    assert (response.status_code, response.json()) == (503, ["x"])


async def test_times_auto_clears(emulator: Emulator, http: httpx.AsyncClient) -> None:
    emulator.faults.set("rtp", Fault(status=500, times=2))
    statuses = [(await http.post(emulator.rtp_url, json={})).status_code for _ in range(3)]
    assert statuses == [500, 500, 400]
    assert emulator.faults.get("rtp") is None


def _rpc(method: str, params: dict[str, object] | None = None) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}


async def test_mcp_server_specific_fault_and_method_filter(
    emulator: Emulator, http: httpx.AsyncClient
) -> None:
    emulator.faults.set("mcp:mail", Fault(status=500, mcp_method="tools/call"))
    accept = {"Accept": "application/json, text/event-stream"}
    mail = {**accept, "Authorization": f"Bearer {emulator.platform_token()}"}
    calendar = {**accept, "Authorization": f"Bearer {emulator.server_token('calendar')}"}
    call = _rpc("tools/call", {"name": "list_events", "arguments": {"date": "2025-01-01"}})
    assert (await http.post(emulator.server_url("calendar"), json=call, headers=calendar)).status_code == 200
    listed = await http.post(emulator.server_url("mail"), json=_rpc("tools/list"), headers=mail)
    assert listed.status_code == 200  # other methods are not affected
    assert listed.json()["result"]["tools"]
    call = _rpc("tools/call", {"name": "list_emails", "arguments": {}})
    failed = await http.post(emulator.server_url("mail"), json=call, headers=mail)
    assert failed.status_code == 500
    faulted = [(r.jsonrpc_method, r.status, r.fault) for r in emulator.requests_for("mcp") if r.fault]
    assert faulted == [("tools/call", 500, "mcp:mail")]


async def test_mcp_client_sees_injected_error(emulator: Emulator, mcp_session: McpSessionFactory) -> None:
    emulator.faults.set("mcp", Fault(status=503, mcp_method="tools/call", times=1))
    with pytest.raises(BaseException) as info:  # noqa: PT011 - the client raises an exception group
        async with mcp_session(emulator.server_url("mail"), emulator.platform_token()) as session:
            await session.call_tool("list_emails", {}, read_timeout_seconds=timedelta(seconds=5))
    assert "503" in repr(info.value.exceptions if isinstance(info.value, BaseExceptionGroup) else info.value)
    async with mcp_session(emulator.server_url("mail"), emulator.platform_token()) as session:
        assert not (await session.call_tool("list_emails", {})).isError  # times=1: cleared


async def test_drop_during_tool_call(emulator: Emulator, mcp_session: McpSessionFactory) -> None:
    emulator.faults.set("mcp", Fault(drop=True, mcp_method="tools/call", times=1))
    arguments = {"to": "a@b.example", "subject": "s", "body": "b"}
    with pytest.raises(BaseException):  # noqa: B017, PT011 - connection error, wrapped by the client
        async with mcp_session(emulator.server_url("mail"), emulator.platform_token()) as session:
            await session.call_tool("send_email", arguments, read_timeout_seconds=timedelta(seconds=5))
    assert emulator.servers["mail"].state.sent == []  # the tool never ran
    async with mcp_session(emulator.server_url("mail"), emulator.platform_token()) as session:
        assert not (await session.call_tool("send_email", arguments)).isError
    assert len(emulator.servers["mail"].state.sent) == 1
    dropped = [r.jsonrpc_method for r in emulator.requests_for("mcp") if r.dropped]
    assert dropped == ["tools/call"]


async def test_drop_raw_mcp_post(emulator: Emulator, http: httpx.AsyncClient) -> None:
    emulator.faults.set("mcp:mail", Fault(drop=True, mcp_method="tools/call"))
    headers = {
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {emulator.platform_token()}",
    }
    with pytest.raises(httpx.TransportError):
        await http.post(
            emulator.server_url("mail"), json=_rpc("tools/call", {"name": "list_emails"}), headers=headers
        )


async def test_faults_over_http_at_runtime(emulator: Emulator, http: httpx.AsyncClient) -> None:
    control = f"{emulator.base_url}/_emulator/faults"
    response = await http.put(f"{control}/rtp", json={"status": 418, "times": 1})
    assert response.status_code == 200
    assert response.json()["rtp"]["remaining"] == 1
    assert (await http.post(emulator.rtp_url, json={})).status_code == 418
    assert (await http.get(control)).json() == {}

    assert (await http.put(f"{control}/mcp:mail", json={"latency_ms": 10})).status_code == 200
    assert emulator.faults.get("mcp:mail") == Fault(latency_ms=10)
    assert (await http.delete(f"{control}/mcp:mail")).status_code == 204
    assert emulator.faults.get("mcp:mail") is None

    assert (await http.put(f"{control}/bogus", json={})).status_code == 400
    bad = await http.put(f"{control}/rtp", json={"status": 99})
    assert bad.status_code == 400
    assert bad.json()["errors"][0]["field"] == "status"
    assert (await http.put(f"{control}/rtp", json={"nope": 1})).status_code == 400

    await http.put(f"{control}/gateway", json={"status": 500})
    await http.put(f"{control}/rtp", json={"status": 500})
    assert (await http.delete(control)).status_code == 204
    assert emulator.faults.active() == {}


async def test_faults_from_config(http: httpx.AsyncClient) -> None:
    async with Emulator(EmulatorConfig(faults={"rtp": Fault(status=502)})) as emu:
        assert (await http.post(emu.rtp_url, json={})).status_code == 502


def test_fault_validation() -> None:
    with pytest.raises(ValidationError):
        Fault(malformed=True, body={"a": 1})
    with pytest.raises(ValidationError):
        Fault(times=0)
    with pytest.raises(ValueError, match="unknown fault route"):
        Emulator().faults.set("mcp:", Fault())


# -- hold_until_concurrent: a barrier that proves requests were in flight together ---------------------------


async def test_hold_releases_requests_together_once_enough_are_in_flight(
    emulator: Emulator, http: httpx.AsyncClient, platform_headers: dict[str, str]
) -> None:
    emulator.faults.set("gateway", Fault(hold_until_concurrent=2, hold_timeout_ms=10_000))
    responses = await asyncio.gather(
        *(http.get(emulator.gateway_url(), headers=platform_headers) for _ in range(2))
    )
    assert [r.status_code for r in responses] == [200, 200]  # held, then answered by the gateway
    assert [(r.held_together, r.fault) for r in emulator.requests_for("gateway")] == [(2, "gateway")] * 2


async def test_hold_lets_a_lone_request_go_after_the_timeout(
    emulator: Emulator, http: httpx.AsyncClient, platform_headers: dict[str, str]
) -> None:
    # What a sequential client gets: each request waits alone, then goes on; held_together tells.
    emulator.faults.set("gateway", Fault(hold_until_concurrent=2, hold_timeout_ms=100))
    for _ in range(2):
        response = await http.get(emulator.gateway_url(), headers=platform_headers)
        assert response.status_code == 200
    assert [r.held_together for r in emulator.requests_for("gateway")] == [1, 1]


async def test_hold_starts_over_after_each_release(emulator: Emulator, http: httpx.AsyncClient) -> None:
    emulator.faults.set("rtp", Fault(hold_until_concurrent=2, hold_timeout_ms=10_000))
    responses = await asyncio.gather(*(http.post(emulator.rtp_url, json={"n": n}) for n in range(4)))
    assert {r.status_code for r in responses} == {400}  # released in pairs, then validated
    assert [r.held_together for r in emulator.requests_for("rtp")] == [2, 2, 2, 2]


async def test_hold_on_mcp_counts_requests_to_every_server(
    emulator: Emulator, mcp_session: McpSessionFactory
) -> None:
    emulator.faults.set(
        "mcp", Fault(hold_until_concurrent=2, hold_timeout_ms=10_000, mcp_method="tools/call", times=2)
    )
    async with (
        mcp_session(emulator.server_url("mail"), emulator.platform_token()) as mail,
        mcp_session(emulator.server_url("calendar"), emulator.server_token("calendar")) as calendar,
    ):
        listed, events = await asyncio.gather(
            mail.call_tool("list_emails", {}), calendar.call_tool("list_events", {"date": "2025-01-01"})
        )
    assert not listed.isError
    assert not events.isError
    held = [(r.server, r.held_together) for r in emulator.requests_for("mcp") if r.held_together]
    assert sorted(held) == [("calendar", 2), ("mail", 2)]  # initialize was not held (mcp_method)
    assert emulator.faults.get("mcp") is None  # times=2: used up


async def test_hold_then_the_other_effects(emulator: Emulator, http: httpx.AsyncClient) -> None:
    emulator.faults.set("rtp", Fault(hold_until_concurrent=2, status=503, hold_timeout_ms=10_000))
    responses = await asyncio.gather(*(http.post(emulator.rtp_url, json={}) for _ in range(2)))
    assert [r.status_code for r in responses] == [503, 503]
    assert [(r.held_together, r.status) for r in emulator.requests_for("rtp")] == [(2, 503)] * 2


async def test_hold_over_http_and_in_the_recording(emulator: Emulator, http: httpx.AsyncClient) -> None:
    control = f"{emulator.base_url}/_emulator/faults"
    response = await http.put(f"{control}/rtp", json={"hold_until_concurrent": 2, "hold_timeout_ms": 50})
    assert response.status_code == 200
    assert response.json()["rtp"]["hold_until_concurrent"] == 2
    await http.post(emulator.rtp_url, json={})
    recorded = (await http.get(f"{emulator.base_url}/_emulator/requests?route=rtp")).json()
    assert [r["heldTogether"] for r in recorded] == [1]
    assert (await http.put(f"{control}/rtp", json={"hold_until_concurrent": 1})).status_code == 400


async def test_a_cancelled_waiter_leaves_the_barrier() -> None:
    barrier = RequestBarrier(2)
    gone = asyncio.create_task(barrier.wait(10))
    await asyncio.sleep(0)  # it is waiting now
    gone.cancel()
    with pytest.raises(asyncio.CancelledError):
        await gone
    # The cancelled request does not count: two new ones are still needed.
    first = asyncio.create_task(barrier.wait(10))
    await asyncio.sleep(0)
    assert not first.done()
    assert await barrier.wait(10) == 2
    assert await first == 2


def test_hold_validation() -> None:
    with pytest.raises(ValidationError):
        Fault(hold_until_concurrent=1)  # a barrier of one holds nothing
    with pytest.raises(ValidationError, match="'times' must be at least"):
        Fault(hold_until_concurrent=3, times=2)
    with pytest.raises(ValidationError):
        Fault(hold_until_concurrent=2, hold_timeout_ms=0)
    assert Fault(hold_until_concurrent=2).hold_timeout_ms == 3_000
