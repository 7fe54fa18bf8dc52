"""The example's chat page (React + ``useChat``) in a real headless Chromium, for both orchestrators."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from node_tools import Node

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples"

from agents import set_tracing_disabled  # noqa: E402
from langchain.agents import create_agent  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from ui_stream_app.__main__ import build_app, get_weather  # noqa: E402
from ui_stream_app.app import create_langchain_app  # noqa: E402
from ui_stream_app.scripted import ScriptedChatModel  # noqa: E402

pytestmark = pytest.mark.slow  # started early on the parallel workers (tests/conftest.py)

set_tracing_disabled(True)
DRIVER_TIMEOUT = 120


@asynccontextmanager
async def serve(app: Any) -> AsyncIterator[str]:
    """``app`` on a real uvicorn server on 127.0.0.1, inside the test's event loop."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        async with asyncio.timeout(10):
            while not server.started:
                assert not task.done(), "uvicorn did not start"
                await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, timeout=10)
        sock.close()


async def drive(
    node: Node, driver: Path, chromium: str, url: str, scenario: str, message: str, shot: Path
) -> dict[str, Any]:
    process = await asyncio.create_subprocess_exec(
        node.node,
        str(driver),
        chromium,
        url,
        scenario,
        message,
        str(shot),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=driver.parent,
        env=node.env(),
    )
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), DRIVER_TIMEOUT)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    assert process.returncode == 0, stderr.decode()[-4000:]
    rendered: dict[str, Any] = json.loads(stdout)
    return rendered


@pytest.fixture
def browser(node: Node, puppeteer: Path, chromium: str, chat_page_build: Path, tmp_path: Path) -> Any:
    async def run(url: str, scenario: str, message: str, name: str) -> tuple[dict[str, Any], Path]:
        shot = tmp_path / f"{name}.png"
        return await drive(node, puppeteer, chromium, url, scenario, message, shot), shot

    return run


@pytest.mark.parametrize("orchestrator", ["langchain", "openai"])
async def test_a_person_asks_and_sees_reasoning_the_tool_call_and_the_answer(
    orchestrator: str, browser: Any
) -> None:
    async with serve(build_app(orchestrator, real_model=False)) as url:
        rendered, shot = await browser(url, "answer", "What's the weather in Oslo?", f"answer_{orchestrator}")
    assert rendered["consoleErrors"] == []
    assert rendered["orchestrator"] == orchestrator
    assert rendered["status"] == "ready"
    assert rendered["user"] == ["userWhat's the weather in Oslo?"]
    assert rendered["reasoning"] == ["reasoning The user asks about Oslo; I will call get_weather."]
    (tool_part,) = rendered["tools"]
    assert tool_part["name"] == "get_weather"
    assert tool_part["state"] == "output-available"
    assert json.loads(tool_part["input"]) == {"city": "Oslo"}
    expected = json.loads(await get_weather("Oslo"))
    assert json.loads(tool_part["output"]) == expected
    assert rendered["texts"][-1] == "It is sunny and 21 °C in Oslo."
    assert rendered["error"] is None
    assert shot.stat().st_size > 10_000  # a real rendering, kept in the test's tmp dir


async def test_a_model_failure_is_shown_as_an_error(browser: Any) -> None:
    async with serve(build_app("langchain", real_model=False)) as url:
        rendered, _ = await browser(url, "error", "please fail", "error")
    assert rendered["error"].startswith("Error: ")
    assert rendered["status"] == "error"
    assert rendered["texts"] == ["Let me think"]  # what streamed before the failure stays visible


async def test_stop_shows_the_cut_and_cancels_the_run_on_the_server(browser: Any) -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    @tool
    async def slow_report(topic: str) -> str:
        """Takes long."""
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "done"

    app = create_langchain_app(create_agent(ScriptedChatModel(), tools=[slow_report]))
    async with serve(app) as url:
        rendered, _ = await browser(url, "stop", "a slow report please", "stop")
        await asyncio.wait_for(cancelled.wait(), 10)
    assert started.is_set()
    assert rendered["stopped"] == "Stopped: the answer was cut short."
    assert rendered["status"] == "ready"
    (tool_part,) = rendered["tools"]
    assert tool_part["state"] == "input-available"  # never got an output
    assert rendered["error"] is None
