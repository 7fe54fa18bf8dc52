"""Fixtures of the reliability suite: every scenario runs inside a leak and token-hygiene guard."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, settings
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator
from support.guard import Guard
from support.turns import make_turn_context

# The fuzzing profile: at least 2,000 examples per property on every run, CI included (the conversion fuzzing's
# rule), new ones each run (no fixed seed): ~30 s of CPU of the suite (the two properties over lists of messages
# are three quarters of it).
settings.register_profile(
    "a365-fuzz",
    max_examples=2_000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
    print_blob=True,
)


@pytest.fixture(autouse=True, scope="session")
def _no_tracing() -> None:
    import agents

    agents.set_tracing_disabled(True)  # the OpenAI Agents SDK would export traces otherwise


@pytest_asyncio.fixture
async def guard() -> AsyncIterator[Guard]:
    """Started before the scenario; at teardown asserts no leaked task/socket/transport and no token
    in any log record, error or registered repr (unless the test ran ``assert_clean`` itself)."""
    checker = Guard()
    checker.start()
    try:
        yield checker
        if not checker.finished:
            await checker.assert_clean()
    finally:
        checker.stop_capture()


@pytest_asyncio.fixture
async def emu(emulator: Emulator, guard: Guard) -> Emulator:
    """The default emulator, its tokens recorded by ``guard`` (set up after it, checked before it stops)."""
    return guard.watch(emulator)


@pytest.fixture
def turn() -> TurnContext:
    return make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
