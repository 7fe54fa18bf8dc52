"""Fixtures of the telemetry tests: an in-memory span exporter and metric reader per test.

The SDK is pointed at providers of the test's own with ``configure_telemetry`` (the global providers
of ``opentelemetry-api`` can be set only once per process); every test ends with the defaults again.
"""

from __future__ import annotations

from collections.abc import Iterator

import agents
import pytest

from support.telemetry import Telemetry, recorded_telemetry


@pytest.fixture(autouse=True, scope="session")
def _no_openai_tracing() -> None:
    # The Agents SDK's own tracing would otherwise try to export to OpenAI.
    agents.set_tracing_disabled(True)


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    with recorded_telemetry() as telemetry:
        yield telemetry
