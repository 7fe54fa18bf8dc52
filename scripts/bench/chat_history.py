"""Target 4: converting and serializing 10,000 chat history messages.

Ours: the OpenAI extension's ``to_chat_history_messages`` and the LangChain extension's ``convert_messages``, then
the body as ``send_chat_history`` builds it (``_request_body``); Microsoft 2.0.0 (own process, same items):
``_convert_openai_messages_to_chat_history``; the floor: ``json.dumps`` of the equivalent camelCase dicts.
Items: ``_ms.make_openai_items``. Rounds interleaved; medians.
"""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime

from _common import (
    Samples,
    agent_id_for,
    check,
    checks,
    emulator_process,
    make_turn,
    ms,
    ms_worker,
    start,
    table,
)
from _ms import make_openai_items
from langchain_core.messages import AIMessage, HumanMessage

from agents_a365.tooling._threat_protection import _request_body
from agents_a365.tooling._turn import read_turn
from agents_a365.tooling.extensions.langchain import convert_messages
from agents_a365.tooling.extensions.openai._conversion import to_chat_history_messages


async def main() -> None:
    args = start("Chat history conversion (target 4)", messages=10_000, repeats=15)
    n, items = args.messages, make_openai_items(args.messages)
    text = [it["content"] if it["role"] == "user" else it["content"][0]["text"] for it in items]
    lc_messages = [
        (HumanMessage if it["role"] == "user" else AIMessage)(t, id=it["id"])
        for it, t in zip(items, text, strict=True)
    ]
    turn, now = make_turn(agent_id_for(1)), datetime.now(UTC).isoformat().replace("+00:00", "Z")
    history = [
        {"id": it["id"], "role": it["role"], "content": t, "timestamp": now}
        for it, t in zip(items, text, strict=True)
    ]
    floor_dicts = {
        "conversationId": "conversation-1",
        "messageId": "activity-1",
        "userMessage": "What is on my calendar?",
        "chatHistory": history,
    }
    s = Samples()
    with emulator_process(latency_ms=0, counts=(1,), notes_servers=1) as emu:
        async with ms_worker(emu) as msw:
            await msw("convert", n=n, repeats=2)  # warm-up
            for _ in range(args.repeats):
                for side, convert, source in (
                    ("oa", to_chat_history_messages, items),
                    ("lc", convert_messages, lc_messages),
                ):
                    t0 = time.perf_counter()
                    converted = convert(source)  # type: ignore[operator]
                    t1 = time.perf_counter()
                    body = _request_body(read_turn(turn), converted)[0]  # what send_chat_history sends
                    s.add(f"{side}_convert", t1 - t0)
                    s.add(f"{side}_serialize", time.perf_counter() - t1)
                    assert len(converted) == n, len(converted)
                r = await msw("convert", n=n, repeats=1)
                assert r["converted"] == n
                s.add("ms_convert", r["convert"][0])
                t0 = time.perf_counter()
                floor = json.dumps(floor_dicts).encode()
                s.add("floor", time.perf_counter() - t0)
    print(f"{n} messages, {args.repeats} interleaved repeats, medians; ", end="")
    print(f"body {len(body)} bytes (floor {len(floor)})\n")
    both = {side: s.med(f"{side}_convert") + s.med(f"{side}_serialize") for side in ("oa", "lc")}
    table(
        [
            *([label, ms(s.med(f"{side}_convert")), ms(s.med(f"{side}_serialize")), ms(both[side])]
              for side, label in (("oa", "ours, OpenAI extension"), ("lc", "ours, LangChain extension"))),
            ["Microsoft 2.0.0 (conversion)", ms(s.med("ms_convert")), "", ""],
            ["json.dumps of the dicts (floor)", "", ms(s.med("floor")), ""],
        ],
        ["", "convert", "serialize", "convert + serialize"],
    )  # fmt: skip
    ms_convert = s.med("ms_convert")
    checks(
        [
            check("4", "ours (OpenAI) convert+serialize / Microsoft convert", both["oa"] / ms_convert, 0.5),
            check(
                "4", "ours (LangChain) convert+serialize / Microsoft convert", both["lc"] / ms_convert, 0.5
            ),
            check("4", "ours serialize / json.dumps floor", s.med("oa_serialize") / s.med("floor"), 2.0),
        ]
    )


if __name__ == "__main__":
    asyncio.run(main())
