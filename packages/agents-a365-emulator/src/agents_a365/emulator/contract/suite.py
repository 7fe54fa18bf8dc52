"""The extension contract as a pytest base class: subclass it with one adapter to check any extension.

    from agents_a365.emulator.contract import ExtensionContractTests

    class TestMyExtension(ExtensionContractTests):
        @pytest.fixture
        def adapter_factory(self):
            return lambda tooling: MyAdapter(MyRegistrationService(tooling))

The ``emulator`` fixture comes from this distribution's pytest plugin (installed with it). Every test runs
against a real emulator on 127.0.0.1: the chat-history body for each neutral scenario, generated ids, the
argument errors, remote failures as failed results within the deadline, and the headers of every request
(``User-Agent``, channel, one audience per server, no CR/LF). docs/contract.md has a worked example.
"""

from __future__ import annotations

import platform
import re
import socket
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agents_a365.emulator import CALENDAR_AUDIENCE, DEFAULT_AGENT_ID, PLATFORM_AUDIENCE, Emulator, Fault
from agents_a365.emulator.turns import make_turn_context

from .adapter import ExtensionAdapter
from .conversation import GENERATED, SCENARIOS, Scenario, expected_history

__all__ = ["AdapterFactory", "ExtensionContractTests", "normalize_history"]

AdapterFactory = Callable[[Any], ExtensionAdapter]
"""``factory(tooling_service) -> adapter``: the extension's service built on the given tooling service."""


def _tooling(endpoint: str, **settings: Any) -> Any:
    from agents_a365.tooling import McpToolServerConfigurationService, ToolingConfiguration

    config = ToolingConfiguration(mcp_platform_endpoint=endpoint, use_tooling_manifest=False, **settings)
    return McpToolServerConfigurationService(config)


def normalize_history(record: dict[str, Any], started: datetime) -> list[tuple[str, str, str]]:
    """(role, content, id) of a received record, generated ids replaced by ``GENERATED`` after checking
    they are uuid4s and that every timestamp is UTC and current."""
    rows = []
    for entry in record["chatHistory"]:
        stamp = datetime.fromisoformat(entry["timestamp"].replace("Z", "+00:00"))
        assert stamp.utcoffset() == timedelta(0)
        assert started - timedelta(seconds=1) <= stamp <= datetime.now(UTC) + timedelta(seconds=1)
        try:
            generated = uuid.UUID(entry["id"]).version == 4
        except ValueError:
            generated = False
        rows.append((entry["role"], entry["content"], GENERATED if generated else entry["id"]))
    return rows


async def send_scenario(
    emulator: Emulator, factory: AdapterFactory, surface_name: str, scenario: Scenario
) -> list[tuple[str, str, str]] | None:
    """The normalized body the emulator received, or ``None`` when the surface takes no ``limit``."""
    async with _tooling(emulator.base_url) as tooling:
        surface = next(s for s in factory(tooling).surfaces() if s.name == surface_name)
        if scenario.limit is not None and not surface.supports_limit:
            return None
        turn = make_turn_context(
            text="Book a meeting", activity_id=f"act-{scenario.name}", conversation_id="conv-c"
        )
        started = datetime.now(UTC)
        result = await surface.send(turn, scenario.messages, scenario.limit)
    assert result.succeeded, str(result)
    [record] = emulator.chat_messages
    assert record["conversationId"] == "conv-c"
    assert record["messageId"] == f"act-{scenario.name}"
    assert record["userMessage"] == "Book a meeting"
    return normalize_history(record, started)


async def run_turn(emulator: Emulator, factory: AdapterFactory, turn: Any, authorization: Any) -> list[Any]:
    """Register the turn's MCP servers through the extension, send its history; the requests it caused."""
    emulator.recorder.clear()
    async with _tooling(emulator.base_url) as tooling:
        adapter = factory(tooling)
        async with adapter.register(authorization, turn):
            pass
        result = await adapter.surfaces()[0].send(turn, SCENARIOS[0].messages, None)
    assert result.succeeded, str(result)
    return emulator.requests


