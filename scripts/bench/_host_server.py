"""One host process of the host benchmark (started by ``host.py``; prints ``ready <url>`` when serving).

    python scripts/bench/_host_server.py --mode ours|floor --orchestrator langchain|openai \
        --emulator URL --secret S [--otel-endpoint URL]

``ours`` is the hosted example agent (``examples/hosted_agent/agent.py``: AgentApplication + CloudAdapter
on aiohttp, ``/api/messages``), loaded as users copy it, with the benchmark's one-tool scripted model:

- both orchestrators: the example's own agent, built once before any turn for every user (LangChain
  ``service.create_agent``, OpenAI ``service.agent_servers``), its model factory replaced. Every notes server has
  the same tool names: the SDK exposes the clashing ones as ``<server>_<tool>``.

``floor`` is the same host (same hosting glue, typing indicator, orchestrators and model) with no SDK
(``_host_floor.py``). With ``--otel-endpoint`` the SDK tracer and meter providers are set globally
(``BatchSpanProcessor`` and ``PeriodicExportingMetricReader``, OTLP/HTTP to that collector) and each turn
runs in the example's ``invoke_agent`` span. ``POST /_bench/profile/start|stop`` runs cProfile on the
event loop's thread (the fallback when py-spy is not installed). ``SIGUSR1`` writes every asyncio task
of the host and its await chain to stderr (the host's log): what a host that stopped answering waits on.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import importlib.util
import io
import logging
import os
import signal
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _host_floor import Floor, langchain_turn, openai_turn
from _host_models import OneToolLangChainModel, OneToolOpenAIModel

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "hosted_agent" / "agent.py"


def die_with_parent() -> None:
    """Linux: SIGTERM when the benchmark process dies, so no host outlives an interrupted run."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() == 1:
        os._exit(1)


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hosted_agent_example", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    module.quiet_development_warnings()
    return module


