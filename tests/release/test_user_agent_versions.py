"""User-Agent reports the version of the package that sent the request (one version source: metadata)."""

from __future__ import annotations

import importlib.metadata as md
import tomllib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator
from agents_a365.runtime import get_sdk_version, get_user_agent_header
from agents_a365.tooling import ChatHistoryMessage, McpToolServerConfigurationService, ToolOptions
from agents_a365.tooling.extensions import langchain as lc_ext
from agents_a365.tooling.extensions import openai as oa_ext
from support.platform import production_config
from support.turns import make_turn_context

ROOT = Path(__file__).resolve().parents[2]


def _project(folder: str) -> dict[str, str]:
    data = tomllib.loads((ROOT / "packages" / folder / "pyproject.toml").read_text())
    return data["project"]  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    "folder",
    [
        "agents-a365-runtime",
        "agents-a365-tooling",
        "tooling-extensions-langchain",
        "tooling-extensions-openai",
        "agents-a365-emulator",
    ],
)
def test_the_runtime_version_is_the_pyproject_version(folder: str) -> None:
    project = _project(folder)
    assert get_sdk_version(project["name"]) == project["version"] == md.version(project["name"])


def test_user_agent_carries_the_version_of_the_named_distribution() -> None:
    assert get_user_agent_header("X", distribution="pytest").startswith(f"Agent365SDK/{pytest.__version__} (")
    assert get_user_agent_header("X").startswith(f"Agent365SDK/{md.version('agents-a365-runtime')} (")


@pytest.mark.parametrize(
    ("service_class", "folder"),
    [
        (lc_ext.McpToolRegistrationService, "tooling-extensions-langchain"),
        (oa_ext.McpToolRegistrationService, "tooling-extensions-openai"),
    ],
)
def test_each_extension_sends_as_itself(service_class: type, folder: str) -> None:
    assert service_class.distribution == _project(folder)["name"]


async def test_the_sending_package_version_reaches_the_wire(emulator: Emulator) -> None:
    """Tooling alone reports tooling's version; a caller naming another distribution reports that one."""
    turn = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
    history = [ChatHistoryMessage(id="m1", role="user", content="hi", timestamp=datetime.now(UTC))]
    async with McpToolServerConfigurationService(production_config(emulator)) as tooling:
        assert (await tooling.send_chat_history(turn, history)).succeeded
        assert (await tooling.send_chat_history(turn, history, ToolOptions(distribution="pytest"))).succeeded
        await tooling.list_tool_servers(
            turn, emulator.authorization(), "agentic", None, ToolOptions(distribution="pytest")
        )
        async with oa_ext.McpToolRegistrationService(tooling) as openai_service:
            assert (
                await openai_service.send_chat_history_messages(turn, [{"role": "user", "content": "hi"}])
            ).succeeded
    agents = [r.headers["user-agent"] for r in emulator.requests_for("rtp")]
    assert agents[0].startswith(f"Agent365SDK/{md.version('agents-a365-tooling')} (")
    assert agents[1].startswith(f"Agent365SDK/{pytest.__version__} (")
    assert agents[2] == get_user_agent_header("OpenAI", distribution="agents-a365-tooling-extensions-openai")
    [gateway] = emulator.requests_for("gateway")
    assert gateway.headers["user-agent"].startswith(f"Agent365SDK/{pytest.__version__} (")
