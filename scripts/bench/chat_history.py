"""Issue 9, target 4: converting and serializing 10,000 chat history messages.

    uv run python scripts/bench/chat_history.py [--messages 10000] [--repeats 15]

- ours (OpenAI extension): ``to_chat_history_messages(items)`` then the request body exactly as
  ``send_chat_history`` builds it (``_request_body``: ``model_dump_json(by_alias=True)``);
- Microsoft 2.0.0 (another process, same items): ``_convert_openai_messages_to_chat_history`` (what
  ``send_chat_history_messages`` calls), and conversion + their serialization
  (``json.dumps(ChatMessageRequest(...).model_dump(by_alias=True, mode="json"))``);
- ours (LangChain extension): ``convert_messages`` over the same conversation as LangChain messages;
- the floor: ``json.dumps`` of the equivalent camelCase dicts (timestamps already strings).

Target: convert + serialize at most 0.5x Microsoft's conversion, for both extensions; serialization at
most 2x the floor.

Items: alternating user messages (``{"role": "user", "content": str}``) and assistant output messages
(``content=[{"type": "output_text", ...}]``), all with ids (``_ms_worker.make_openai_items``).
Rounds are interleaved (ours, Microsoft, LangChain, floor); medians.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import time
from datetime import UTC, datetime

from _common import Samples, agent_id_for, emulator_process, header, make_turn, ms, ms_worker, table, verdict
from _ms_worker import make_openai_items
from langchain_core.messages import AIMessage, HumanMessage

from agents_a365.tooling._threat_protection import _request_body
from agents_a365.tooling._turn import read_turn
from agents_a365.tooling.extensions.langchain import convert_messages
from agents_a365.tooling.extensions.openai._conversion import to_chat_history_messages


def serialize(turn: object, history: list) -> bytes:  # type: ignore[type-arg]
    # What McpToolServerConfigurationService.send_chat_history does to build the body (the turn read once).
    return _request_body(read_turn(turn), history)[0]  # type: ignore[arg-type]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    header("Chat history conversion (issue 9, target 4)", "uv run python scripts/bench/chat_history.py")
    n = args.messages
    items = make_openai_items(n)
    lc_messages = [
        HumanMessage(it["content"], id=it["id"])
        if it["role"] == "user"
        else AIMessage(it["content"][0]["text"], id=it["id"])
        for it in items
    ]
    turn = make_turn(agent_id_for(1))
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    floor_dicts = {
        "conversationId": "conversation-1",
        "messageId": "activity-1",
        "userMessage": "What is on my calendar?",
        "chatHistory": [
            {
                "id": it["id"],
                "role": it["role"],
                "content": it["content"] if isinstance(it["content"], str) else it["content"][0]["text"],
                "timestamp": now,
            }
            for it in items
        ],
    }
    s = Samples()
    with emulator_process(latency_ms=0, counts=(1,), notes_servers=1) as emu:
        async with ms_worker(emu) as msw:
            await msw.call("convert", n=n, repeats=2)  # warm-up
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                history = to_chat_history_messages(items)
                t1 = time.perf_counter()
                body = serialize(turn, history)
                t2 = time.perf_counter()
                s.add("oa_convert", t1 - t0)
                s.add("oa_serialize", t2 - t1)
                s.add("oa_both", t2 - t0)
                assert len(history) == n, len(history)

                r = await msw.call("convert", n=n, repeats=1)
                s.add("ms_convert", r["convert"][0])
                s.add("ms_both", r["convert_serialize"][0])
                assert r["converted"] == n

                t0 = time.perf_counter()
                lc_history = convert_messages(lc_messages)
                t1 = time.perf_counter()
                serialize(turn, lc_history)
                t2 = time.perf_counter()
                s.add("lc_convert", t1 - t0)
                s.add("lc_both", t2 - t0)
                assert len(lc_history) == n

                t0 = time.perf_counter()
                floor = json.dumps(floor_dicts).encode()
                s.add("floor", time.perf_counter() - t0)
    print(
        f"{n} messages, {args.repeats} interleaved repeats, medians; body {len(body)} bytes (floor {len(floor)})"
    )
    print()
    table(
        [
            [
                "ours, OpenAI extension",
                ms(s.med("oa_convert")),
                ms(s.med("oa_serialize")),
                ms(s.med("oa_both")),
            ],
            [
                "ours, LangChain extension",
                ms(s.med("lc_convert")),
                ms(s.med("lc_both") - s.med("lc_convert")),
                ms(s.med("lc_both")),
            ],
            [
                "Microsoft 2.0.0",
                ms(s.med("ms_convert")),
                ms(s.med("ms_both") - s.med("ms_convert")),
                ms(s.med("ms_both")),
            ],
            ["json.dumps of the dicts (floor)", "", ms(s.med("floor")), ""],
        ],
        ["", "convert", "serialize", "convert + serialize"],
    )
    checks = [
        ("ours (OpenAI) convert+serialize / Microsoft convert", s.med("oa_both") / s.med("ms_convert"), 0.5),
        (
            "ours (OpenAI) convert+serialize / Microsoft convert+serialize",
            s.med("oa_both") / s.med("ms_both"),
            None,
        ),
        ("ours serialize / json.dumps floor", s.med("oa_serialize") / s.med("floor"), 2.0),
        (
            "ours (LangChain) convert+serialize / Microsoft convert",
            s.med("lc_both") / s.med("ms_convert"),
            0.5,
        ),
    ]
    table(
        [
            ["4", what, f"{v:.2f}", f"<= {lim}" if lim else "(info)", verdict(v <= lim) if lim else ""]
            for what, v, lim in checks
        ],
        ["target", "ratio (same run)", "value", "target", ""],
    )


if __name__ == "__main__":
    asyncio.run(main())
