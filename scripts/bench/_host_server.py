"""One host process (``_host_procs.start_host``): ``--mode ours`` is the hosted example (``examples/hosted_agent``)
with the scripted model, its agent built once for every user; ``floor`` the same hosting with no SDK
(``_host_floor.py``). ``--otel-endpoint``: SDK providers exporting OTLP/HTTP there, global or this SDK's only.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.util
import logging
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from _forkserver import FREEZE, die_with_parent
from _host_floor import Floor, langchain_turn, openai_turn
from _host_models import OneToolLangChainModel, OneToolOpenAIModel, serve
from _host_profile import cprofile_routes

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "hosted_agent" / "agent.py"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hosted_agent_example", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    sys.modules[spec.name] = module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.quiet_development_warnings()
    return module


def otel_providers(endpoint: str, export_spans: bool = True) -> tuple[Any, Any]:
    """The realistic setup: SDK providers, batch span processor, periodic metric reader (5 s), OTLP/HTTP to
    ``endpoint`` (``export_spans`` False: spans are recorded but go nowhere)."""
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create({"service.name": "host-bench"})
    tracer_provider = TracerProvider(resource=resource)
    if export_spans:
        tracer_provider.add_span_processor(
            BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces"))
        )
    reader = PeriodicExportingMetricReader(OTLPMetricExporter(endpoint=f"{endpoint}/v1/metrics"), 5000)
    return tracer_provider, MeterProvider(resource=resource, metric_readers=[reader])


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


async def host(args: argparse.Namespace) -> None:
    from opentelemetry import metrics, trace

    from agents_a365.emulator import EmulatorAuthorization, TokenIssuer
    from agents_a365.tooling import (
        McpToolServerConfigurationService,
        ToolingConfiguration,
        configure_telemetry,
    )

    hosted = load_example()
    hosted.langchain_model, hosted.openai_model = OneToolLangChainModel, OneToolOpenAIModel
    providers, tracer = [], None
    if args.otel_endpoint:
        tracer_provider, meter_provider = providers = list(otel_providers(args.otel_endpoint))
        if args.otel_scope == "sdk":  # this SDK's instrumentation only (hosting-core's records nothing)
            configure_telemetry(tracer_provider=tracer_provider, meter_provider=meter_provider)
        else:
            trace.set_tracer_provider(tracer_provider)
            metrics.set_meter_provider(meter_provider)
        tracer = tracer_provider.get_tracer("host-bench")
    floor = Floor(args.emulator, args.secret) if args.mode == "floor" else None
    config = ToolingConfiguration(mcp_platform_endpoint=args.emulator, use_tooling_manifest=False)
    async with McpToolServerConfigurationService(config) as tooling:
        if floor is not None:
            app, adapter = floor_app(hosted, args.orchestrator, floor)
        else:
            auth = EmulatorAuthorization(TokenIssuer(args.secret))
            app, adapter = hosted.create_agent_app(
                args.orchestrator, tooling, tool_authorization=auth, tracer=tracer
            )
        web_app = hosted.create_web_app(app, adapter, anonymous=True)
        cprofile_routes(web_app)
        if os.environ.get(FREEZE):  # host.py --freeze: as the hosted example's main() does
            gc.collect()
            gc.freeze()
        try:
            await serve(web_app)
        finally:
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
    asyncio.run(host(args))


if __name__ == "__main__":
    main()
