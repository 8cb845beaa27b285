"""Sign in with Discord, end to end over real HTTP: the web (`web/signin.py`, `web/session.py`) over its read-only
pool, the API service that makes and revokes the session (`api/web_sessions.py`), and the fake Discord OAuth2
provider that holds the exchange to RFC 6749 and RFC 7636 (`tests/fakediscord/oauth.py`). `client` is the
browser: its cookie jar keeps what the servers set."""

from __future__ import annotations

import re
import secrets
from http.cookies import Morsel, SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp
import asyncpg
import pytest
from aiohttp.test_utils import TestClient

from core.moderation import Actor, ban_user
from core.settings import RateLimitSettings, Settings
from core.submit.intake import submit
from tests.fakediscord.oauth import s256
from tests.store.conftest import db_dsn, pg_dsn, pool, template_db  # noqa: F401  (fixtures, found by name)
from tests.store.store_helpers import VECTOR_ADD, add_problems, request
from tests.web.signin_helpers import NELLY, ROY, WEB_SECRET, SignInStack, session_cookie, sign_in, signin_stack
from web.session import SESSION_COOKIE, SignInOffError, seal, session_of_cookie, signin_config, unseal
from web.settings import WebSettings
from web.signin import SIGNIN_COOKIE, SIGNIN_PURPOSE, safe_next

SOURCE = b"import torch\n\n\ndef solution(a, b, c, n):\n    torch.add(a, b, out=c)\n"


def set_cookies(response: aiohttp.ClientResponse) -> dict[str, Morsel[str]]:
    """The cookies a response sets, with their attributes, by name."""
    jar: SimpleCookie = SimpleCookie()
    for header in response.headers.getall("Set-Cookie", []):
        jar.load(header)
    return dict(jar)


async def header_of(client: TestClient, path: str = "/") -> str:
    response = await client.get(path)
    assert response.status == 200
    text = await response.text()
    return text[text.index("<header>") : text.index("</header>")]


async def quota(stack: SignInStack, token: str) -> tuple[int, Any]:
    response = await stack.api.get("/v1/me/quota", headers={"Authorization": f"Bearer {token}"})
    return response.status, await response.json(content_type=None)


async def to_callback(stack: SignInStack) -> tuple[str, str]:
    """Begin a sign-in and let Discord approve it, without following the redirect back: the sealed sign-in cookie
    and the callback's path with its query (as Discord sends the browser back)."""
    begun = await stack.client.get("/signin", params={"next": "/contests"}, allow_redirects=False)
    assert begun.status == 302
    sealed = set_cookies(begun)[SIGNIN_COOKIE].value
    approved = await stack.client.session.get(begun.headers["Location"], allow_redirects=False)
    assert approved.status == 302
    back = urlsplit(approved.headers["Location"])
    assert back.path == "/signin/callback"
    return sealed, f"{back.path}?{back.query}"


