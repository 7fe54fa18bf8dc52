from __future__ import annotations

import httpx
import pytest
from aiohttp import web

from agents_a365.emulator import Emulator, channel_activity, post_activity


async def test_connector_records_replies_and_answers_a_resource_id(
    emulator: Emulator, http: httpx.AsyncClient
) -> None:
    reply = {"type": "message", "text": "hi", "conversation": {"id": "c1"}}
    first = await http.post(f"{emulator.base_url}/v3/conversations/c1/activities", json=reply)
    second = await http.post(
        f"{emulator.base_url}/v3/conversations/c1/activities/a1", json={**reply, "text": "2"}
    )
    assert first.status_code == second.status_code == 200
    assert first.json()["id"]
    assert first.json()["id"] != second.json()["id"]
    assert [r["text"] for r in emulator.channel_replies] == ["hi", "2"]
    assert [r.path for r in emulator.requests_for("connector")] == [
        "/v3/conversations/c1/activities",
        "/v3/conversations/c1/activities/a1",
    ]


async def test_connector_rejects_a_body_that_is_not_an_activity(
    emulator: Emulator, http: httpx.AsyncClient
) -> None:
    response = await http.post(f"{emulator.base_url}/v3/conversations/c1/activities", content=b"[1]")
    assert response.status_code == 400
    assert emulator.channel_replies == []


@pytest.mark.parametrize("channel", ["msteams", "agents:email"])
def test_channel_activity_has_the_fields_the_sdk_reads(channel: str) -> None:
    from microsoft_agents.activity import Activity

    data = channel_activity(
        "hello", service_url="http://127.0.0.1:1/", channel_id=channel, conversation_id="c9"
    )
    activity = Activity.model_validate(data)
    assert activity.channel_id == channel
    assert activity.service_url == "http://127.0.0.1:1/"
    assert activity.conversation.id == "c9"
    assert activity.recipient.agentic_app_id
    assert activity.recipient.role == "agenticUser"


def test_channel_activity_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="text"):
        channel_activity("", service_url="http://x/")
    with pytest.raises(ValueError, match="service_url"):
        channel_activity("hi", service_url="ftp://x/")


async def test_post_activity_delivers_over_http() -> None:
    received: list[dict[str, object]] = []

    async def messages(request: web.Request) -> web.Response:
        received.append(await request.json())
        return web.Response(status=202)

    app = web.Application()
    app.router.add_post("/api/messages", messages)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        activity = channel_activity("hello", service_url="http://127.0.0.1:1/")
        response = await post_activity(f"http://127.0.0.1:{port}/api/messages", activity, timeout=10)
        assert response.status_code == 202
        assert received == [activity]
    finally:
        await runner.cleanup()
