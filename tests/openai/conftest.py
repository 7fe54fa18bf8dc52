"""Fixtures of the OpenAI extension tests: the production path against the emulator."""

from __future__ import annotations

from collections.abc import AsyncIterator

import agents
import pytest
import pytest_asyncio
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator, EmulatorAuthorization
from agents_a365.tooling.extensions.openai import McpToolRegistrationService
from support.platform import production_config
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
    async with McpToolRegistrationService(configuration=production_config(emulator)) as svc:
        yield svc
