"""Configuration of `arena api`, read once from `ARENA_API_*` variables (and `.env` in development)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from core.fleet import FleetSettings
from core.settings import Settings


class ApiSettings(BaseSettings):
    """Everything `arena api` needs. Variables are ARENA_API_<FIELD>; the store's and the dispatcher's are ARENA_*."""

    model_config = SettingsConfigDict(env_prefix="ARENA_API_", extra="ignore", env_file=".env")

    host: str = Field("127.0.0.1", description="listen address; put a TLS proxy in front beyond one machine")
    port: int = Field(8800, ge=0, le=65535)
    dispatch: bool = Field(True, description="also run a dispatcher that sends queued jobs to the fleet's runners")
    sync_builtin_problems: bool = Field(
        True,
        description="register the built-in problems (distributed ones included) in the store at start, as the bot "
        "does: a deployment without the bot then takes submissions of every one",
    )
    clock_skew_s: float = Field(60.0, gt=0, description="largest accepted age of a runner's signed request")
    public_allow_plain_http: bool = Field(
        False,
        description="accept personal tokens over plain http:// from other machines (only behind a TLS proxy that is "
        "not listed in trusted_proxies); loopback clients may always use http://",
    )
    trusted_proxies: list[str] = Field(
        default_factory=list,
        description="addresses of the TLS proxies in front of the API, whose X-Forwarded-For and X-Forwarded-Proto "
        "are believed (the client's address for limits, and whether it used https)",
    )
    auth_failures_burst: int = Field(20, ge=1, description="failed authentications one client address may make at once")
    auth_failures_per_minute: float = Field(
        10.0, gt=0, description="after the burst, failed authentications allowed per minute to one client address"
    )
    discord_client_id: str | None = Field(
        None,
        description="the Discord application whose OAuth2 tokens sign users in to the web (POST /v1/sessions); "
        "unset: web sign-in is off",
    )
    discord_url: str = Field("https://discord.com", description="Discord's address, asked who a token belongs to")
    web_session_max_days: int = Field(30, ge=1, le=365, description="the longest web session a sign-in may ask for")
    fleet: FleetSettings = Field(default_factory=FleetSettings)
    arena: Settings = Field(default_factory=Settings, description="store, dispatch and rate limits (ARENA_*)")