async def test_signing_in_takes_the_whole_flow_and_lands_on_the_page_it_began_on(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    async with signin_stack(pool, db_dsn) as stack:
        assert "Sign in with Discord" in await header_of(stack.client, "/ratings")
        stack.fake.approve_as(NELLY)
        landed = await stack.client.get("/signin", params={"next": "/ratings?page=1"})
        assert landed.status == 200 and landed.url.path_qs == "/ratings?page=1"
        assert [r.status for r in landed.history] == [302, 302, 303]
        # Discord was asked for `identify` only, with a state and an S256 challenge (PKCE).
        asked = stack.fake.authorizations[-1]
        assert asked["response_type"] == "code" and asked["scope"] == "identify"
        assert asked["client_id"] == stack.app.client_id
        assert asked["redirect_uri"] == f"{stack.settings.public_url}/signin/callback"
        assert asked["code_challenge_method"] == "S256" and len(asked["code_challenge"]) == 43
        assert len(asked["state"]) >= 32
        header = await header_of(stack.client)
        assert "Nelly" in header and "Sign out" in header and "Sign in with Discord" not in header
        # The session is the user's own row, keyed by their Discord id, and its token works on the API.
        value = session_cookie(stack.client)
        assert value is not None
        session = await session_of_cookie(stack.client.server.app, value)
        assert session is not None and session.name == "Nelly" and session.discord_id == NELLY.id
        token = session.token
        assert await pool.fetchval("SELECT external_id FROM users WHERE id = $1", session.user_id) == (
            f"discord:{NELLY.id}"
        )
        status, body = await quota(stack, token)
        assert status == 200 and body["user"] == "Nelly"
        # The session lasts ARENA_WEB_SESSION_DAYS (7).
        days = await pool.fetchval(
            "SELECT extract(epoch FROM expires_at - created_at) / 86400 FROM personal_tokens WHERE user_id = $1",
            session.user_id,
        )
        assert round(float(days)) == 7
        # Discord's access token, used once to learn who signed in, is given back: it is no good at Discord now.
        assert len(stack.fake.revoked) == 1
        async with stack.client.session.get(
            f"{stack.settings.discord_url}/api/v10/users/@me",
            headers={"Authorization": f"Bearer {stack.fake.revoked[0]}"},
        ) as probe:
            assert probe.status == 401
        assert stack.fake.violations == [] and stack.fake.refusals == []


async def test_the_cookies_are_httponly_lax_and_secure_unless_served_on_loopback(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    async with signin_stack(pool, db_dsn) as stack:
        stack.fake.approve_as(NELLY)
        landed = await stack.client.get("/signin")
        begun, callback = set_cookies(landed.history[0]), set_cookies(landed.history[2])
        state = begun[SIGNIN_COOKIE]
        assert state["httponly"] and state["samesite"] == "Lax" and state["path"] == "/signin"
        assert state["max-age"] == "600" and not state["secure"]
        session = callback[SESSION_COOKIE]
        assert session["httponly"] and session["samesite"] == "Lax" and session["path"] == "/"
        assert 7 * 86400 - 600 < int(session["max-age"]) <= 7 * 86400  # as long as the token lives
        assert not session["secure"]  # served on http://127.0.0.1 only
        assert callback[SIGNIN_COOKIE].value == ""  # the attempt's state is dropped once used
    public = "https://arena.example.org"
    async with signin_stack(pool, db_dsn, public_url=public) as stack:
        stack.fake.approve_as(ROY)
        sealed, back = await to_callback(stack)
        # Over https both cookies are Secure; the browser would send the sign-in cookie back to the callback.
        finished = await stack.client.get(back, headers={"Cookie": f"{SIGNIN_COOKIE}={sealed}"}, allow_redirects=False)
        assert finished.status == 303 and finished.headers["Location"] == "/contests"
        session = set_cookies(finished)[SESSION_COOKIE]
        assert session["secure"] and session["httponly"] and session["samesite"] == "Lax" and session["path"] == "/"
        assert stack.fake.authorizations[-1]["redirect_uri"] == f"{public}/signin/callback"


async def test_a_wrong_state_is_refused_and_the_attempt_cannot_be_finished_after(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    async with signin_stack(pool, db_dsn) as stack:
        stack.fake.approve_as(NELLY)
        _, back = await to_callback(stack)
        query = parse_qs(urlsplit(back).query)
        forged = f"/signin/callback?code={query['code'][0]}&state={secrets.token_urlsafe(32)}"
        refused = await stack.client.get(forged)
        assert refused.status == 403 and "state" in await refused.text()
        assert session_cookie(stack.client) is None
        # The code was never exchanged, and the attempt is over: even the right state now finds no sign-in begun.
        assert stack.fake.refusals == []
        again = await stack.client.get(back)
        assert again.status == 400 and "expired" in await again.text()
        assert session_cookie(stack.client) is None
        assert await pool.fetchval("SELECT count(*) FROM personal_tokens") == 0


async def test_a_code_used_twice_is_refused(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    async with signin_stack(pool, db_dsn) as stack:
        stack.fake.approve_as(NELLY)
        sealed, back = await to_callback(stack)
        cookie = {"Cookie": f"{SIGNIN_COOKIE}={sealed}"}
        first = await stack.client.get(back, headers=cookie, allow_redirects=False)
        assert first.status == 303
        # The callback replayed whole (its URL and the sign-in cookie, as one who captured both would).
        replayed = await stack.client.get(back, headers=cookie, allow_redirects=False)
        assert replayed.status == 403 and "invalid_grant" in await replayed.text()
        assert SESSION_COOKIE not in set_cookies(replayed)
        assert stack.fake.refusals == ["invalid_grant: the code was used already"]
        assert await pool.fetchval("SELECT count(*) FROM personal_tokens") == 1


async def test_a_wrong_verifier_is_refused_by_the_token_endpoint(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    async with signin_stack(pool, db_dsn) as stack:
        stack.fake.approve_as(NELLY)
        sealed, back = await to_callback(stack)
        started = unseal(WEB_SECRET.encode(), SIGNIN_PURPOSE, sealed, 0)
        assert started is not None and s256(started["verifier"]) == stack.fake.authorizations[-1]["code_challenge"]
        # The same attempt with another verifier (what an attacker who stole the code would have to guess).
        swapped = seal(WEB_SECRET.encode(), SIGNIN_PURPOSE, {**started, "verifier": secrets.token_urlsafe(48)})
        stack.client.session.cookie_jar.clear(lambda cookie: cookie.key == SIGNIN_COOKIE)
        refused = await stack.client.get(back, headers={"Cookie": f"{SIGNIN_COOKIE}={swapped}"})
        assert refused.status == 403 and "invalid_grant" in await refused.text()
        assert stack.fake.refusals == ["invalid_grant: code_verifier does not match the code_challenge"]
        assert session_cookie(stack.client) is None


async def test_the_fakes_token_endpoint_holds_clients_to_rfc_6749_and_7636(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    """The token endpoint's refusals, each the RFC's error code: what makes the fake worth testing against."""
    async with signin_stack(pool, db_dsn) as stack:
        stack.fake.approve_as(NELLY)
        sealed, back = await to_callback(stack)
        started = unseal(WEB_SECRET.encode(), SIGNIN_PURPOSE, sealed, 0)
        assert started is not None
        code = parse_qs(urlsplit(back).query)["code"][0]
        good = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": f"{stack.settings.public_url}/signin/callback",
            "code_verifier": started["verifier"],
            "client_id": stack.app.client_id,
            "client_secret": stack.app.client_secret,
        }
        cases: list[tuple[dict[str, str], int, str]] = [
            ({**good, "client_secret": "wrong"}, 401, "invalid_client"),
            ({**good, "grant_type": "password"}, 400, "unsupported_grant_type"),
            ({k: v for k, v in good.items() if k != "code_verifier"}, 400, "invalid_request"),
            ({**good, "code_verifier": "too-short"}, 400, "invalid_request"),
            ({**good, "code": "not-a-code"}, 400, "invalid_grant"),
        ]
        url = f"{stack.fake.base_url}/api/v10/oauth2/token"
        for form, status, error in cases:
            async with stack.client.session.post(url, data=form) as answer:
                body = await answer.json()
                assert (answer.status, body["error"]) == (status, error), form
                assert answer.headers["Cache-Control"] == "no-store"
        async with stack.client.session.post(url, json=good) as answer:  # not form-encoded
            assert answer.status == 400 and (await answer.json())["error"] == "invalid_request"
        async with stack.client.session.post(url, data={**good, "redirect_uri": "http://127.0.0.1:1/x"}) as answer:
            assert (await answer.json())["error"] == "invalid_grant"
        # A code is single-use whatever the outcome of its first exchange.
        async with stack.client.session.post(url, data=good) as answer:
            assert (await answer.json())["error"] == "invalid_grant"


async def test_a_user_who_denies_access_is_told_and_not_signed_in(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    async with signin_stack(pool, db_dsn) as stack:
        stack.fake.approve_as(None)
        landed = await stack.client.get("/signin")
        assert landed.status == 403 and "did not allow" in await landed.text()
        assert session_cookie(stack.client) is None


async def test_signing_out_revokes_the_token_on_the_api(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    async with signin_stack(pool, db_dsn) as stack:
        session = await sign_in(stack.client, stack.fake, NELLY)
        value = session_cookie(stack.client)
        assert value is not None
        assert f'name="csrf" value="{session.csrf}"' in await header_of(stack.client)
        out = await stack.client.post(
            "/signout", data={"csrf": session.csrf, "next": "/ratings"}, allow_redirects=False
        )
        assert out.status == 303 and out.headers["Location"] == "/ratings"
        assert set_cookies(out)[SESSION_COOKIE].value == ""
        status, body = await quota(stack, session.token)
        assert status == 401 and body["code"] == "token_revoked"
        assert await session_of_cookie(stack.client.server.app, value) is None
        assert "Sign in with Discord" in await header_of(stack.client)


async def test_an_expired_session_is_signed_out(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    async with signin_stack(pool, db_dsn) as stack:
        session = await sign_in(stack.client, stack.fake, NELLY)
        await pool.execute("UPDATE personal_tokens SET expires_at = now() - interval '1 second'")
        # The browser still sends the cookie; the web reads the token as expired: signed out.
        assert session_cookie(stack.client) is not None
        header = await header_of(stack.client)
        assert "Sign in with Discord" in header and "Sign out" not in header
        status, body = await quota(stack, session.token)
        assert status == 401 and body["code"] == "token_expired"
        # Signing out of a session that ended needs no CSRF token (there is nothing to forge) and clears it.
        out = await stack.client.post("/signout", allow_redirects=False)
        assert out.status == 303 and session_cookie(stack.client) is None


async def test_a_post_without_the_sessions_csrf_token_is_refused(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    async with signin_stack(pool, db_dsn) as stack:
        session = await sign_in(stack.client, stack.fake, NELLY)
        for form, headers in (
            ({}, {}),
            ({"csrf": ""}, {}),
            ({"csrf": "0" * 64}, {}),
            ({"csrf": session.csrf[:-1]}, {}),
            ({}, {"X-CSRF-Token": "0" * 64}),
            ({"csrf": "0" * 64}, {"X-CSRF-Token": session.csrf}),  # a form's field counts over the header
        ):
            refused = await stack.client.post("/signout", data=form, headers=headers, allow_redirects=False)
            assert refused.status == 403, (form, headers)
            assert "CSRF" in await refused.text()
        assert (await quota(stack, session.token))[0] == 200
        assert session_cookie(stack.client) is not None
        # The same check passes the session's own token, sent as a script sends it, in the header.
        out = await stack.client.post("/signout", headers={"X-CSRF-Token": session.csrf}, allow_redirects=False)
        assert out.status == 303
        assert (await quota(stack, session.token))[1]["code"] == "token_revoked"


@pytest.mark.parametrize(
    "target",
    [
        "//evil.example/x",
        "https://evil.example/",
        "http:/evil.example",
        "/\\evil.example",
        "\\\\evil.example",
        "/\t/evil.example",
        "/\n/evil.example",
        "javascript:alert(1)",
        "evil.example",
        "/signin?next=//evil.example",
        "/signout",
        "/" + "a" * 3000,
        "",
    ],
)
def test_a_next_page_off_this_site_becomes_the_home_page(target: str) -> None:
    assert safe_next(target) == "/"


def test_a_next_page_on_this_site_is_kept() -> None:
    for target in ("/", "/problems/matmul?dtype=float16&page=2", "/users/12", "/contests/spring/upsolve"):
        assert safe_next(target) == target


async def test_no_sign_in_or_out_redirects_off_the_site(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    async with signin_stack(pool, db_dsn) as stack:
        stack.fake.approve_as(NELLY)
        landed = await stack.client.get("/signin", params={"next": "//evil.example/steal"})
        assert landed.status == 200 and landed.url.host == "127.0.0.1" and landed.url.path_qs == "/"
        session = await session_of_cookie(stack.client.server.app, session_cookie(stack.client) or "")
        assert session is not None
        out = await stack.client.post(
            "/signout", data={"csrf": session.csrf, "next": "https://evil.example/"}, allow_redirects=False
        )
        assert out.status == 303 and out.headers["Location"] == "/"


async def test_the_web_user_is_the_bot_users_row_with_its_quota_and_ban(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    await add_problems(pool, VECTOR_ADD)
    rate = RateLimitSettings(test_burst=2, test_per_hour=0.001)
    # A test run from Discord, by the member with Nelly's Discord id, takes one of the two.
    await submit(pool, request(NELLY.id, mode="test"), rate)
    bot_row = await pool.fetchval("SELECT id FROM users WHERE external_id = $1", f"discord:{NELLY.id}")
    async with signin_stack(pool, db_dsn, arena=Settings(rate=rate)) as stack:
        session = await sign_in(stack.client, stack.fake, NELLY)
        assert session.user_id == bot_row
        assert await pool.fetchval("SELECT count(*) FROM users") == 1
        headers = {"Authorization": f"Bearer {session.token}"}

        def upload() -> aiohttp.FormData:
            form = aiohttp.FormData({"problem": "vector_add", "mode": "test"})
            form.add_field("file", SOURCE, filename="solution.py", content_type="text/x-python")
            return form

        accepted = await stack.api.post("/v1/submissions", data=upload(), headers=headers)
        assert accepted.status == 202, await accepted.text()
        # The bucket is the one the Discord run drew on: the third run of the burst of two is refused.
        limited = await stack.api.post("/v1/submissions", data=upload(), headers=headers)
        body = await limited.json(content_type=None)
        assert limited.status == 429 and body["code"] == "rate_limited" and "Retry-After" in limited.headers
        # A ban made in Discord holds on the web's session too.
        await ban_user(pool, Actor("local:mod", "mod"), f"discord:{NELLY.id}", "spam")
        banned = await stack.api.post("/v1/submissions", data=upload(), headers=headers)
        assert banned.status == 403 and (await banned.json(content_type=None))["code"] == "banned"


async def test_with_no_web_secret_sign_in_is_off_and_pages_are_as_before(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    async with signin_stack(pool, db_dsn, web={"secret": None}) as stack:
        header = await header_of(stack.client)
        assert "Sign in" not in header and "Sign out" not in header
        off = await stack.client.get("/signin")
        assert off.status == 404 and "ARENA_WEB_SECRET" in await off.text()
        assert stack.fake.authorizations == []


async def test_a_session_cookie_not_sealed_by_this_web_signs_nobody_in(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    async with signin_stack(pool, db_dsn) as stack:
        nelly = await sign_in(stack.client, stack.fake, NELLY)
        value = session_cookie(stack.client)
        claims = unseal(WEB_SECRET.encode(), "session", value, 0)
        assert claims is not None and claims["token"] == nelly.token
        stack.client.session.cookie_jar.clear()
        roy = await sign_in(stack.client, stack.fake, ROY)
        app = stack.client.server.app
        forged = [
            seal(b"another-secret-" + b"x" * 32, "session", claims),  # not this web's secret
            seal(WEB_SECRET.encode(), "session", {**claims, "user": roy.user_id}),  # Nelly's token as Roy
            seal(WEB_SECRET.encode(), "session", {**claims, "id": claims["id"] + 1}),  # Roy's token row, Nelly's id
            seal(WEB_SECRET.encode(), SIGNIN_PURPOSE, claims),  # sealed for the other cookie
            nelly.token,  # the bare token
            (value or "") + "x",
        ]
        for cookie in forged:
            assert await session_of_cookie(app, cookie) is None, cookie
        assert await session_of_cookie(app, value or "") == nelly


@pytest.mark.parametrize(
    ("overrides", "says"),
    [
        ({"secret": None}, "ARENA_WEB_SECRET"),
        ({"secret": "short"}, "shorter than 32 bytes"),
        ({"discord_client_secret": None}, "ARENA_WEB_DISCORD_CLIENT_SECRET"),
        ({"public_url": None}, "ARENA_WEB_PUBLIC_URL"),
        ({"public_url": "http://arena.example.org"}, "https://"),
        ({"public_url": "https://arena.example.org/?x=1"}, "scheme, host and port only"),
    ],
)
def test_sign_in_is_off_until_configured_and_says_what_is_missing(overrides: dict[str, Any], says: str) -> None:
    values: dict[str, Any] = {
        "secret": WEB_SECRET,
        "discord_client_id": "1",
        "discord_client_secret": "s",
        "public_url": "https://arena.example.org",
        **overrides,
    }
    with pytest.raises(SignInOffError, match=re.escape(says)):
        signin_config(WebSettings(**values))


def test_a_configured_sign_in_redirects_to_the_public_address() -> None:
    settings = WebSettings(
        secret=WEB_SECRET, discord_client_id="1", discord_client_secret="s", public_url="https://arena.example.org/"
    )
    config = signin_config(settings)
    assert config.redirect_uri == "https://arena.example.org/signin/callback" and config.secure_cookies
    loopback = signin_config(settings.model_copy(update={"public_url": "http://localhost:8080"}))
    assert loopback.redirect_uri == "http://localhost:8080/signin/callback" and not loopback.secure_cookies
