from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator
from agents_a365.tooling import McpToolServerConfigurationService
from support.platform import production_config
from support.turns import make_turn_context


@pytest.fixture
async def service(emulator: Emulator) -> AsyncIterator[McpToolServerConfigurationService]:
    async with McpToolServerConfigurationService(production_config(emulator)) as svc:
        yield svc


@pytest.fixture
def turn():  # type: ignore[no-untyped-def]
    return make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
