"""Where a threat-protection send's CPU goes: the same 1,000-send burst through each layer, one process.

    uv run python scripts/bench/rtp_layers.py [--sends 1000] [--rounds 7]

Each layer adds one piece to the one before, against the emulator (20 ms per RTP response), at most
``chat_history_concurrency`` sends in flight, interleaved rounds, median CPU per send (``process_time``):

- floor: raw aiohttp, one ``ClientSession`` (what ``concurrency.py`` calls the floor);
- aiohttp + guarantees: aiohttp's public API with what the core guarantees (total deadline, declared size
  checked, body read in chunks up to the cap, the slots);
- httpx transport: an ``httpx.Request`` through ``httpx-aiohttp``'s ``AiohttpTransport`` (its public
  ``handle_async_request``), the body read through the ``httpx.Response``;
- ``request_bounded`` through httpx: the core's exchange through ``client.stream`` on httpx's own transport (what
  a client of the user's, ``http_client=``, takes), beside the row above rather than under the rows below;
- ``request_bounded``: the core's exchange as the service's own client makes it (aiohttp's API directly);
- send loop: ``send_chat_history_request`` (slots with a queue deadline, retries, the attempt hook, the result);
- ours: ``McpToolServerConfigurationService.send_chat_history`` (argument checks, the request body, headers,
  the drain deadline, the send hook).

Used for docs/performance.md (section 5). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import statistics
import time
from collections.abc import Awaitable, Callable

import aiohttp
import httpx
from _common import agent_id_for, emulator_process, header, make_turn, table
from httpx_aiohttp import AiohttpTransport

from agents_a365.tooling import (
    McpToolServerConfigurationService,
    ToolingConfiguration,
    ToolOptions,
    shared_ssl_context,
)
from agents_a365.tooling._bounded_http import ResponseTooLargeError, request_bounded
from agents_a365.tooling._rtp_send import send_chat_history_request
from agents_a365.tooling._telemetry_hooks import SendTelemetry
from agents_a365.tooling._transport import core_client
from agents_a365.tooling._turn import read_turn
from agents_a365.tooling.headers import build_request_headers

BODY = b'{"conversationId":"conversation-1","messageId":"activity-1","userMessage":"hi","chatHistory":[]}'
CAP = 8 * 1024
DEADLINE = 10.0


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sends", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    header("Threat-protection send, layer by layer", "uv run python scripts/bench/rtp_layers.py")
    with emulator_process(latency_ms=20, counts=(1,), notes_servers=1) as emu:
        cfg = ToolingConfiguration(mcp_platform_endpoint=emu.base_url, use_tooling_manifest=False)
        turn, options = make_turn(agent_id_for(1)), ToolOptions(orchestrator_name="bench")
        url = f"{emu.base_url}/agents/real-time-threat-protection/chat-message"
        headers = {
            **build_request_headers(turn, orchestrator_name="bench"),
            "Content-Type": "application/json",
        }
        slots = cfg.chat_history_concurrency
        limit = asyncio.Semaphore(slots)
        session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=slots), cookie_jar=aiohttp.DummyCookieJar()
        )
        transport = AiohttpTransport(client=session)
        async with (
            McpToolServerConfigurationService(cfg) as service,
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=slots)) as floor_session,
        ):
            client = service.http_client
            loop_slots = asyncio.Semaphore(slots)

            async def floor() -> None:
                async with floor_session.post(url, data=BODY, headers=headers) as response:
                    await response.read()

            async def guarded() -> None:
                async with (
                    limit,
                    asyncio.timeout(DEADLINE),
                    session.post(url, data=BODY, headers=headers, allow_redirects=False) as response,
                ):
                    if (response.content_length or 0) > CAP:
                        raise ResponseTooLargeError(CAP)
                    body = bytearray()
                    async for chunk in response.content.iter_chunked(64 * 1024):
                        body += chunk
                        if len(body) > CAP:
                            raise ResponseTooLargeError(CAP)

            async def through_transport() -> None:
                async with limit, asyncio.timeout(DEADLINE):
                    request = httpx.Request(
                        "POST", url, headers=headers, content=BODY, extensions={"timeout": {}}
                    )
                    response = await transport.handle_async_request(request)
                    try:
                        body = bytearray()
                        async for chunk in response.aiter_raw():
                            body += chunk
                    finally:
                        await response.aclose()

            through_httpx = core_client(verify=shared_ssl_context(), max_connections=slots, timeout=DEADLINE)
            through_httpx.direct = None  # as with a client of the user's (http_client=)

            async def bounded_httpx() -> None:
                async with limit:
                    await request_bounded(
                        through_httpx,
                        "POST",
                        url,
                        headers=headers,
                        content=BODY,
                        timeout=DEADLINE,
                        max_bytes=CAP,
                    )

            async def bounded() -> None:
                async with limit:
                    await request_bounded(
                        client, "POST", url, headers=headers, content=BODY, timeout=DEADLINE, max_bytes=CAP
                    )

            async def send_loop() -> None:
                assert (
                    await send_chat_history_request(
                        client, url, BODY, headers, cfg, loop_slots, SendTelemetry(read_turn(turn))
                    )
                ).succeeded

            async def ours() -> None:
                assert (await service.send_chat_history(turn, [], options)).succeeded

            layers: dict[str, Callable[[], Awaitable[None]]] = {
                "floor: raw aiohttp": floor,
                "aiohttp + guarantees": guarded,
                "httpx transport (handle_async_request)": through_transport,
                "request_bounded through httpx (http_client=)": bounded_httpx,
                "request_bounded (aiohttp's API)": bounded,
                "send loop (send_chat_history_request)": send_loop,
                "ours (service.send_chat_history)": ours,
            }
            for run in layers.values():  # warm-up: connections open, code paths loaded
                await asyncio.gather(*(run() for _ in range(100)))
            cpu: dict[str, list[float]] = {name: [] for name in layers}
            for _ in range(args.rounds):
                for name, run in layers.items():
                    gc.collect()  # each burst starts clean, not with the garbage of the one before
                    c0 = time.process_time()
                    await asyncio.gather(*(run() for _ in range(args.sends)))
                    cpu[name].append((time.process_time() - c0) / args.sends)
            await through_httpx.aclose()
        await transport.aclose()
    floor_cpu = statistics.median(cpu["floor: raw aiohttp"])
    print(f"{args.sends} concurrent sends x {args.rounds} rounds (interleaved), {slots} in flight; medians")
    print()
    table(
        [
            [name, f"{statistics.median(v) * 1000:.3f} ms", f"{statistics.median(v) / floor_cpu:.2f}"]
            for name, v in cpu.items()
        ],
        ["layer", "CPU per send", "/ floor"],
    )


if __name__ == "__main__":
    asyncio.run(main())
