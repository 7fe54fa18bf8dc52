import platform
import re
from typing import Any

import pytest

from agents_a365.runtime import (
    AgenticAuthenticationService,
    get_application_name,
    get_sdk_version,
    get_user_agent_header,
    resolve_agent_identity,
)
from support.jwt import make_jwt
from support.turns import make_turn_context


def test_agentic_request_uses_the_agentic_instance_id() -> None:
    turn = make_turn_context(agentic_app_id="instance-42")
    assert resolve_agent_identity(turn, make_jwt(appid="from-token")) == "instance-42"


def test_other_requests_use_the_app_id_of_the_token() -> None:
    turn = make_turn_context()
    assert not turn.activity.is_agentic_request()
    assert resolve_agent_identity(turn, make_jwt(appid="from-token", xms_par_app_azp="bp")) == "from-token"
    assert resolve_agent_identity(turn, None) == ""
    assert resolve_agent_identity(None, make_jwt(azp="azp-id")) == "azp-id"


def test_an_activity_whose_instance_id_cannot_be_read_is_not_agentic() -> None:
    # As the tooling core reads a turn (its gateway agent id): the token's app id, not an AttributeError.
    class Partial:
        def is_agentic_request(self) -> bool:
            return True

        def get_agentic_instance_id(self) -> str:
            raise AttributeError("recipient")

    class Context:
        activity = Partial()

    assert resolve_agent_identity(Context(), make_jwt(appid="from-token")) == "from-token"


def test_user_agent_format() -> None:
    value = get_user_agent_header("LangChain")
    expected = (
        rf"Agent365SDK/{re.escape(get_sdk_version())} "
        rf"\({re.escape(platform.system())}; Python {re.escape(platform.python_version())}; LangChain\)"
    )
    assert re.fullmatch(expected, value)
    assert get_sdk_version() != "0.0.0"  # read from the installed distribution's metadata
    assert get_user_agent_header().endswith(f"Python {platform.python_version()})")


def test_application_name_from_env_then_pyproject(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("AGENT365_APPLICATION_NAME", "my-agent")
    assert get_application_name() == "my-agent"
    monkeypatch.delenv("AGENT365_APPLICATION_NAME")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "sample-agent"\n')
    monkeypatch.chdir(tmp_path)
    assert get_application_name() == "sample-agent"


class _RecordingAuthorization:
    """A stand-in for hosting-core's Authorization, which needs Azure connections to run."""

    def __init__(self, token: str | None) -> None:
        self.token = token
        self.calls: list[tuple[Any, list[str] | None, str | None]] = []

    async def exchange_token(
        self, context: Any, scopes: list[str] | None = None, auth_handler_id: str | None = None
    ) -> Any:
        self.calls.append((context, scopes, auth_handler_id))
        return type("TokenResponse", (), {"token": self.token})()


async def test_get_agentic_user_token_calls_exchange_token() -> None:
    turn = make_turn_context()
    authorization = _RecordingAuthorization("tok")
    token = await AgenticAuthenticationService.get_agentic_user_token(
        authorization, "AGENTIC", turn, ["s/.default"]
    )
    assert token == "tok"
    assert authorization.calls == [(turn, ["s/.default"], "AGENTIC")]


async def test_get_agentic_user_token_returns_none_without_token() -> None:
    token = await AgenticAuthenticationService.get_agentic_user_token(
        _RecordingAuthorization(None), "AGENTIC", make_turn_context(), ["s/.default"]
    )
    assert token is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((None, "h", "turn", ["s"]), "authorization is required"),
        ((_RecordingAuthorization("t"), "", "turn", ["s"]), "auth_handler_name is required"),
        ((_RecordingAuthorization("t"), "h", None, ["s"]), "turn_context is required"),
        ((_RecordingAuthorization("t"), "h", "turn", []), "scopes is required"),
    ],
)
async def test_get_agentic_user_token_validates_arguments(args: tuple[Any, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        await AgenticAuthenticationService.get_agentic_user_token(*args)
