"""The OpenAI extension's items through tooling's history builder: source times and the limit rule."""

from __future__ import annotations

from datetime import UTC, datetime

from agents_a365.tooling.extensions.openai import to_chat_history_messages

NOW = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_openai_items_keep_their_own_time_on_the_fast_shape_too() -> None:
    items = [
        {"id": "a", "role": "user", "content": "plain"},
        {"id": "b", "role": "user", "content": "epoch", "created_at": 1_700_000_000},
        {
            "id": "c",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "iso"}],
            "timestamp": "2025-01-02T03:04:05Z",
        },
        {"id": "d", "role": "user", "content": "unreadable time", "created_at": "soon"},
    ]
    stamps = {
        m.id: m.timestamp for m in to_chat_history_messages(items, now=datetime(2026, 1, 1, tzinfo=UTC))
    }
    assert stamps == {
        "a": datetime(2026, 1, 1, tzinfo=UTC),
        "b": datetime.fromtimestamp(1_700_000_000, UTC),
        "c": NOW,
        "d": datetime(2026, 1, 1, tzinfo=UTC),
    }


def test_openai_conversion_takes_the_same_limit_rule() -> None:
    items = [{"id": str(i), "role": "user", "content": f"m{i}"} for i in range(5)]
    assert [m.id for m in to_chat_history_messages(items, limit=2)] == ["3", "4"]
