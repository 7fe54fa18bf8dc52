from __future__ import annotations

from typing import Any

import httpx
import pytest

from agents_a365.emulator import Emulator


def _valid() -> dict[str, Any]:
    return {
        "conversationId": "conv-1",
        "messageId": "msg-1",
        "userMessage": "Please summarise my inbox",
        "chatHistory": [
            {"id": "h1", "role": "user", "content": "hello", "timestamp": "2025-01-01T10:00:00Z"},
            {"id": "h2", "role": "assistant", "content": "", "timestamp": "2025-01-01T10:00:01.123+02:00"},
        ],
    }


async def test_valid_chat_message_is_received_and_recorded(
    emulator: Emulator, http: httpx.AsyncClient
) -> None:
    body = _valid()
    response = await http.post(emulator.rtp_url, json=body)
    assert response.status_code == 200
    assert response.json() == {"status": "received"}
    empty_history = {**body, "messageId": "msg-2", "chatHistory": []}
    assert (await http.post(emulator.rtp_url, json=empty_history)).status_code == 200
    assert emulator.chat_messages == [body, empty_history]
    over_http = (await http.get(f"{emulator.base_url}/_emulator/chat-messages")).json()
    assert over_http == [body, empty_history]
    assert [r.status for r in emulator.requests_for("rtp")] == [200, 200]
    assert "authorization" not in emulator.requests_for("rtp")[0].headers


def _without(key: str) -> dict[str, Any]:
    body = _valid()
    del body[key]
    return body


def _history(**changes: Any) -> dict[str, Any]:
    body = _valid()
    body["chatHistory"][0].update(changes)
    return body


@pytest.mark.parametrize(
    ("body", "field", "fragment"),
    [
        (_without("conversationId"), "conversationId", "required"),
        ({**_valid(), "messageId": ""}, "messageId", "at least 1"),
        ({**_valid(), "userMessage": 42}, "userMessage", "string"),
        ({**_valid(), "chatHistory": None}, "chatHistory", "list"),
        ({**_valid(), "unexpected": True}, "unexpected", "not permitted"),
        ({**_valid(), "conversation_id": "snake"}, "conversation_id", "not permitted"),
        (_history(id=""), "chatHistory[0].id", "at least 1"),
        (_history(role=""), "chatHistory[0].role", "at least 1"),
        (_history(content=None), "chatHistory[0].content", "string"),
        (_history(timestamp="yesterday"), "chatHistory[0].timestamp", "ISO-8601"),
        (_history(timestamp="2025-01-01T10:00:00"), "chatHistory[0].timestamp", "timezone"),
        (_history(extra="x"), "chatHistory[0].extra", "not permitted"),
    ],
)
async def test_malformed_chat_message_400(
    emulator: Emulator, http: httpx.AsyncClient, body: dict[str, Any], field: str, fragment: str
) -> None:
    response = await http.post(emulator.rtp_url, json=body)
    assert response.status_code == 400
    payload = response.json()
    matching = [e for e in payload["errors"] if e["field"] == field]
    assert matching, payload
    assert fragment in matching[0]["message"]
    assert field in payload["reason"]
    assert emulator.chat_messages == []


@pytest.mark.parametrize(
    ("content", "reason"), [(b"{not json", "not valid JSON"), (b"[1, 2]", "not an object")]
)
async def test_non_object_body_400(
    emulator: Emulator, http: httpx.AsyncClient, content: bytes, reason: str
) -> None:
    response = await http.post(
        emulator.rtp_url, content=content, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert reason in response.json()["reason"]
