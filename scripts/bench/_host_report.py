"""The report of the host benchmark: the tables, the targets (PASS/MISS), the profile, the JSON figures."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import Any

from _common import table, verdict
from _host_load import Phase, percentile

LABELS = {
    "ours": "ours",
    "floor": "floor (no SDK)",
    "otel": "ours + OTel (OTLP)",
    "otel-sdk": "ours + OTel, this SDK only",
    "ms": "Microsoft 2.0.0",
}
KNOWN = {"first", "warm", "cold", "profile"}  # phases with a table of their own (and s<N>, first-s<N>)


def fmt_ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def p(phase: Phase, q: float) -> float:
    return percentile(phase.latencies, q)


def row(o: str, name: str, value: float | None, goal: str, note: str = "") -> list[str]:
    """A target row: ``goal`` is ``<= x``, ``>= x``, ``<= x %`` or ``within x %`` (of 1)."""
    if value is None or value != value:
        return [o, name, "n/a", goal, "n/a" + (f" ({note})" if note else "")]
    op, limit, *percent = goal.split()
    limit_ = float(limit) / (100 if percent else 1)
    ok = {"<=": value <= limit_, ">=": value >= limit_, "within": abs(value - 1) <= limit_}[op]
    shown = f"{value:.3f}" if value < 0.1 else f"{value:.2f}"
    return [o, name, shown, goal, verdict(ok) + (f" ({note})" if note else "")]


def report(run: Any, args: argparse.Namespace, sends: tuple[float | None, float | None], otel_bytes: dict[str, int], rtp: dict[str, int]) -> dict[str, Any]:  # fmt: skip
    sends_ratio, send_cpu = sends
    figures: dict[str, Any] = {
        "args": {k: v for k, v in vars(args).items() if k != "json"},
        "orchestrators": {},
    }
    loop = f", {args.think_ms:g} ms think time" if args.think_ms else ", closed loop"
    print(
        f"\nMain phase: {args.conversations} concurrent conversations, {args.servers} servers, {args.warm_turns} "
        f"warm turns each x {args.rounds} round(s) (Microsoft: {args.ms_turns}){loop}\n"
    )
    targets: list[list[str]] = []
    restated: list[list[str]] = []
    for o in args.orchestrators:
        figures["orchestrators"][o] = o_fig = tables(run, args, o)
        ours, floor, ms, ot, so = (
            run.get(o, side, "warm") for side in ("ours", "floor", "ms", "otel", "otel-sdk")
        )
        cpu = ratio(ours.cpu_per_turn, floor.cpu_per_turn) if ours and floor else None
        p99 = ratio(p(ours, 99), p(floor, 99)) if ours and floor else None
        thr = ratio(ours.throughput, ms.throughput) if ours and ms else None
        # Wall-clock throughput moves with the neighbours; CPU per turn bounds a saturated host's throughput.
        by_cpu = ratio(ms.cpu_per_turn, ours.cpu_per_turn) if ours and ms else None
        if by_cpu is not None:
            why = f"by CPU/turn {by_cpu:.2f}"
        elif o == "langchain":
            why = "Microsoft has no LangChain extension"
        else:
            why = "skipped: --no-ms" if args.no_ms else "Microsoft's host answered no turn"
        co, cf = run.get(o, "ours", "cold"), run.get(o, "floor", "cold")
        cold = ratio(p(co, 50), p(cf, 50)) if co and cf else None
        otel = ratio(ot.throughput, ours.throughput) if ot and ours else None
        otel_cpu = ratio(ours.cpu_per_turn, ot.cpu_per_turn) if ot and ours else None
        lo, hi = flat_pair(args)
        flat, floor_flat = (growth(run, o, side, lo, hi) for side in ("ours", "floor"))
        targets += [
            row(o, "warm CPU/turn ours / floor", cpu, "<= 1.15"),
            row(o, "warm p99 latency ours / floor", p99, "<= 1.15"),
            row(o, "throughput ours / Microsoft 2.0.0", thr, ">= 2.0", why),
            row(o, "cold turn latency ours / floor @ cold servers", cold, "<= 1.25", f"{args.cold_servers} servers, p50"),
            row(o, "OTel on / off host throughput", otel, ">= 0.90", f"by CPU/turn {otel_cpu:.2f}" if otel_cpu else ""),
            row(o, f"warm CPU/turn {hi} / {lo} servers (ours)", flat, "within 10 %", f"floor {floor_flat:.2f}" if floor_flat else ""),
            row(o, "threat-protection sends CPU/send ours / floor", sends_ratio, "<= 1.2", "concurrency.py, core (either orchestrator)"),
            # Issue 37: ours is the example's agent built once for every user; the floor rebuilds every turn.
            row(o, f"build once: warm CPU/turn ours / floor ({lo} servers)", cpu, "<= 0.85"),
            row(o, f"build once: ours' growth {lo} -> {hi} servers", flat, "<= 1.15"),
        ]  # fmt: skip
        # The targets as restated in docs/performance.md ("A busy host").
        paced = "below saturation" if args.think_ms else "closed loop: saturated, p99 follows throughput"
        sdk_otel = ratio(so.throughput, ours.throughput) if so and ours else None
        sdk_cpu = ratio(ours.cpu_per_turn, so.cpu_per_turn) if so and ours else None
        share = send_cpu / ours.cpu_per_turn if send_cpu is not None and ours else None
        relative = flat / floor_flat if flat is not None and floor_flat else None
        restated += [
            row(o, "warm CPU/turn ours / floor", cpu, "<= 1.15"),
            row(o, "warm p99 ours / floor", p99, "<= 1.15", paced),
            row(o, "OTel on / off throughput, this SDK's providers", sdk_otel, ">= 0.90",
                f"by CPU/turn {sdk_cpu:.2f}; everything on: {otel:.2f}" if sdk_cpu and otel else ""),
            row(o, "a send's CPU / a warm turn's", share, "<= 2 %"),
            row(o, f"growth {lo} -> {hi} servers, ours / floor's", relative, "<= 1.10",
                f"ours {flat:.2f}, floor {floor_flat:.2f}" if flat and floor_flat else ""),
        ]  # fmt: skip
        o_fig["by_cpu"] = {"vs_ms": by_cpu, "otel": otel_cpu, "flat_floor": floor_flat}
        o_fig["targets"] = dict(zip(("cpu", "p99", "vs_ms", "cold", "otel", "flat", "sends"),
                                    (cpu, p99, thr, cold, otel, flat, sends_ratio), strict=True))  # fmt: skip
    for label, phase in run.wedged.items():
        print(f"!! host {label}: most turns of phase {phase!r} failed; its later phases were skipped\n")
    print("## Targets (same-run ratios)")
    table(targets, ["orchestrator", "figure", "value", "target", ""])
    print("## Targets as restated in docs/performance.md (the others above are unchanged)")
    table(restated, ["orchestrator", "figure", "value", "target", ""])
    profile = {o: asdict(prof) for o, prof in run.profile.items()}
    figures.update(targets=targets, restated_targets=restated, otel_collector=otel_bytes, rtp=rtp)
    figures.update(wedged=run.wedged, profile=profile)
    if otel_bytes:
        print(f"OTLP collector received: {json.dumps(otel_bytes)}\n")
    for orchestrator, prof in run.profile.items():
        print(f"## Profile of a warm phase, ours, {orchestrator} ({prof.tool}; share of the host's samples)")
        if prof.under_sdk is not None:
            print(f"samples with an agents_a365 frame on the stack: {prof.under_sdk:.1%}\n")
        table([[name, f"{share:.1%}"] for name, share in prof.self_functions], ["function (self)", "share"])
        table(
            [[name, f"{share:.1%}"] for name, share in prof.inclusive], ["function (on the stack)", "share"]
        )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1, default=str))
    return figures


def tables(run: Any, args: argparse.Namespace, o: str) -> dict[str, Any]:
    """The warm, cold, growth and other phases' tables of one orchestrator; their figures."""
    fig: dict[str, Any] = {}
    rows = []
    for side, label in LABELS.items():
        if phase := run.get(o, side, "warm"):
            fig[side] = summary(phase)
            rows.append([label, f"{phase.throughput:.1f}/s", *(fmt_ms(p(phase, q)) for q in (50, 95, 99))])
            rows[-1] += [fmt_ms(phase.cpu_per_turn), phase.connections, f"{phase.rss_mib:.0f} MiB"]
            rows[-1].append(f"{phase.turns}/{phase.errors}")
    print(f"## {o}: warm turns")
    table(
        rows,
        ["host", "turns/s", "p50", "p95", "p99", "CPU/turn", "conns (peak)", "RSS (peak)", "turns/errors"],
    )
    rows = []
    for side in ("ours", "floor"):
        if phase := run.get(o, side, "cold"):
            fig[f"cold_{side}"] = summary(phase)
            rows.append(
                [LABELS[side], fmt_ms(p(phase, 50)), fmt_ms(p(phase, 95)), fmt_ms(phase.cpu_per_turn)]
            )
            rows[-1].append(f"{phase.turns}/{phase.errors}")
    print(f"## {o}: cold turns (new users, {args.cold_servers} servers, {args.cold_concurrency} at a time)")
    table(rows, ["host", "p50", "p95", "CPU/turn", "turns/errors"])
    sizes = [(f"s{n}", f"{n} servers ({args.growth_base} conversations)") for n in args.growth_servers]
    rows = []
    for key, text in sizes:
        po, pf = run.get(o, "ours", key), run.get(o, "floor", key)
        if po and pf:
            fig[f"growth_{key}"] = {"ours": summary(po), "floor": summary(pf)}
            cpus = [
                fmt_ms(po.cpu_per_turn),
                fmt_ms(pf.cpu_per_turn),
                f"{ratio(po.cpu_per_turn, pf.cpu_per_turn):.2f}",
            ]
            rows.append([text, *cpus, fmt_ms(p(po, 99)), fmt_ms(p(pf, 99)), f"{po.throughput:.1f}/s"])
            rows[-1].append(f"{po.rss_mib:.0f} / {pf.rss_mib:.0f} MiB")
    print(f"## {o}: growth, CPU per warm turn")
    head = ["phase", "ours CPU/turn", "floor CPU/turn", "ours/floor", "ours p99", "floor p99", "ours turns/s"]
    table(rows, [*head, "RSS ours / floor"])
    other = sorted({(side, name) for (o_, side, name) in run.results if o_ == o and not known(name)})
    if other:  # phases added to host.PHASES without a table of their own
        rows = []
        for side, name in other:
            phase = run.get(o, side, name)
            fig.setdefault("phases", {})[f"{side}/{name}"] = summary(phase)
            rows.append([f"{side}/{name}", f"{phase.turns}/{phase.errors}", f"{phase.wall:.1f} s"])
            rows[-1] += [fmt_ms(p(phase, 50)), fmt_ms(p(phase, 99)), fmt_ms(phase.cpu_per_turn)]
        print(f"## {o}: other phases")
        table(rows, ["side/phase", "turns/errors", "wall", "p50", "p99", "CPU/turn"])
    return fig


def known(name: str) -> bool:
    return name in KNOWN or (name[:1] == "s" and name[1:].isdigit()) or name.startswith("first-s")


def growth(run: Any, o: str, side: str, lo: int, hi: int) -> float | None:
    a, b = run.get(o, side, f"s{lo}"), run.get(o, side, f"s{hi}")
    return ratio(b.cpu_per_turn, a.cpu_per_turn) if a and b and lo != hi else None


def flat_pair(args: argparse.Namespace) -> tuple[int, int]:
    """The server counts of the flatness target: the main phase's (8) and the largest growth count (32)."""
    counts = sorted(args.growth_servers)
    if not counts:
        return args.servers, args.servers
    return (args.servers if args.servers in counts else counts[0]), counts[-1]


def summary(phase: Phase) -> dict[str, float]:
    return {
        "turns": phase.turns,
        "errors": phase.errors,
        "turns_per_s": phase.throughput,
        **{f"p{q}_ms": p(phase, q) * 1000 for q in (50, 95, 99)},
        "cpu_per_turn_ms": phase.cpu_per_turn * 1000,
        "connections": phase.connections,
        "rss_mib": phase.rss_mib,
    }
