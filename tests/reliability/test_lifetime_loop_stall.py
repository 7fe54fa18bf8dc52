"""Issue 27: a huge gateway answer (15,000 servers, near the 4 MiB cap) never stalls the event loop.

A lag monitor (a task measuring its own scheduling delay) runs while a real hostile gateway on loopback
answers 15,000 entries: no step of the discovery may hold the loop for 50 ms, cold or warm. It held it
for over a second before (parse, validation and per-server headers all ran on the loop).

Issue 37: nor may the collector, so discovery keeps few objects it tracks per server (CPython runs a full
collection, ~200 ms in a host, once objects promoted to its oldest generation exceed a quarter of those
there): counted, not timed.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents_a365.tooling import (
    MCPServerConfig,
    McpToolServerConfigurationService,
    ToolingConfiguration,
    _stepwise,
)
from agents_a365.tooling._stepwise import json_value, run
from support.hostile_server import HostileServer, behaviours
from support.jwt import make_jwt
from support.loop_lag import LagMonitor
from support.turns import make_turn_context

SERVERS = 15_000
BOUND = 0.050


def gateway_answer(base_url: str, count: int) -> bytes:
    return json.dumps(
        {
            "mcpServers": [
                {
                    "mcpServerName": f"notes_{i}",
                    "mcpServerUniqueName": f"mcp_Notes{i}Tools",
                    "url": f"{base_url}/agents/servers/notes_{i}/",
                    "publisher": "Contoso Ltd",
                    "scope": "McpServers.Notes.All",
                    "audience": "ea9ffc3e-8a23-4a7d-836d-234d7c7565c1",
                }
                for i in range(count)
            ]
        }
    ).encode()


@contextlib.asynccontextmanager
async def discovering(
    gateway: HostileServer, count: int
) -> AsyncIterator[tuple[McpToolServerConfigurationService, Callable[[], Awaitable[list[MCPServerConfig]]]]]:
    """A service discovering one turn's servers from ``gateway``, which answers ``count`` of them; the process
    warmed first on a small answer (TLS context, connection, imports): what is measured is the answer's size.
    Yields the service (its caches cleared) and the discovery call. Also the bench's (``discovery_stall.py``)."""
    config = ToolingConfiguration(mcp_platform_endpoint=gateway.base_url, use_tooling_manifest=False)
    token = make_jwt(appid="agent-app", aud="ea9ffc3e-8a23-4a7d-836d-234d7c7565c1")
    turn = make_turn_context(agentic_app_id="agent-app")
    async with McpToolServerConfigurationService(config) as service:
        gateway.route("/mcpServers", behaviours.respond(200, gateway_answer(gateway.base_url, 2)))
        await service.list_tool_servers(turn, None, None, auth_token=token)
        service.clear_caches()
        gateway.route("/mcpServers", behaviours.respond(200, gateway_answer(gateway.base_url, count)))
        yield service, functools.partial(service.list_tool_servers, turn, None, None, auth_token=token)


@pytest.fixture
async def gateway() -> AsyncIterator[HostileServer]:
    async with HostileServer() as server:
        yield server


@pytest.mark.serial  # CPU time between ticks: alone (tests/support/serial.py)
async def test_a_15000_server_gateway_answer_never_holds_the_loop_50_ms(gateway: HostileServer) -> None:
    async with discovering(gateway, SERVERS) as (service, discover):
        body = gateway_answer(gateway.base_url, SERVERS)
        assert 2.5 * 2**20 < len(body) < service.configuration.max_gateway_response_bytes
        lags = []
        for _ in range(3):  # cold (gateway read and parsed), then warm (cached servers, new headers)
            async with LagMonitor() as monitor:
                servers = await discover()
            assert len(servers) == SERVERS
            lags.append(monitor)
    print([monitor.report() for monitor in lags])
    assert len(gateway.requests) == 2  # the big answer was fetched once, then served from the cache
    # CPU time of the process: wall time also counts the OS running other processes on a busy machine.
    assert max(monitor.cpu for monitor in lags) < BOUND, [monitor.report() for monitor in lags]


@contextlib.contextmanager
def promotions() -> Iterator[list[int]]:
    """Objects the collector promotes to its oldest generation meanwhile, kept or not (what counts toward a
    full collection; none runs meanwhile)."""
    promoted, before = [0], [0]

    def count(phase: str, info: dict[str, int]) -> None:
        if info["generation"] == 1:  # the collection that promotes into the oldest generation
            if phase == "start":
                before[0] = len(gc.get_objects(2))
            else:
                promoted[0] += len(gc.get_objects(2)) - before[0]

    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], 10**9)
    gc.callbacks.append(count)
    try:
        yield promoted
    finally:
        gc.callbacks.remove(count)
        gc.set_threshold(*thresholds)


async def test_discovery_keeps_two_collected_objects_per_server(gateway: HostileServer) -> None:
    """Cold (gateway read, parsed, validated, cached) and warm (the cache's servers with this turn's
    headers): the servers returned (a model and its ``__dict__`` each; one fields-set shared) and nothing
    else per server, neither kept (the cache holds plain dicts of strings, which are not tracked) nor promoted
    on the way (the gateway's entries die young)."""
    count = 3_000
    async with discovering(gateway, count) as (service, discover):
        for label in ("cold", "warm"):
            if label == "cold":
                service.clear_caches()
            gc.collect()
            before = len(gc.get_objects())
            with promotions() as promoted:
                servers = await discover()
            gc.collect()
            kept = (len(gc.get_objects()) - before) / count
            assert len(servers) == count
            print(label, f"kept {kept:.2f}, promoted {promoted[0] / count:.2f} per server")
            assert kept < 2.1, (label, kept)
            assert promoted[0] / count < 2.5, (label, promoted[0] / count)
            del servers


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(JSON, st.sampled_from([None, 0, 2]), st.sampled_from([0, 8, _stepwise.WINDOW]), st.booleans())
def test_stepwise_parsing_is_json_loads(value: object, indent: int | None, window: int, text: bool) -> None:
    """Whatever the window (0: every container element by element) and whether bytes or text."""
    data = json.dumps(value, indent=indent)
    with mock.patch.object(_stepwise, "WINDOW", window):
        assert run(json_value(data if text else data.encode())) == json.loads(data)


@pytest.mark.parametrize(
    "data",
    [b"", b"[", b"[1,]", b'{"a" 1}', b"[1 2]", b"{1:2}", b"[1]x", b"\xff", b'{"a":1,}', b"[" * 100_000],
)
@pytest.mark.parametrize("window", [0, _stepwise.WINDOW])
def test_stepwise_parsing_rejects_what_json_loads_rejects(data: bytes, window: int) -> None:
    with pytest.raises((ValueError, RecursionError)):
        json.loads(data)
    with (
        mock.patch.object(_stepwise, "WINDOW", window),
        pytest.raises(ValueError, match=r"JSON|Expecting|expected|BOM|codec|extra data|nested"),
    ):
        run(json_value(data))
