"""Fixtures of the OpenAI extension tests: the production path against the emulator."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

# The helper modules next to this file (names prefixed to stay unique on sys.path).
sys.path.insert(0, str(Path(__file__).parent))

import agents
import pytest
import pytest_asyncio
from microsoft_agents.hosting.core import TurnContext
from openai_test_support import tooling_configuration

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator, EmulatorAuthorization
from agents_a365.tooling.extensions.openai import McpToolRegistrationService
from support.turns import make_turn_context


@pytest.fixture(autouse=True, scope="session")
def _no_tracing() -> None:
    # The SDK would otherwise try to export traces to OpenAI.
    agents.set_tracing_disabled(True)


@pytest.fixture
def turn() -> TurnContext:
    return make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)


@pytest.fixture
def authorization(emulator: Emulator) -> EmulatorAuthorization:
    return emulator.authorization()


@pytest_asyncio.fixture
async def service(emulator: Emulator) -> AsyncIterator[McpToolRegistrationService]:
    async with McpToolRegistrationService(configuration=tooling_configuration(emulator)) as svc:
        yield svc
