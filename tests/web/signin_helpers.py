"""Signing in to the web in tests, through the real flow: the web app (`web/signin.py`), the API service that makes
the session (`api/web_sessions.py`) and a fake Discord OAuth2 provider (`tests/fakediscord/oauth.py`), each a real
HTTP server on 127.0.0.1, over the test's database.

    async with signin_stack(pool, db_dsn) as stack:
        session = await sign_in(stack.client, stack.fake, NELLY)
        page = await stack.client.get("/")            # the browser's cookie jar now holds the session
        await stack.client.post("/some/form", data={"csrf": session.csrf, ...})
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import asyncpg
from aiohttp.test_utils import TestClient, TestServer, unused_port

from api.app import create_app as create_api
from api.settings import ApiSettings
from core import fleet
from core.settings import Settings, StoreSettings
from core.store.pool import READER_ROLE, create_pool
from tests.fakediscord.models import FakeUser
from tests.fakediscord.oauth import FakeDiscordOAuth, OAuthClient
from tests.web.web_helpers import Clock
from web.app import create_app
from web.session import SESSION_COOKIE, WebSession, session_of_cookie
from web.settings import WebSettings

WEB_SECRET = "test-web-secret-" + "k" * 32
NELLY = FakeUser(id="80351110224678912", username="nelly", global_name="Nelly")
ROY = FakeUser(id="80351110224678913", username="roy")


@dataclass(frozen=True)
class SignInStack:
    """The servers of one sign-in: `client` browses the web (its cookie jar is the browser's), `api` calls the API
    service directly, `fake` is Discord, `app` the Discord application the web signs in with."""

    client: TestClient
    api: TestClient
    fake: FakeDiscordOAuth
    app: OAuthClient
    settings: WebSettings


@asynccontextmanager
async def signin_stack(
    pool: asyncpg.Pool,
    db_dsn: str,
    *,
    public_url: str | None = None,
    arena: Settings | None = None,
    clock: Clock | None = None,
    web: dict[str, Any] | None = None,
) -> AsyncIterator[SignInStack]:
    """A fake Discord, the API service over `pool` (no dispatcher; a `cpu` pool exists, so a submission has somewhere
    to queue) and the web over a read-only pool of `db_dsn`, served at `public_url` (default: its loopback
    address). `web` overrides the web's settings (e.g. `{"secret": None}` for sign-in off)."""
    await fleet.create_join_token(pool, "cpu", lifetime=timedelta(hours=1))
    async with FakeDiscordOAuth() as fake:
        port = unused_port()
        public = public_url or f"http://127.0.0.1:{port}"
        app = fake.add_client(f"{public}/signin/callback")
        api_settings = ApiSettings(
            dispatch=False,
            discord_client_id=app.client_id,
            discord_url=fake.base_url,
            arena=arena or Settings(),
        )
        async with TestClient(TestServer(create_api(pool, api_settings), host="127.0.0.1")) as api:
            values: dict[str, Any] = {
                "board_cache_s": 0.0,
                "secret": WEB_SECRET,
                "discord_client_id": app.client_id,
                "discord_client_secret": app.client_secret,
                "discord_url": fake.base_url,
                "public_url": public,
                "api_url": str(api.make_url("")).rstrip("/"),
                **(web or {}),
            }
            settings = WebSettings(store=StoreSettings(database_url=db_dsn), **values)
            async with create_pool(db_dsn, min_size=1, max_size=4, command_timeout=30, role=READER_ROLE) as reader:
                web_app = create_app(settings, reader, clock=clock or Clock())
                async with TestClient(TestServer(web_app, host="127.0.0.1", port=port)) as client:
                    yield SignInStack(client, api, fake, app, settings)


def session_cookie(client: TestClient) -> str | None:
    """The session cookie's value the browser holds for the web, if any (`web.session.session_of_cookie` reads it)."""
    cookie = client.session.cookie_jar.filter_cookies(client.make_url("/")).get(SESSION_COOKIE)
    return cookie.value if cookie is not None and cookie.value else None


async def sign_in(client: TestClient, fake_oauth: FakeDiscordOAuth, discord_user: FakeUser) -> WebSession:
    """Sign `discord_user` in, as a browser does: /signin, Discord's authorize page (which approves at once), the
    callback, then the page it came back to. The browser (`client`'s cookie jar) holds the session afterwards."""
    fake_oauth.approve_as(discord_user)
    refused_before = len(fake_oauth.refusals)
    response = await client.get("/signin", params={"next": "/"})
    text = await response.text()
    assert response.status == 200, f"the sign-in ended {response.status}: {text[:500]}"
    assert fake_oauth.refusals[refused_before:] == [], fake_oauth.refusals[refused_before:]
    value = session_cookie(client)
    assert value is not None, "no session cookie after the sign-in"
    session = await session_of_cookie(client.server.app, value)
    assert session is not None and session.discord_id == discord_user.id
    return session
