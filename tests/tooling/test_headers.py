import re
import uuid

import pytest

from agents_a365.runtime import get_user_agent_header
from agents_a365.tooling import build_request_headers
from support.jwt import make_jwt
from support.turns import make_turn_context


def test_full_header_set_from_a_real_activity() -> None:
    turn = make_turn_context(channel_id="msteams:email", activity_id="act-7")
    token = make_jwt(appid="app-from-token")
    headers = build_request_headers(
        turn, auth_token=token, orchestrator_name="LangChain", correlation_id=True
    )
    assert headers == {
        "Authorization": f"Bearer {token}",
        "User-Agent": get_user_agent_header("LangChain"),
        "x-ms-agentid": "app-from-token",
        "x-ms-channel-id": "msteams",
        "x-ms-subchannel-id": "email",
        "x-ms-correlation-id": "act-7",
    }


def test_channel_without_sub_channel() -> None:
    headers = build_request_headers(make_turn_context(channel_id="msteams"))
    assert headers["x-ms-channel-id"] == "msteams"
    assert "x-ms-subchannel-id" not in headers


def test_agent_id_precedence_blueprint_then_token_then_application_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENT365_APPLICATION_NAME", "app-name")
    token = make_jwt(xms_par_app_azp="token-blueprint", appid="app")
    assert (
        build_request_headers(make_turn_context(blueprint_id="bp-1"), auth_token=token)["x-ms-agentid"]
        == "bp-1"
    )
    assert build_request_headers(make_turn_context(), auth_token=token)["x-ms-agentid"] == "token-blueprint"
    assert build_request_headers(make_turn_context())["x-ms-agentid"] == "app-name"


def test_identity_token_is_read_but_never_sent() -> None:
    identity = make_jwt(appid="shared-app")
    headers = build_request_headers(make_turn_context(), identity_token=identity)
    assert headers["x-ms-agentid"] == "shared-app"
    assert "Authorization" not in headers
    assert identity not in " ".join(headers.values())


def test_correlation_id_falls_back_to_a_uuid_and_is_off_by_default() -> None:
    turn = make_turn_context(activity_id=None)
    assert "x-ms-correlation-id" not in build_request_headers(turn)
    uuid.UUID(build_request_headers(turn, correlation_id=True)["x-ms-correlation-id"])


def test_no_header_value_carries_cr_or_lf() -> None:
    turn = make_turn_context(
        channel_id="msteams\r\nX-Injected: 1:email\nmore",
        activity_id="id\r\nX-Evil: yes",
        blueprint_id="bp\n\rsplit",
    )
    headers = build_request_headers(turn, orchestrator_name="Lang\r\nChain", correlation_id=True)
    for name, value in headers.items():
        assert not re.search(r"[\r\n]", value), (name, value)
    assert headers["x-ms-agentid"] == "bpsplit"
