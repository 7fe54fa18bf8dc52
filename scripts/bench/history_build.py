"""Building a chat history (conversion only) in this checkout and, same run, in another one.

    uv run python scripts/bench/history_build.py [--against ../main-checkout ...] [--rounds 5]

Each round runs a fresh process per checkout, alternately (its own ``uv run``, so its own packages):
``convert_messages`` (LangChain ``HumanMessage``/``AIMessage``) and ``to_chat_history_messages``
(OpenAI session dicts, ``_ms_worker.make_openai_items``) over 100 and 10,000 messages, best and median
of many repeats. Printed: the median over rounds of each process's best, and the ratio to the other
checkout. Used for docs/performance.md ("Chat history after issue 24").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIZES = {100: 600, 10_000: 25}  # messages: repeats


def measure() -> dict[str, float]:
    """One process's best time per (extension, size), in ms."""
    import logging

    sys.path.insert(0, str(HERE))
    from _ms_worker import make_openai_items
    from langchain_core.messages import AIMessage, HumanMessage

    from agents_a365.tooling.extensions.langchain import convert_messages
    from agents_a365.tooling.extensions.openai import to_chat_history_messages

    logging.disable(logging.WARNING)
    best: dict[str, float] = {}
    for n, repeats in SIZES.items():
        items = make_openai_items(n)
        lc = [
            HumanMessage(i["content"], id=i["id"])
            if i["role"] == "user"
            else AIMessage(i["content"][0]["text"], id=i["id"])
            for i in items
        ]
        runs: dict[str, list[float]] = {"LangChain": [], "OpenAI": []}
        for _ in range(repeats):
            for name, convert, source in (
                ("LangChain", convert_messages, lc),
                ("OpenAI", to_chat_history_messages, items),
            ):
                t0 = time.perf_counter()
                assert len(convert(source)) == n
                runs[name].append(time.perf_counter() - t0)
        best.update({f"{name} {n}": min(t) * 1000 for name, t in runs.items()})
    return best


def run(checkout: Path) -> dict[str, float]:
    uv = os.environ.get("UV") or shutil.which("uv") or "uv"  # ``uv run`` names itself in UV
    command = [uv, "run", "--frozen", "--directory", str(checkout), "python", __file__, "--child"]
    out = subprocess.run(command, capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"{checkout}: {out.stderr[-2000:]}")
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--against", type=Path, action="append", default=[], help="another checkout (repeatable)"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure()))
        return
    from _common import header, table

    header("Chat history build", "uv run python scripts/bench/history_build.py " + " ".join(sys.argv[1:]))
    trees = {"this checkout": HERE.parents[1], **{str(p): p.resolve() for p in args.against}}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            results[name].append(run(tree))
    med = {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in results.items()}
    ours = med["this checkout"]
    head = ["messages", *trees, *(f"this / {p}" for p in args.against)]
    rows = [
        [
            key,
            *(f"{m[key]:.3f} ms" for m in med.values()),
            *(f"{ours[key] / med[str(p)][key]:.2f}" for p in args.against),
        ]
        for key in ours
    ]
    print(f"{args.rounds} alternating rounds; per round each process's best of {SIZES} repeats; medians")
    table(rows, head)


if __name__ == "__main__":
    main()
