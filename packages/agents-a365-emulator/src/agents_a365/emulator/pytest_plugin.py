"""Pytest plugin providing the ``emulator`` fixture.

Opt-in: installing the emulator does not load it into every test session of the environment. Load it with
``pytest_plugins = ["agents_a365.emulator.pytest_plugin"]`` in the root ``conftest.py``, or ``-p
agents_a365.emulator.pytest_plugin`` on the command line or in ``addopts``. The emulator itself is imported
lazily inside the fixture to keep plugin loading cheap for test sessions that never use it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from agents_a365.emulator.emulator import Emulator

try:  # pytest-asyncio registers async fixtures in every mode (auto and strict).
    from pytest_asyncio import fixture as _async_fixture
except ImportError:  # pragma: no cover - without pytest-asyncio async fixtures need another runner
    _async_fixture = pytest.fixture  # type: ignore[assignment]


@_async_fixture
async def emulator() -> AsyncIterator[Emulator]:
    """A started :class:`~agents_a365.emulator.Emulator` with the default configuration.

    Function-scoped: every test gets a fresh emulator on a free port, stopped when the test ends.
    """
    from agents_a365.emulator.emulator import Emulator

    async with Emulator() as emu:
        yield emu
