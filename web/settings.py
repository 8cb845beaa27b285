"""Configuration of the web process, read once from `ARENA_WEB_*` variables (and `.env` in development).

The store keeps its own settings (`core.settings.StoreSettings`, `ARENA_*` and DATABASE_URL), as it does for
the bot and the CLI; `ARENA_WEB_DATABASE_URL` gives the web a login of its own instead. Whichever it logs in with,
every connection acts as the read-only role (`core.store.pool.READER_ROLE`). Build `WebSettings()` once in
`web.__main__` and pass it down.
"""

from __future__ import annotations

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from core.settings import StoreSettings


class WebSettings(BaseSettings):
    """Everything `arena web` needs. Variables are ARENA_WEB_<FIELD>."""

    model_config = SettingsConfigDict(env_prefix="ARENA_WEB_", extra="ignore", env_file=".env")

    host: str = Field("127.0.0.1", description="listen address; put a TLS proxy in front for the internet")
    port: int = Field(8080, ge=1, le=65535)
    page_size: int = Field(50, ge=1, le=99, description="board rows per page")
    board_cache_s: float = Field(
        15.0, ge=0, description="how long a contest board is served before it is computed again (0: every request)"
    )
    chart_max_age_s: int = Field(300, ge=0, description="how long browsers and proxies may keep a roofline chart")
    database_url: SecretStr | None = Field(
        None, description="the web's own login (one that may only read); unset: the store's DATABASE_URL"
    )
    store: StoreSettings = Field(default_factory=StoreSettings)
    # Sign in with Discord (web/signin.py, docs/web.md): off while `secret` is unset.
    secret: SecretStr | None = Field(
        None, description="key of the signed sign-in cookies and CSRF tokens (32+ random bytes); unset: sign-in off"
    )
    discord_client_id: str | None = Field(None, description="the Discord application's client id (OAuth2)")
    discord_client_secret: SecretStr | None = Field(None, description="the Discord application's client secret")
    discord_url: str = Field("https://discord.com", description="Discord's address (a fake Discord's in tests)")
    public_url: str | None = Field(
        None, description="the web's address as browsers reach it, e.g. https://arena.example.org (redirect URI)"
    )
    api_url: str = Field("http://127.0.0.1:8800", description="the API service (`arena api`) that signs users in")
    session_days: int = Field(7, ge=1, le=30, description="how long a sign-in lasts before it must be made again")

    def reader_store(self) -> StoreSettings:
        """The store's settings, with the web's own login where one is set."""
        if self.database_url is None:
            return self.store
        return self.store.model_copy(update={"database_url": self.database_url})
