"""Fixtures for the LangChain extension tests: the emulator, a real turn and the service."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator
from agents_a365.emulator.authorization import EmulatorAuthorization
from agents_a365.tooling.extensions.langchain import McpToolRegistrationService
from support.platform import production_config
from support.turns import make_turn_context


@pytest.fixture
async def service(emulator: Emulator) -> AsyncIterator[McpToolRegistrationService]:
    async with McpToolRegistrationService(configuration=production_config(emulator)) as svc:
        yield svc


@pytest.fixture
def turn() -> TurnContext:
    return make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)


@pytest.fixture
def authorization(emulator: Emulator) -> EmulatorAuthorization:
    return emulator.authorization()
