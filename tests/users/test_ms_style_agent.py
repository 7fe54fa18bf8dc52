"""The sample-style agent (examples/ms_style_agent: Microsoft's call forms through this SDK's imports) answers
turns of two users over the hosted ``/api/messages`` path, in development and in production mode."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType
from typing import Any

import agents
import pytest
from aiohttp import web

from agents_a365.emulator import Emulator, channel_activity, post_activity
from agents_a365.emulator.tokens import TokenIssuer

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ms_style_agent" / "agent.py"
pytestmark = pytest.mark.filterwarnings("ignore:Use `streamable_http_client` instead:DeprecationWarning")


@pytest.fixture(scope="module")
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ms_style_agent_example", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    module.hosting.quiet_development_warnings()
    agents.set_tracing_disabled(True)
    return module


@contextlib.asynccontextmanager
async def _served(example: ModuleType, orchestrator: str, emu: Emulator) -> AsyncIterator[str]:
    app, adapter, sample = example.create_agent_app(orchestrator, tool_authorization=emu.authorization())
    runner = web.AppRunner(example.hosting.create_web_app(app, adapter, anonymous=True))
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/api/messages"
    finally:
        await runner.cleanup()
        await sample.cleanup()


def _development(emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Started from a subfolder of the project, as the samples are: the manifest is one folder up.
    manifest = {"mcpServers": [{"mcpServerName": n, "url": emu.server_url(n)} for n in ("mail", "calendar")]}
    (tmp_path / "ToolingManifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    (tmp_path / "agent").mkdir()
    monkeypatch.chdir(tmp_path / "agent")
    monkeypatch.setenv("ENVIRONMENT", "Development")
    monkeypatch.setenv("BEARER_TOKEN", emu.platform_token(user_id="developer"))
    monkeypatch.setenv("BEARER_TOKEN_CALENDAR", emu.server_token("calendar", user_id="developer"))


def _token_users(requests: list[Any]) -> list[str]:
    calls = [r for r in requests if r.jsonrpc_method == "tools/call"]
    assert calls
    return [TokenIssuer.decode_unverified(r.headers["authorization"].split(" ", 1)[1])["oid"] for r in calls]


@pytest.mark.parametrize("mode", ["development", "production"])
@pytest.mark.parametrize(
    ("orchestrator", "answer"), [("openai", "Sent email"), ("langchain", "free 30-minute")]
)
async def test_sample_style_agent_answers_two_users_over_http(
    example: ModuleType,
    emulator: Emulator,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    mode: str,
    orchestrator: str,
    answer: str,
) -> None:
    monkeypatch.setenv("MCP_PLATFORM_ENDPOINT", emulator.base_url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    if mode == "development":
        _development(emulator, monkeypatch, tmp_path)
    else:
        monkeypatch.setenv("ENVIRONMENT", "Production")
        monkeypatch.delenv("BEARER_TOKEN", raising=False)
    async with _served(example, orchestrator, emulator) as url:
        for user in ("alice", "bob", "alice"):
            before = len(emulator.requests_for("mcp"))
            activity = channel_activity(
                f"Hello from {user}", service_url=emulator.connector_url, user_id=user
            )
            response = await post_activity(url, activity, timeout=60)
            assert response.status_code in (200, 202)
            expected = "developer" if mode == "development" else user
            assert set(_token_users(emulator.requests_for("mcp")[before:])) == {expected}
    messages = [r["text"] for r in emulator.channel_replies if r["type"] == "message"]
    assert len(messages) == 3
    assert all(answer in text for text in messages), messages
    if orchestrator == "openai":
        assert len(emulator.chat_messages) == 3  # each turn's items reached threat protection
