"""A service kept across event loops (``asyncio.run`` twice, as scripts and some hosts do), with the
caller's own HTTP client: what the service holds per loop follows the running loop, whoever owns the client.

Real sockets on 127.0.0.1: a ``HostileServer`` in its own thread outlives both loops.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import httpx

from agents_a365.tooling import ChatHistoryMessage, McpToolServerConfigurationService, ToolingConfiguration
from agents_a365.tooling.constants import CHAT_HISTORY_PATH
from support.hostile_server import ServerThread, behaviours
from support.turns import make_turn_context

HISTORY = [ChatHistoryMessage(id="h1", role="user", content="hi", timestamp=datetime(2026, 1, 1, tzinfo=UTC))]


def test_threat_protection_slots_follow_the_event_loop_with_the_callers_own_http_client() -> None:
    answer = behaviours.respond(200, {}, delay=0.02)
    with ServerThread(lambda server: server.route(CHAT_HISTORY_PATH, answer)) as thread:
        config = ToolingConfiguration(
            mcp_platform_endpoint=thread.base_url,
            use_tooling_manifest=False,
            chat_history_concurrency=1,  # a burst of three waits for the one slot: its lock meets the loop
            chat_history_max_attempts=1,
        )
        # The caller's client, kept across both loops: no keep-alive, so no connection outlives its loop.
        client = httpx.AsyncClient(limits=httpx.Limits(max_keepalive_connections=0))
        service = McpToolServerConfigurationService(config, http_client=client)

        async def burst(tag: str) -> list[bool]:
            turns = [make_turn_context(activity_id=f"{tag}-{i}") for i in range(3)]
            results = await asyncio.gather(*(service.send_chat_history(t, HISTORY) for t in turns))
            return [r.succeeded for r in results]

        assert asyncio.run(burst("first")) == [True] * 3
        # Before the fix the second loop's sends met the first loop's slots and failed: "bound to a
        # different event loop".
        assert asyncio.run(burst("second")) == [True] * 3
        assert thread.server is not None
        assert len(thread.server.requests) == 6

        async def close() -> None:
            await service.aclose()
            await client.aclose()

        asyncio.run(close())
