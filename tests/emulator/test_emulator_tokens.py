from __future__ import annotations

import base64
import json
import time

import jwt
import pytest

from agents_a365.emulator import PLATFORM_AUDIENCE, InvalidTokenError, TokenIssuer

SECRET = "a-test-secret-of-at-least-32-bytes"  # shorter HMAC keys get PyJWT's InsecureKeyLengthWarning


def _claims(token: str) -> dict[str, object]:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))  # type: ignore[no-any-return]


def test_mint_contains_standard_and_extra_claims() -> None:
    issuer = TokenIssuer(SECRET)
    token = issuer.mint(
        PLATFORM_AUDIENCE, app_id="app-1", user_id="user-1", tenant_id="t-1", claims={"xms_par_app_azp": "bp"}
    )
    claims = _claims(token)
    assert claims["aud"] == PLATFORM_AUDIENCE
    assert claims["appid"] == claims["azp"] == "app-1"
    assert claims["oid"] == claims["sub"] == "user-1"
    assert claims["tid"] == "t-1"
    assert claims["xms_par_app_azp"] == "bp"
    assert isinstance(claims["exp"], int)
    assert claims["exp"] - claims["iat"] == 3600  # type: ignore[operator]
    assert issuer.verify(token, PLATFORM_AUDIENCE)["appid"] == "app-1"


def test_verify_accepts_any_of_several_audiences() -> None:
    issuer = TokenIssuer()
    token = issuer.mint("api://x", app_id="a")
    assert issuer.verify(token, {"api://y", "api://x"})["aud"] == "api://x"


@pytest.mark.parametrize(
    ("token_factory", "reason"),
    [
        (lambda i: "not-a-jwt", "malformed"),
        (lambda i: "a.b.c", "malformed"),
        (
            lambda i: TokenIssuer("another-secret-of-at-least-32-bytes").mint(PLATFORM_AUDIENCE, app_id="a"),
            "bad_signature",
        ),
        (lambda i: i.mint(PLATFORM_AUDIENCE, app_id="a", expires_in=-10), "expired"),
        (lambda i: i.mint("api://elsewhere", app_id="a"), "wrong_audience"),
    ],
)
def test_verify_rejections(token_factory: object, reason: str) -> None:
    issuer = TokenIssuer(SECRET)
    token = token_factory(issuer)  # type: ignore[operator]
    with pytest.raises(InvalidTokenError) as info:
        issuer.verify(token, PLATFORM_AUDIENCE)
    assert info.value.reason == reason
    assert str(info.value)


def test_tampered_payload_fails_signature() -> None:
    issuer = TokenIssuer()
    header, _, signature = issuer.mint("api://x", app_id="a").split(".")
    forged = (
        base64.urlsafe_b64encode(json.dumps({"aud": "api://x", "exp": 2**40}).encode()).rstrip(b"=").decode()
    )
    with pytest.raises(InvalidTokenError, match="signature"):
        issuer.verify(f"{header}.{forged}.{signature}", "api://x")


def test_tokens_are_standard_hs256_jwts() -> None:
    token = TokenIssuer(SECRET).mint("api://x", app_id="a", user_id="u")
    assert jwt.get_unverified_header(token)["alg"] == "HS256"
    claims = jwt.decode(token, SECRET, algorithms=["HS256"], audience="api://x")
    assert claims["oid"] == claims["sub"] == "u"
    assert claims["nbf"] == claims["iat"]
    # The other way round: a token any JWT library signs with the secret is accepted.
    foreign = jwt.encode(
        {"aud": "api://x", "exp": int(time.time()) + 60, "appid": "a"}, SECRET, algorithm="HS256"
    )
    assert TokenIssuer(SECRET).verify(foreign, "api://x")["appid"] == "a"


def _signed(claims: dict[str, object], headers: dict[str, str] | None = None) -> str:
    return jwt.encode(claims, SECRET, algorithm="HS256", headers=headers)


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"aud": "api://x"}, "malformed"),  # no exp
        ({"aud": "api://x", "exp": "tomorrow"}, "malformed"),
        ({"exp": 2**40}, "wrong_audience"),  # no aud
        ({"aud": ["api://y", "api://z"], "exp": 2**40}, "wrong_audience"),
    ],
)
def test_claims_rejections(claims: dict[str, object], reason: str) -> None:
    with pytest.raises(InvalidTokenError) as info:
        TokenIssuer(SECRET).verify(_signed(claims), "api://x")
    assert info.value.reason == reason


def test_only_hs256_is_accepted() -> None:
    unsigned = jwt.encode({"aud": "api://x", "exp": 2**40}, None, algorithm="none")
    with pytest.raises(InvalidTokenError) as info:
        TokenIssuer(SECRET).verify(unsigned + "c2ln", "api://x")
    assert info.value.reason == "malformed"


def test_not_before_and_issued_at_are_not_checked() -> None:
    issuer = TokenIssuer(SECRET)
    token = issuer.mint("api://x", app_id="a", claims={"nbf": 2**40, "iat": 2**40, "sub": 7})
    assert issuer.verify(token, ["api://x"])["sub"] == 7
