"""Configuration of the bot process, read once from the environment (and `.env` in development).

Build `Settings()` once at start and pass it down; nothing else reads the environment.
"""

from __future__ import annotations

import getpass
import os
import socket
from pathlib import Path

from pydantic import AliasChoices, BaseModel, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from contract.names import MODES  # every submission mode has a rate-limit bucket of its own


def default_data_dir() -> Path:
    """Where the embedded PostgreSQL keeps its data: the user's data directory (XDG), under kernel-arena/pg.

    Root's is /var/lib/kernel-arena/pg: PostgreSQL then runs as a user of its own, who must be able to reach the
    data, and a home folder is not opened to others for that (`core.store.embedded_root`).
    """
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    home_default = Path(base) / "kernel-arena" / "pg"
    # A store made there before this rule keeps being used: nothing it holds is left behind.
    if os.geteuid() == 0 and not os.environ.get("XDG_DATA_HOME") and not (home_default / "PG_VERSION").exists():
        return Path("/var/lib/kernel-arena/pg")
    return home_default


class RateLimit(BaseModel):
    """A token bucket: `burst` submissions at once, refilled at `per_hour` submissions an hour."""

    burst: int = Field(ge=1)
    per_hour: float = Field(gt=0)


class StoreSettings(BaseSettings):
    """The Postgres store. With no DATABASE_URL, an embedded server runs with its data under `data_dir`."""

    model_config = SettingsConfigDict(
        env_prefix="ARENA_", env_nested_delimiter="__", extra="ignore", env_file=".env", populate_by_name=True
    )

    database_url: SecretStr | None = Field(None, validation_alias=AliasChoices("DATABASE_URL", "ARENA_DATABASE_URL"))
    data_dir: Path = Field(default_factory=default_data_dir)
    pool_min_size: int = Field(2, ge=1)
    pool_max_size: int = Field(10, ge=1)
    command_timeout_s: float = Field(60.0, gt=0)
    migrate_on_start: bool = True


class DispatchSettings(BaseSettings):
    """The job dispatcher: leases, retries and polling."""

    model_config = SettingsConfigDict(env_prefix="ARENA_DISPATCH_", extra="ignore", env_file=".env")

    owner: str = Field(default_factory=socket.gethostname, description="stable name of this dispatcher")
    lease_s: float = Field(60.0, gt=0, description="a job whose lease lapses is taken over by another dispatcher")
    max_attempts: int = Field(3, ge=1, description="dispatches of one job before it is marked failed")
    retry_backoff_s: float = Field(5.0, ge=0)
    poll_s: float = Field(2.0, gt=0, description="how often to look for queued jobs without a notification")
    store_retry_s: float = Field(
        1.0, gt=0, description="while the database is unreachable, how often to try it again (longest wait)"
    )
    runner_probe_s: float = Field(2.0, gt=0, description="how often to ask an unreachable runner whether it is back")
    runner_outage_s: float = Field(
        900.0, gt=0, description="a job waits this long for an unreachable runner of its GPU type, then fails"
    )


class RateLimitSettings(BaseSettings):
    """Per-user submission limits for each mode, e.g. ARENA_RATE_RANKED_BURST=5, ARENA_RATE_RANKED_PER_HOUR=30."""

    model_config = SettingsConfigDict(env_prefix="ARENA_RATE_", extra="ignore", env_file=".env")

    test_burst: int = Field(10, ge=1)
    test_per_hour: float = Field(120.0, gt=0)
    benchmark_burst: int = Field(6, ge=1)
    benchmark_per_hour: float = Field(60.0, gt=0)
    ranked_burst: int = Field(3, ge=1)
    ranked_per_hour: float = Field(20.0, gt=0)
    # The strictest: Nsight Compute replays the kernel once per pass of counters it collects, and the job holds its
    # GPU for all of them.
    profile_burst: int = Field(2, ge=1)
    profile_per_hour: float = Field(6.0, gt=0)

    def for_mode(self, mode: str) -> RateLimit:
        """The bucket for `mode` (test, benchmark, ranked or profile)."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}")
        return RateLimit(burst=getattr(self, f"{mode}_burst"), per_hour=getattr(self, f"{mode}_per_hour"))


class Settings(BaseSettings):
    """Everything the bot process needs; each part reads its own environment variables."""

    model_config = SettingsConfigDict(env_prefix="ARENA_", extra="ignore", env_file=".env")

    store: StoreSettings = Field(default_factory=StoreSettings)
    dispatch: DispatchSettings = Field(default_factory=DispatchSettings)
    rate: RateLimitSettings = Field(default_factory=RateLimitSettings)
    local_user: str = Field(default_factory=getpass.getuser, description="who `arena submit` records as")