def setup_otel(endpoint: str, scope: str = "global") -> tuple[Any, list[Any]]:
    """The realistic setup: SDK providers, batch span processor, periodic metric reader, OTLP/HTTP. ``global``:
    set as the global providers (hosting-core records too); ``sdk``: given to this SDK only
    (``configure_telemetry``), the app's ``invoke_agent`` span on them."""
    from opentelemetry import metrics, trace
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create({"service.name": "host-bench"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces")))
    reader = PeriodicExportingMetricReader(
        OTLPMetricExporter(endpoint=f"{endpoint}/v1/metrics"), export_interval_millis=5000
    )
    meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
    if scope == "sdk":
        from agents_a365.tooling import configure_telemetry

        configure_telemetry(tracer_provider=tracer_provider, meter_provider=meter_provider)
    else:
        trace.set_tracer_provider(tracer_provider)
        metrics.set_meter_provider(meter_provider)
    return tracer_provider.get_tracer("host-bench"), [tracer_provider, meter_provider]


def floor_app(hosted: ModuleType, orchestrator: str, floor: Floor) -> tuple[Any, Any]:
    """The example's hosting (AgentApplication, CloudAdapter, development connections), the floor's turn."""
    from microsoft_agents.activity import Activity, ActivityTypes
    from microsoft_agents.hosting.aiohttp import CloudAdapter
    from microsoft_agents.hosting.core import AgentApplication, MemoryStorage, TurnContext, TurnState

    connections = hosted.DevelopmentConnections()
    adapter = CloudAdapter(connection_manager=connections)
    app = AgentApplication[TurnState](storage=MemoryStorage(), connection_manager=connections)
    run = langchain_turn if orchestrator == "langchain" else openai_turn
    if orchestrator == "openai":
        from agents import set_tracing_disabled

        set_tracing_disabled(True)

    @app.activity("message")
    async def on_message(context: TurnContext, state: TurnState) -> None:
        await context.send_activity(Activity(type=ActivityTypes.typing))
        await run(floor, context, context.activity.recipient.agentic_app_id)

    return app, adapter


def bench_routes(web_app: web.Application) -> None:
    profiler: list[cProfile.Profile] = []

    async def start(request: web.Request) -> web.Response:
        profiler[:] = [cProfile.Profile()]
        profiler[0].enable()
        return web.Response(text="started")

    async def stop(request: web.Request) -> web.Response:
        if not profiler:
            return web.Response(status=409, text="not started")
        profiler[0].disable()
        profiler[0].dump_stats(request.query["path"])
        profiler.clear()
        return web.Response(text="stopped")

    web_app.router.add_post("/_bench/profile/start", start)
    web_app.router.add_post("/_bench/profile/stop", stop)


def await_chain(task: asyncio.Task[Any]) -> list[str]:
    """Where a task waits: its coroutine and every coroutine it awaits, outermost first (``print_stack``
    shows only the outermost frame of a suspended task)."""
    chain: list[str] = []
    awaited: Any = task.get_coro()
    while awaited is not None and len(chain) < 60:
        frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "ag_frame", None)
        frame = frame or getattr(awaited, "gi_frame", None)
        if frame is not None:
            chain.append(f"  {frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}")
        following = getattr(awaited, "cr_await", None) or getattr(awaited, "ag_await", None)
        awaited = following or getattr(awaited, "gi_yieldfrom", None)
    return chain


def dump_tasks() -> None:
    """Every task of the running loop and the await chain where it waits (``kill -USR1 <host pid>``)."""
    out = io.StringIO()
    tasks = asyncio.all_tasks()
    out.write(f"=== {len(tasks)} asyncio tasks ===\n")
    for task in sorted(tasks, key=lambda t: t.get_name()):
        out.write(f"Task {task.get_name()}\n")
        out.writelines(f"{line}\n" for line in await_chain(task))
    out.write("=== end of tasks ===\n")
    sys.stderr.write(out.getvalue())
    sys.stderr.flush()


async def serve(args: argparse.Namespace) -> None:
    from agents_a365.emulator import EmulatorAuthorization, TokenIssuer
    from agents_a365.tooling import McpToolServerConfigurationService, ToolingConfiguration

    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, dump_tasks)
    hosted = load_example()
    hosted.langchain_model = OneToolLangChainModel
    hosted.openai_model = OneToolOpenAIModel
    tracer, providers = setup_otel(args.otel_endpoint, args.otel_scope) if args.otel_endpoint else (None, [])
    floor = Floor(args.emulator, args.secret) if args.mode == "floor" else None
    tooling = McpToolServerConfigurationService(
        ToolingConfiguration(mcp_platform_endpoint=args.emulator, use_tooling_manifest=False)
    )
    async with tooling:
        if floor is not None:
            app, adapter = floor_app(hosted, args.orchestrator, floor)
        else:
            auth = EmulatorAuthorization(TokenIssuer(args.secret))
            app, adapter = hosted.create_agent_app(
                args.orchestrator, tooling, tool_authorization=auth, tracer=tracer
            )
        web_app = hosted.create_web_app(app, adapter, anonymous=True)
        bench_routes(web_app)
        runner = web.AppRunner(web_app, access_log=None, shutdown_timeout=2)
        await runner.setup()
        try:
            await web.TCPSite(runner, "127.0.0.1", 0, backlog=4096).start()
            print(f"ready http://127.0.0.1:{runner.addresses[0][1]}", flush=True)
            reader = asyncio.StreamReader()
            loop = asyncio.get_running_loop()
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
            await reader.read()  # until the driver closes our stdin
        finally:
            await runner.cleanup()
            if floor is not None:
                await floor.close()
            for provider in providers:
                provider.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["ours", "floor"], required=True)
    parser.add_argument("--orchestrator", choices=["langchain", "openai"], required=True)
    parser.add_argument("--emulator", required=True)
    parser.add_argument("--secret", required=True)
    parser.add_argument("--otel-endpoint")
    parser.add_argument("--otel-scope", choices=["global", "sdk"], default="global")
    args = parser.parse_args()
    die_with_parent()
    logging.basicConfig(level=logging.ERROR)
    logging.getLogger("aiohttp.access").setLevel(logging.ERROR)
    asyncio.run(serve(args))


if __name__ == "__main__":
    main()
