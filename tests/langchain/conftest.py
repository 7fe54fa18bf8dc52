"""Fixtures for the LangChain extension tests: the emulator, a real turn and the service."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator
from agents_a365.emulator.authorization import EmulatorAuthorization
from agents_a365.tooling.extensions.langchain import McpToolRegistrationService
from support.turns import make_turn_context

# This folder's helper modules (lc_support, scripted_model) are imported by plain name.
sys.path.insert(0, str(Path(__file__).parent))

from lc_support import tooling_configuration


@pytest.fixture
async def service(emulator: Emulator) -> AsyncIterator[McpToolRegistrationService]:
    async with McpToolRegistrationService(configuration=tooling_configuration(emulator)) as svc:
        yield svc


@pytest.fixture
def turn() -> TurnContext:
    return make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)


@pytest.fixture
def authorization(emulator: Emulator) -> EmulatorAuthorization:
    return emulator.authorization()
