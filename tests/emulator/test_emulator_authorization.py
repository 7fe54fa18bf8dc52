from __future__ import annotations

from types import SimpleNamespace

import httpx
import pytest
from microsoft_agents.activity import TokenResponse

from agents_a365.emulator import (
    CALENDAR_AUDIENCE,
    PLATFORM_AUDIENCE,
    PLATFORM_SCOPE,
    Emulator,
    ExchangeFailure,
    TokenExchangeError,
    audience_for_scope,
)


def _context(user_id: str | None) -> SimpleNamespace:
    return SimpleNamespace(activity=SimpleNamespace(from_property=SimpleNamespace(id=user_id)))


@pytest.mark.parametrize(
    ("scope", "audience"),
    [
        (PLATFORM_SCOPE, PLATFORM_AUDIENCE),
        ("api://a365-calendar/Calendars.ReadWrite", "api://a365-calendar"),
        ("https://graph.microsoft.com/.default", "https://graph.microsoft.com"),
        ("api://a365-calendar", "api://a365-calendar"),
    ],
)
def test_audience_for_scope(scope: str, audience: str) -> None:
    assert audience_for_scope(scope) == audience


async def test_exchange_mints_tokens_the_emulator_accepts(
    emulator: Emulator, http: httpx.AsyncClient
) -> None:
    auth = emulator.authorization(expires_in=120, claims={"xms_par_app_azp": "blueprint"})
    response = await auth.exchange_token(
        _context("user-7"), scopes=[PLATFORM_SCOPE], auth_handler_id="agentic"
    )
    assert isinstance(response, TokenResponse)
    assert response.token
    claims = emulator.issuer.verify(response.token, PLATFORM_AUDIENCE)
    assert claims["oid"] == "user-7"
    assert claims["xms_par_app_azp"] == "blueprint"
    assert claims["exp"] - claims["iat"] == 120
    assert response.expiration
    gateway = await http.get(emulator.gateway_url(), headers={"Authorization": f"Bearer {response.token}"})
    assert gateway.status_code == 200

    calendar = await auth.exchange_token(_context(None), scopes=["api://a365-calendar/Calendars.ReadWrite"])
    assert calendar is not None
    assert calendar.token
    assert emulator.issuer.verify(calendar.token, CALENDAR_AUDIENCE)["aud"] == CALENDAR_AUDIENCE

    default_scope = await auth.exchange_token(object())  # context without an activity is tolerated
    assert default_scope is not None
    assert default_scope.token

    records = auth.exchanges
    assert auth.exchange_count == 3
    assert [(r.scopes, r.auth_handler_id, r.user_id, r.audience) for r in records] == [
        ([PLATFORM_SCOPE], "agentic", "user-7", PLATFORM_AUDIENCE),
        (["api://a365-calendar/Calendars.ReadWrite"], None, None, CALENDAR_AUDIENCE),
        (None, None, None, PLATFORM_AUDIENCE),
    ]
    auth.clear()
    assert auth.exchanges == []


async def test_failure_modes_switch_at_runtime(emulator: Emulator, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG", logger="agents_a365.emulator")
    auth = emulator.authorization()
    auth.failure = ExchangeFailure.EMPTY_TOKEN
    empty = await auth.exchange_token(_context("u"), scopes=[PLATFORM_SCOPE])
    assert isinstance(empty, TokenResponse)
    assert not empty
    assert empty.token is None
    auth.failure = ExchangeFailure.NONE
    assert await auth.exchange_token(_context("u")) is None
    auth.failure = ExchangeFailure.RAISE
    with pytest.raises(TokenExchangeError):
        await auth.exchange_token(_context("u"))
    auth.failure = None
    ok = await auth.exchange_token(_context("u"))
    assert ok is not None
    assert ok.token
    assert [r.succeeded for r in auth.exchanges] == [False, False, False, True]
    assert ok.token not in caplog.text
