"""The report of the host benchmark: the tables, the targets (PASS/MISS), the profile, the JSON figures."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from _common import ms, table, verdict
from _host_load import Phase, percentile

LABELS = {
    "ours": "ours",
    "floor": "floor (no SDK)",
    "otel": "ours + OTel (OTLP)",
    "otel-sdk": "ours + OTel, this SDK only",
    "ms": "Microsoft 2.0.0",
}


def ratio(a: float | None, b: float | None) -> float | None:
    """``a / b``; ``None`` when either is missing, NaN when ``b`` is 0."""
    return None if a is None or b is None else a / b if b else float("nan")


def p(phase: Phase | None, q: float) -> float | None:
    return percentile(phase.latencies, q) if phase else None


def cpu(phase: Phase | None) -> float | None:
    return phase.cpu_per_turn if phase else None


def throughput(phase: Phase | None) -> float | None:
    return phase.throughput if phase else None


def row(o: str, name: str, value: float | None, goal: str, note: str = "") -> list[str]:
    """A target row: ``goal`` is ``<= x``, ``>= x``, ``<= x %`` or ``within x %`` (of 1)."""
    note = f" ({note})" if note else ""
    if value is None or value != value:
        return [o, name, "n/a", goal, "n/a" + note]
    op, limit, *percent = goal.split()
    bound = float(limit) / (100 if percent else 1)
    ok = {"<=": value <= bound, ">=": value >= bound, "within": abs(value - 1) <= bound}[op]
    return [o, name, f"{value:.3f}" if value < 0.1 else f"{value:.2f}", goal, verdict(ok) + note]


def report(
    run: Any, args: argparse.Namespace, sends: tuple[float | None, float | None], otel_bytes: dict[str, int],
    rtp: dict[str, int],
) -> dict[str, Any]:  # fmt: skip
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
    lo, hi = flat_pair(args)
    for o in args.orchestrators:
        figures["orchestrators"][o] = o_fig = tables(run, args, o)
        ours, floor, microsoft, ot, so = (
            run.get(o, side, "warm") for side in ("ours", "floor", "ms", "otel", "otel-sdk")
        )
        warm_cpu, p99 = ratio(cpu(ours), cpu(floor)), ratio(p(ours, 99), p(floor, 99))
        thr = ratio(throughput(ours), throughput(microsoft))
        # Wall-clock throughput moves with the neighbours; CPU per turn bounds a saturated host's throughput.
        by_cpu = ratio(cpu(microsoft), cpu(ours))
        if by_cpu is not None:
            why = f"by CPU/turn {by_cpu:.2f}"
        elif o == "langchain":
            why = "Microsoft has no LangChain extension"
        else:
            why = "skipped: --no-ms" if args.no_ms else "Microsoft's host answered no turn"
        cold = ratio(p(run.get(o, "ours", "cold"), 50), p(run.get(o, "floor", "cold"), 50))
        otel, otel_cpu = ratio(throughput(ot), throughput(ours)), ratio(cpu(ours), cpu(ot))
        flat, floor_flat = (growth(run, o, side, lo, hi) for side in ("ours", "floor"))
        targets += [
            row(o, "warm CPU/turn ours / floor", warm_cpu, "<= 1.15"),
            row(o, "warm p99 latency ours / floor", p99, "<= 1.15"),
            row(o, "throughput ours / Microsoft 2.0.0", thr, ">= 2.0", why),
            row(o, "cold turn latency ours / floor @ cold servers", cold, "<= 1.25", f"{args.cold_servers} servers, p50"),
            row(o, "OTel on / off host throughput", otel, ">= 0.90", f"by CPU/turn {otel_cpu:.2f}" if otel_cpu else ""),
            row(o, f"warm CPU/turn {hi} / {lo} servers (ours)", flat, "within 10 %", f"floor {floor_flat:.2f}" if floor_flat else ""),
            row(o, "threat-protection sends CPU/send ours / floor", sends_ratio, "<= 1.2", "concurrency.py, core (either orchestrator)"),
            # Issue 37: ours is the example's agent built once for every user; the floor rebuilds every turn.
            row(o, f"build once: warm CPU/turn ours / floor ({lo} servers)", warm_cpu, "<= 0.85"),
            row(o, f"build once: ours' growth {lo} -> {hi} servers", flat, "<= 1.15"),
        ]  # fmt: skip
        # The targets as restated in docs/performance.md ("A busy host").
        paced = "below saturation" if args.think_ms else "closed loop: saturated, p99 follows throughput"
        sdk_otel, sdk_cpu = ratio(throughput(so), throughput(ours)), ratio(cpu(ours), cpu(so))
        share, relative = ratio(send_cpu, cpu(ours)), ratio(flat, floor_flat or None)
        restated += [
            row(o, "warm CPU/turn ours / floor", warm_cpu, "<= 1.15"),
            row(o, "warm p99 ours / floor", p99, "<= 1.15", paced),
            row(o, "OTel on / off throughput, this SDK's providers", sdk_otel, ">= 0.90",
                f"by CPU/turn {sdk_cpu:.2f}; everything on: {otel:.2f}" if sdk_cpu and otel else ""),
            row(o, "a send's CPU / a warm turn's", share, "<= 2 %"),
            row(o, f"growth {lo} -> {hi} servers, ours / floor's", relative, "<= 1.10",
                f"ours {flat:.2f}, floor {floor_flat:.2f}" if flat and floor_flat else ""),
        ]  # fmt: skip
        o_fig["by_cpu"] = {"vs_ms": by_cpu, "otel": otel_cpu, "flat_floor": floor_flat}
        values = (warm_cpu, p99, thr, cold, otel, flat, sends_ratio)
        o_fig["targets"] = dict(
            zip(("cpu", "p99", "vs_ms", "cold", "otel", "flat", "sends"), values, strict=True)
        )
    for label, phase in run.wedged.items():
        print(f"!! host {label}: most turns of phase {phase!r} failed; its later phases were skipped\n")
    head = ["orchestrator", "figure", "value", "target", ""]
    print("## Targets (same-run ratios)")
    table(targets, head)
    print("## Targets as restated in docs/performance.md (the others above are unchanged)")
    table(restated, head)
    profile = {o: asdict(prof) for o, prof in run.profile.items()}
    figures.update(targets=targets, restated_targets=restated, otel_collector=otel_bytes, rtp=rtp)
    figures.update(wedged=run.wedged, profile=profile)
    # Every turn's start (s) and latency (null: failed), per phase and round: where a tail comes from.
    figures["turns"] = {"/".join(key): [r.records for r in rounds] for key, rounds in run.results.items()}
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
        Path(args.json).write_text(json.dumps(figures, indent=1, default=str))
    return figures


def lat(phase: Phase, *qs: float) -> list[str]:
    return [ms(percentile(phase.latencies, q)) for q in qs]


def tables(run: Any, args: argparse.Namespace, o: str) -> dict[str, Any]:
    """The warm, cold, growth and other phases' tables of one orchestrator; their figures."""
    fig: dict[str, Any] = {}
    rows = []
    for side, label in LABELS.items():
        if ph := run.get(o, side, "warm"):
            fig[side] = summary(ph)
            rows.append([label, f"{ph.throughput:.1f}/s", *lat(ph, 50, 95, 99), ms(ph.cpu_per_turn),
                         ph.connections, f"{ph.rss_mib:.0f} MiB", f"{ph.turns}/{ph.errors}"])  # fmt: skip
    print(f"## {o}: warm turns")
    head = ["host", "turns/s", "p50", "p95", "p99", "CPU/turn", "conns (peak)", "RSS (peak)", "turns/errors"]
    table(rows, head)
    rows = []
    for side in ("ours", "floor"):
        if ph := run.get(o, side, "cold"):
            fig[f"cold_{side}"] = summary(ph)
            rows.append([LABELS[side], *lat(ph, 50, 95), ms(ph.cpu_per_turn), f"{ph.turns}/{ph.errors}"])
    print(f"## {o}: cold turns (new users, {args.cold_servers} servers, {args.cold_concurrency} at a time)")
    table(rows, ["host", "p50", "p95", "CPU/turn", "turns/errors"])
    rows = []
    for n in args.growth_servers:
        po, pf = run.get(o, "ours", f"s{n}"), run.get(o, "floor", f"s{n}")
        if po and pf:
            fig[f"growth_s{n}"] = {"ours": summary(po), "floor": summary(pf)}
            rows.append([f"{n} servers ({args.growth_base} conversations)", ms(po.cpu_per_turn),
                         ms(pf.cpu_per_turn), f"{ratio(po.cpu_per_turn, pf.cpu_per_turn):.2f}", *lat(po, 99),
                         *lat(pf, 99), f"{po.throughput:.1f}/s", f"{po.rss_mib:.0f} / {pf.rss_mib:.0f} MiB"])  # fmt: skip
    print(f"## {o}: growth, CPU per warm turn")
    table(rows, ["phase", "ours CPU/turn", "floor CPU/turn", "ours/floor", "ours p99", "floor p99", "ours turns/s",
                 "RSS ours / floor"])  # fmt: skip
    return fig


def growth(run: Any, o: str, side: str, lo: int, hi: int) -> float | None:
    return ratio(cpu(run.get(o, side, f"s{hi}")), cpu(run.get(o, side, f"s{lo}"))) if lo != hi else None


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
        **{f"p{q}_ms": percentile(phase.latencies, q) * 1000 for q in (50, 95, 99)},
        "cpu_per_turn_ms": phase.cpu_per_turn * 1000,
        "connections": phase.connections,
        "rss_mib": phase.rss_mib,
    }
