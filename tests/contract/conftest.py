from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agents_a365.emulator import Emulator
from agents_a365.tooling import McpToolServerConfigurationService
from contract.adapters import ADAPTERS, ExtensionAdapter
from support.platform import production_config


@pytest.fixture(params=sorted(ADAPTERS))
async def adapter(request: pytest.FixtureRequest, emulator: Emulator) -> AsyncIterator[ExtensionAdapter]:
    async with McpToolServerConfigurationService(production_config(emulator)) as tooling:
        yield ADAPTERS[request.param](tooling)
