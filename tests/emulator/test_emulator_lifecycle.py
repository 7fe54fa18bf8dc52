from __future__ import annotations

import asyncio
import socket

import httpx
import pytest

from agents_a365.emulator import DEFAULT_AGENT_ID, PLATFORM_AUDIENCE, PLATFORM_SCOPE, Emulator, EmulatorConfig


def test_constants() -> None:
    assert PLATFORM_AUDIENCE == "ea9ffc3e-8a23-4a7d-836d-234d7c7565c1"
    assert PLATFORM_SCOPE == PLATFORM_AUDIENCE + "/.default"
    assert len(DEFAULT_AGENT_ID) == 36


async def test_fixture_yields_running_emulator(emulator: Emulator, http: httpx.AsyncClient) -> None:
    assert emulator.running
    assert emulator.base_url.startswith("http://127.0.0.1:")
    assert emulator.gateway_url() == f"{emulator.base_url}/agents/v2/{DEFAULT_AGENT_ID}/mcpServers"
    assert emulator.rtp_url == f"{emulator.base_url}/agents/real-time-threat-protection/chat-message"
    with pytest.raises(KeyError):
        emulator.server_url("nope")
    response = await http.get(f"{emulator.base_url}/_emulator/servers")
    assert set(response.json()) == {"mail", "calendar"}


async def test_clean_shutdown_frees_port_and_tasks() -> None:
    before = {t for t in asyncio.all_tasks() if not t.done()}
    emu = Emulator()
    await emu.start()
    port = int(emu.base_url.rsplit(":", 1)[1])
    async with httpx.AsyncClient() as client:
        assert (await client.get(emu.gateway_url())).status_code == 401
    loop = asyncio.get_running_loop()
    started = loop.time()
    await emu.stop()
    assert loop.time() - started < 1.5
    assert not emu.running
    with pytest.raises(RuntimeError):
        _ = emu.base_url
    await emu.stop()  # idempotent
    leaked = {t for t in asyncio.all_tasks() if not t.done()} - before - {asyncio.current_task()}
    assert leaked == set()
    with socket.socket() as probe:  # the port is free again
        probe.bind(("127.0.0.1", port))
    with pytest.raises(httpx.ConnectError):
        async with httpx.AsyncClient() as client:
            await client.get(f"http://127.0.0.1:{port}/")


async def test_stop_with_open_client_connection_is_quick() -> None:
    async with httpx.AsyncClient() as client:
        emu = await Emulator().start()
        await client.get(emu.gateway_url())  # keep-alive connection stays open
        loop = asyncio.get_running_loop()
        started = loop.time()
        await emu.stop()
        assert loop.time() - started < 1.5


async def test_start_fails_clearly_when_port_is_busy() -> None:
    async with Emulator() as first:
        port = int(first.base_url.rsplit(":", 1)[1])
        second = Emulator(port=port)
        with pytest.raises(OSError, match="in use"):
            await second.start()
        assert not second.running


async def test_cannot_start_twice() -> None:
    async with Emulator() as emu:
        with pytest.raises(RuntimeError, match="already running"):
            await emu.start()


async def test_stop_lets_a_request_in_flight_finish() -> None:
    # Stopping is prompt (no polling tick) but still graceful: a request being answered gets its answer.
    from agents_a365.emulator import Fault

    emu = await Emulator().start()
    emu.faults.set("gateway", Fault(latency_ms=300, status=503))
    async with httpx.AsyncClient() as client:
        request = asyncio.create_task(client.get(emu.gateway_url()))
        while not emu.requests_for("gateway"):  # noqa: ASYNC110 - recording offers no event to wait on
            await asyncio.sleep(0.005)
        await emu.stop()
        assert request.done()
        assert (await request).status_code == 503


async def _idle_connection_closed_within(emu: Emulator, seconds: float) -> bool:
    """Whether the emulator closes a keep-alive connection left idle after one request within ``seconds``."""
    host, port = emu.base_url.removeprefix("http://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(b"GET /_emulator/servers HTTP/1.1\r\nHost: emulator\r\n\r\n")
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        length = int(
            next(line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))[15:]
        )
        await asyncio.wait_for(reader.readexactly(length), 5)
        try:
            return await asyncio.wait_for(reader.read(1), seconds) == b""
        except TimeoutError:
            return False
    finally:
        writer.close()


async def test_idle_connections_outlive_clients_own_idle_limits() -> None:
    """Clients close idle connections first (aiohttp after 15 s, httpx 5 s), as with a production front end: a
    server closing them sooner makes every client race it (hosting-core's replies: ``Connection reset by peer``)."""
    assert EmulatorConfig().keep_alive_timeout > 15
    async with Emulator(EmulatorConfig(keep_alive_timeout=1)) as emu:
        assert await _idle_connection_closed_within(emu, 4)  # the setting is the server's