class ExtensionContractTests:
    """Every rule of docs/contract.md for one extension; provide ``adapter_factory``."""

    @pytest.fixture
    def adapter_factory(self) -> AdapterFactory:
        raise NotImplementedError("override the adapter_factory fixture with your extension's adapter")

    @pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
    async def test_every_surface_sends_the_expected_history(
        self, emulator: Emulator, adapter_factory: AdapterFactory, scenario: Scenario
    ) -> None:
        async with _tooling(emulator.base_url) as tooling:
            names = [s.name for s in adapter_factory(tooling).surfaces()]
        assert names, "the adapter has no surface"
        for name in names:
            emulator.reset()
            body = await send_scenario(emulator, adapter_factory, name, scenario)
            if body is not None:
                assert body == expected_history(scenario), name

    async def test_generated_ids_are_unique_per_message(
        self, emulator: Emulator, adapter_factory: AdapterFactory
    ) -> None:
        scenario = next(s for s in SCENARIOS if s.name == "long_conversation")
        async with _tooling(emulator.base_url) as tooling:
            names = [s.name for s in adapter_factory(tooling).surfaces()]
        for name in names:
            emulator.reset()
            await send_scenario(emulator, adapter_factory, name, scenario)
            ids = [e["id"] for e in emulator.chat_messages[0]["chatHistory"]]
            assert len(ids) == len(set(ids)), name

    async def test_argument_errors(self, emulator: Emulator, adapter_factory: AdapterFactory) -> None:
        async with _tooling(emulator.base_url) as tooling:
            calls = adapter_factory(tooling).missing_argument_calls(make_turn_context())
            assert {"turn_context is required", "messages is required"} <= set(calls)
            for message, call in calls.items():
                with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
                    await call()

    @pytest.mark.parametrize("fault", ["status_500", "timeout", "refused"])
    async def test_remote_failures_are_failed_results_within_the_deadline(
        self, emulator: Emulator, adapter_factory: AdapterFactory, fault: str
    ) -> None:
        timeout = 1.0
        if fault == "refused":
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                endpoint = f"http://127.0.0.1:{sock.getsockname()[1]}"
        else:
            endpoint = emulator.base_url
            emulator.faults.set(
                "rtp", Fault(status=500) if fault == "status_500" else Fault(latency_ms=10_000)
            )
        async with _tooling(endpoint, chat_history_timeout=timeout) as tooling:
            surface = adapter_factory(tooling).surfaces()[0]
            started = time.monotonic()
            result = await surface.send(make_turn_context(), SCENARIOS[0].messages, None)
            elapsed = time.monotonic() - started
        assert not result.succeeded
        assert elapsed < timeout + 1.0

    async def test_user_agent_and_channel_headers(
        self, emulator: Emulator, adapter_factory: AdapterFactory
    ) -> None:
        from agents_a365.runtime import get_sdk_version

        turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID, channel_id="msteams:email")
        requests = await run_turn(emulator, adapter_factory, turn, emulator.authorization())
        async with _tooling(emulator.base_url) as tooling:
            adapter = adapter_factory(tooling)
        expected = (
            f"Agent365SDK/{get_sdk_version(adapter.distribution)} ({platform.system()}; "
            f"Python {platform.python_version()}; {adapter.orchestrator})"
        )
        assert {(r.route, r.server) for r in requests} >= {("gateway", None), ("rtp", None)}
        for request in requests:
            assert request.headers["user-agent"] == expected
            assert request.headers["x-ms-channel-id"] == "msteams"  # the channel, not "msteams:email"
            assert request.headers["x-ms-subchannel-id"] == "email"

    async def test_each_server_gets_only_its_own_audience(
        self, emulator: Emulator, adapter_factory: AdapterFactory
    ) -> None:
        from agents_a365.runtime import decode_token_payload

        turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
        requests = await run_turn(emulator, adapter_factory, turn, emulator.authorization())
        audiences: dict[tuple[str, str | None], set[str | None]] = {}
        for request in requests:
            auth = request.headers.get("authorization")
            aud = decode_token_payload(auth.removeprefix("Bearer "))["aud"] if auth else None
            audiences.setdefault((request.route, request.server), set()).add(aud)
        assert audiences[("gateway", None)] == {PLATFORM_AUDIENCE}
        assert audiences[("mcp", "mail")] == {PLATFORM_AUDIENCE}  # V1: the shared token
        assert audiences[("mcp", "calendar")] == {CALENDAR_AUDIENCE}  # V2: never the shared one
        assert audiences[("rtp", None)] == {None}  # threat protection takes no token

    async def test_no_header_value_carries_cr_or_lf(
        self, emulator: Emulator, adapter_factory: AdapterFactory
    ) -> None:
        hostile = make_turn_context(
            agentic_app_id=DEFAULT_AGENT_ID,
            channel_id="msteams\r\nX-Injected: yes:email\r\nX-Other: 1",
            activity_id="activity\r\nX-Evil: 1",
            blueprint_id="blue\nprint",
        )
        requests = await run_turn(emulator, adapter_factory, hostile, emulator.authorization())
        for request in requests:
            for name in request.headers:
                assert not re.search(r"[\r\n]", request.headers[name]), name
            assert "x-injected" not in request.headers
            assert "x-evil" not in request.headers
