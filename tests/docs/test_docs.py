"""Every Python block of the READMEs and docs runs as written, or is marked as an excerpt.

Blocks are found by pytest-examples' ``find_examples``. A fenced block opens as ```` ```python ````
(run with no setup), ```` ```python setup="NAME" ```` (run with the names that setup provides, see
``SETUPS`` below: the block declares what it relies on) or ```` ```python test="excerpt" ```` (a fragment
of a larger program: only compiled). Blocks run with top-level ``await`` allowed, against a real emulator
that the tooling settings point at; a block that defines ``on_message(turn_context, authorization)`` is then
called with a real hosting-core turn, the way hosting calls a handler.
"""

from __future__ import annotations

import ast
import inspect
import logging
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pytest_examples import CodeExample, find_examples

from agents_a365.emulator import Emulator
from agents_a365.emulator.turns import make_turn_context

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted(ROOT.glob("packages/*/README.md")), *sorted(ROOT.glob("docs/*.md"))]
DOCS += sorted(ROOT.glob("examples/*/README.md"))
EXAMPLES = list(find_examples(*DOCS))

if str(ROOT / "scripts") not in sys.path:
    sys.path.insert(0, str(ROOT / "scripts"))  # the demo's scripted models


def _turn(emu: Emulator) -> dict[str, Any]:
    return {
        "emu": emu,
        "turn_context": make_turn_context(agentic_app_id=emu.config.agent_id, text="What is on my calendar?"),
        "authorization": emu.authorization(),
        "token": emu.platform_token(),
        "logger": logging.getLogger("docs_example"),
    }


def _langchain(emu: Emulator) -> dict[str, Any]:
    from demo_models import ScriptedSchedulingModel
    from langchain.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver

    @tool
    def my_tool(city: str) -> str:
        """The weather in a city."""
        return f"Sunny in {city}"

    from agents_a365.tooling.extensions.langchain import McpToolRegistrationService

    saver = InMemorySaver()
    return {
        "service": McpToolRegistrationService(),
        **_turn(emu),
        "model": ScriptedSchedulingModel(),
        "my_tool": my_tool,
        "my_tools": [my_tool],
        "saver": saver,
        "checkpointer": saver,
    }


def _openai(emu: Emulator) -> dict[str, Any]:
    from agents import set_tracing_disabled
    from demo_models import ScriptedMailModel

    set_tracing_disabled(True)  # no key: the Agents SDK must not try to export traces

    return {**_turn(emu), "model": ScriptedMailModel()}


# What each setup provides; a block names the one it relies on with setup="...".
SETUPS = {"turn": _turn, "langchain": _langchain, "openai": _openai}


def test_every_block_is_run_or_marked_as_an_excerpt() -> None:
    assert len(EXAMPLES) > 20  # the finder still finds the blocks
    for example in EXAMPLES:
        settings = example.prefix_settings()
        assert settings.get("test", "run") in {"run", "excerpt"}, (
            f"{example}: unknown test={settings['test']!r}"
        )
        assert settings.get("setup", "turn") in SETUPS, f"{example}: unknown setup={settings['setup']!r}"


@pytest.fixture
async def doc_emulator(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Emulator]:
    async with Emulator() as emu:
        # Production settings pointed at the emulator: discovery through its gateway, tokens exchanged.
        monkeypatch.setenv("ENVIRONMENT", "Production")
        monkeypatch.setenv("MCP_PLATFORM_ENDPOINT", emu.base_url)
        monkeypatch.setenv("A365_ALLOW_INSECURE_HTTP", "true")
        monkeypatch.setenv("OPENAI_API_KEY", "")  # the scripted models, never the network
        yield emu


def _compile(example: CodeExample) -> Any:
    # Line numbers in tracebacks are those of the Markdown file.
    source = "\n" * (example.start_line) + example.source
    return compile(source, str(example.path), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


@pytest.mark.parametrize("example", EXAMPLES, ids=str)
async def test_doc_block(
    example: CodeExample, doc_emulator: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = example.prefix_settings()
    code = _compile(example)
    if settings.get("test") == "excerpt":
        return  # compiled above: an excerpt must at least be valid Python
    monkeypatch.chdir(tmp_path)  # files a block writes (e.g. a SQLite session) stay in the test's folder
    namespace: dict[str, Any] = {
        "__name__": "docs_example",
        **SETUPS[settings.get("setup", "turn")](doc_emulator),
    }
    logging.getLogger("docs_example").debug("running %s", example)
    try:
        result = eval(code, namespace)  # our own documentation: running it is the point
        if inspect.iscoroutine(result):
            await result
        handler = namespace.get("on_message")
        if handler is not None and inspect.iscoroutinefunction(handler):
            await handler(namespace["turn_context"], namespace["authorization"])
            if "send_chat_history" in example.source:  # the handler's turn reached threat protection
                assert doc_emulator.chat_messages, f"{example}: no chat history reached the emulator"
    finally:
        service = namespace.get("service")
        if service is not None and hasattr(service, "aclose"):
            await service.aclose()
