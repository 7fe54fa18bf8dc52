import time

import pytest

from agents_a365.runtime import (
    InvalidTokenError,
    MalformedTokenError,
    TokenExpiredError,
    TokenMissingExpiryError,
    TokenPayloadError,
    decode_token_payload,
    get_agent_id_from_token,
    get_app_id_from_token,
    validate_token,
)
from support.jwt import make_jwt


def test_agent_id_prefers_blueprint_then_appid_then_azp() -> None:
    assert get_agent_id_from_token(make_jwt(xms_par_app_azp="bp", appid="app", azp="azp")) == "bp"
    assert get_agent_id_from_token(make_jwt(appid="app", azp="azp")) == "app"
    assert get_agent_id_from_token(make_jwt(azp="azp")) == "azp"
    assert get_agent_id_from_token(make_jwt()) == ""


def test_app_id_prefers_appid_over_azp_and_ignores_blueprint() -> None:
    assert get_app_id_from_token(make_jwt(xms_par_app_azp="bp", appid="app", azp="azp")) == "app"
    assert get_app_id_from_token(make_jwt(azp="azp")) == "azp"


@pytest.mark.parametrize("token", [None, "", "   ", "not-a-jwt", "a.b", "a.!!!.c"])
def test_claim_helpers_return_empty_for_unusable_tokens(token: str | None) -> None:
    assert get_agent_id_from_token(token) == ""
    assert get_app_id_from_token(token) == ""


def test_decode_returns_claims_without_verifying() -> None:
    assert decode_token_payload(make_jwt(appid="x", expires_in=None)) == {"appid": "x"}


def test_validate_returns_claims_of_a_good_token() -> None:
    assert validate_token(make_jwt(appid="x"))["appid"] == "x"


@pytest.mark.parametrize(
    ("token", "error", "message"),
    [
        ("", MalformedTokenError, "empty"),
        ("only.two", MalformedTokenError, "3 dot-separated parts"),
        ("a.b.c.d", MalformedTokenError, "found 4"),
        ("eyJhbGciOiJub25lIn0.%%%%.sig", TokenPayloadError, "base64url"),
        ("eyJhbGciOiJub25lIn0.WzEsMl0.sig", TokenPayloadError, "JSON object"),  # payload is [1, 2]
        (make_jwt(appid="x", expires_in=None), TokenMissingExpiryError, "exp"),
        (make_jwt(exp="tomorrow"), TokenMissingExpiryError, "exp"),
        (make_jwt(exp=int(time.time()) - 60), TokenExpiredError, "expired"),
    ],
    # Named, not by the token: the expired one changes every second, and parallel workers (pytest-xdist)
    # must collect the same ids.
    ids=[
        "empty",
        "two-parts",
        "four-parts",
        "bad-base64",
        "not-an-object",
        "no-exp",
        "exp-not-a-number",
        "expired",
    ],
)
def test_validate_raises_a_distinct_clear_error_per_failure(
    token: str, error: type[InvalidTokenError], message: str
) -> None:
    with pytest.raises(error, match=message) as caught:
        validate_token(token)
    assert isinstance(caught.value, ValueError)
    if token:
        assert token not in str(caught.value)


def test_validate_honours_leeway() -> None:
    token = make_jwt(exp=int(time.time()) - 5)
    assert validate_token(token, leeway_seconds=60)
