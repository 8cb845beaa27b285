"""The API's side of web sign-in (`api/web_sessions.py`) over real HTTP and the real store, against the fake
Discord OAuth2 provider: `POST /v1/sessions` turns a Discord access token of the arena's application into a
personal token of the user's own row, and refuses another application's token, one without `identify`, one
Discord does not know; `DELETE /v1/sessions/current` revokes the token it carries. Every answer is checked
against the OpenAPI document."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import asyncpg
import jsonschema
import pytest
from aiohttp.test_utils import TestClient, TestServer, unused_port

from api.app import create_app, openapi_document
from api.settings import ApiSettings
from api.web_sessions import MAX_WEB_SESSIONS, WEB_TOKEN_NAME
from tests.fakediscord.models import FakeUser
from tests.fakediscord.oauth import FakeDiscordOAuth, OAuthClient

DOCUMENT = openapi_document()
NELLY = FakeUser(id="80351110224678912", username="nelly", global_name="Nelly")
ROY = FakeUser(id="80351110224678913", username="roy")


@dataclass
class Api:
    client: TestClient
    fake: FakeDiscordOAuth
    app: OAuthClient


def check(path: str, method: str, status: int, body: Any) -> None:
    """`body` is what the OpenAPI document says `method path` answers with `status`."""
    answer = DOCUMENT["paths"][path][method]["responses"][str(status)]
    media = next(iter(answer["content"].values()))
    jsonschema.validate(body, {**media["schema"], "components": DOCUMENT["components"]})


@pytest.fixture
async def api(pool: asyncpg.Pool) -> AsyncIterator[Api]:
    async with FakeDiscordOAuth() as fake:
        app = fake.add_client("http://127.0.0.1:8080/signin/callback")
        settings = ApiSettings(
            dispatch=False, discord_client_id=app.client_id, discord_url=fake.base_url, auth_failures_burst=3
        )
        async with TestClient(TestServer(create_app(pool, settings), host="127.0.0.1")) as client:
            yield Api(client, fake, app)
        assert fake.violations == []


async def post_session(api: Api, access_token: str, **extra: Any) -> tuple[int, Any]:
    response = await api.client.post("/v1/sessions", json={"discord_access_token": access_token, **extra})
    body = await response.json(content_type=None)
    check("/v1/sessions", "post", response.status, body)
    return response.status, body


async def quota_status(api: Api, token: str) -> tuple[int, Any]:
    response = await api.client.get("/v1/me/quota", headers={"Authorization": f"Bearer {token}"})
    return response.status, await response.json(content_type=None)


async def test_a_token_of_the_arenas_application_makes_a_session_of_the_users_own_row(
    api: Api, pool: asyncpg.Pool
) -> None:
    # The member used the bot first: the web signs them in as that row.
    bot_row = await pool.fetchval(
        "INSERT INTO users (external_id, display_name) VALUES ($1, 'nelly-on-discord') RETURNING id",
        f"discord:{NELLY.id}",
    )
    status, body = await post_session(api, api.fake.issue_token(api.app, NELLY), days=3)
    assert status == 201
    assert body["user"] == {"id": bot_row, "discord_id": NELLY.id, "name": "Nelly"}
    assert body["token"].startswith("arena_pat_")
    expires = datetime.fromisoformat(body["expires_at"])
    assert timedelta(days=3) - timedelta(minutes=5) < expires - datetime.now(UTC) <= timedelta(days=3)
    row = await pool.fetchrow("SELECT name, scopes, user_id FROM personal_tokens WHERE id = $1", body["token_id"])
    assert (row["name"], list(row["scopes"]), row["user_id"]) == (WEB_TOKEN_NAME, ["read", "submit"], bot_row)
    # The name is the one Discord shows (its global name), as the bot records it.
    assert await pool.fetchval("SELECT display_name FROM users WHERE id = $1", bot_row) == "Nelly"
    status, quota = await quota_status(api, body["token"])
    assert status == 200 and quota["user"] == "Nelly"
    # A session longer than the service allows is cut to its maximum (30 days by default).
    status, body = await post_session(api, api.fake.issue_token(api.app, NELLY), days=365)
    assert status == 201
    assert datetime.fromisoformat(body["expires_at"]) - datetime.now(UTC) <= timedelta(days=30)


async def test_another_applications_token_is_refused_and_makes_nothing(api: Api, pool: asyncpg.Pool) -> None:
    other = api.fake.add_client("https://elsewhere.example/callback", name="Some other site")
    status, body = await post_session(api, api.fake.issue_token(other, NELLY))
    assert status == 403 and body["code"] == "forbidden"
    assert "another application" in body["detail"]
    assert await pool.fetchval("SELECT count(*) FROM users") == 0
    assert await pool.fetchval("SELECT count(*) FROM personal_tokens") == 0


async def test_a_token_without_identify_or_unknown_to_discord_is_refused(api: Api, pool: asyncpg.Pool) -> None:
    status, body = await post_session(api, api.fake.issue_token(api.app, NELLY, scopes=("guilds",)))
    assert status == 403 and body["code"] == "insufficient_scope"
    status, body = await post_session(api, "not-a-token-discord-issued")
    assert status == 401 and body["code"] == "token_invalid"
    assert await pool.fetchval("SELECT count(*) FROM personal_tokens") == 0


async def test_guessing_discord_tokens_is_rate_limited_like_personal_tokens(api: Api) -> None:
    codes = [(await post_session(api, f"guess-{i}"))[1]["code"] for i in range(4)]
    # The burst is 3 failures; the fourth attempt is not even looked at, a good token included.
    assert codes == ["token_invalid"] * 3 + ["auth_rate_limited"]
    response = await api.client.post(
        "/v1/sessions", json={"discord_access_token": api.fake.issue_token(api.app, NELLY)}
    )
    assert response.status == 429 and int(response.headers["Retry-After"]) >= 1


async def test_deleting_the_current_session_revokes_its_token(api: Api, pool: asyncpg.Pool) -> None:
    _, body = await post_session(api, api.fake.issue_token(api.app, NELLY))
    _, roys = await post_session(api, api.fake.issue_token(api.app, ROY))
    headers = {"Authorization": f"Bearer {body['token']}"}
    response = await api.client.delete("/v1/sessions/current", headers=headers)
    assert response.status == 204
    status, refused = await quota_status(api, body["token"])
    assert status == 401 and refused["code"] == "token_revoked"
    response = await api.client.delete("/v1/sessions/current", headers=headers)
    assert response.status == 401 and (await response.json(content_type=None))["code"] == "token_revoked"
    # Only that token: the other user's session goes on.
    assert (await quota_status(api, roys["token"]))[0] == 200


async def test_a_user_keeps_at_most_the_newest_web_sessions(api: Api, pool: asyncpg.Pool) -> None:
    tokens = [(await post_session(api, api.fake.issue_token(api.app, NELLY)))[1]["token"] for _ in range(12)]
    live = await pool.fetchval(
        "SELECT count(*) FROM personal_tokens WHERE revoked_at IS NULL AND name = $1", WEB_TOKEN_NAME
    )
    assert live == MAX_WEB_SESSIONS
    assert (await quota_status(api, tokens[0]))[1]["code"] == "token_revoked"
    assert (await quota_status(api, tokens[-1]))[0] == 200


async def test_sign_in_is_off_without_a_client_id_and_discord_unreachable_is_503(pool: asyncpg.Pool) -> None:
    off = ApiSettings(dispatch=False)
    async with TestClient(TestServer(create_app(pool, off), host="127.0.0.1")) as client:
        response = await client.post("/v1/sessions", json={"discord_access_token": "x"})
        body = await response.json(content_type=None)
    assert response.status == 404 and "ARENA_API_DISCORD_CLIENT_ID" in body["detail"]
    nowhere = ApiSettings(dispatch=False, discord_client_id="1", discord_url=f"http://127.0.0.1:{unused_port()}")
    async with TestClient(TestServer(create_app(pool, nowhere), host="127.0.0.1")) as client:
        response = await client.post("/v1/sessions", json={"discord_access_token": "x"})
        body = await response.json(content_type=None)
    assert response.status == 503 and body["code"] == "unavailable"
    assert "127.0.0.1" not in body["detail"]


async def test_the_fakes_user_lookups_answer_as_the_document_says(api: Api) -> None:
    """The fake's `/users/@me` and `/oauth2/@me` answers pass the document's schemas (a violation would be
    recorded), and a token without the scope an operation needs gets Discord's 401."""
    token = api.fake.issue_token(api.app, NELLY)
    async with aiohttp.ClientSession(api.fake.base_url) as http:
        for path in ("/api/v10/users/@me", "/api/v10/oauth2/@me"):
            async with http.get(path, headers={"Authorization": f"Bearer {token}"}) as response:
                assert response.status == 200
        async with http.get("/api/v10/users/@me", headers={"Authorization": "Bearer nope"}) as response:
            assert response.status == 401
        email_only = api.fake.issue_token(api.app, NELLY, scopes=("email",))
        async with http.get("/api/v10/users/@me", headers={"Authorization": f"Bearer {email_only}"}) as response:
            assert response.status == 401
    assert api.fake.violations == []


async def test_a_discord_token_over_plain_http_from_another_machine_is_refused(pool: asyncpg.Pool, api: Api) -> None:
    # Behind a trusted TLS proxy that says its client came over http from elsewhere.
    settings = ApiSettings(
        dispatch=False,
        discord_client_id=api.app.client_id,
        discord_url=api.fake.base_url,
        trusted_proxies=["127.0.0.1/32"],
    )
    token = api.fake.issue_token(api.app, NELLY)
    async with TestClient(TestServer(create_app(pool, settings), host="127.0.0.1")) as client:
        for proto, status in (("http", 403), ("https", 201)):
            response = await client.post(
                "/v1/sessions",
                json={"discord_access_token": token},
                headers={"X-Forwarded-For": "203.0.113.5", "X-Forwarded-Proto": proto},
            )
            body = await response.json(content_type=None)
            assert response.status == status, body
    assert body["user"]["discord_id"] == NELLY.id
