"""Configuration of the Discord bot, read once from `ARENA_BOT_*` variables (and `.env` in development).

The store, dispatcher and rate limits keep their own settings (`core.settings.Settings`, `ARENA_*`); this
adds what only the Discord process needs: the token, the guild, channels and roles, and whether it dispatches to
the fleet (runners that joined their pools) or to a local runner. Build `BotSettings()` once in `__main__` and
pass it down.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from contract.wire import MeasureConfig
from core.settings import Settings
from runner.gpus import GpuSpec, spec_for

GPU_TYPE_PATTERN = r"^[a-z0-9][a-z0-9_.-]{0,63}$"
RUNNERS_REMOVED = (
    "ARENA_BOT_RUNNERS is no longer read: runners now join their GPU pool by themselves. Remove it, start the API "
    "service (`arena api`), make a bootstrap token for each pool (`arena fleet token create --pool h100`), and start "
    "each runner with `arena runner serve --join http://<api>:8800 --token-file <file>` (docs/fleet.md). The "
    "runner secrets ARENA_BOT_RUNNER_SECRET(_FILE) are gone too: each runner gets its own."
)


class DeviceSpec(BaseModel):
    """Peak rates of a device the built-in table lacks (a CPU runner, a new GPU), for % of peak and charts."""

    bandwidth_gbps: float = Field(gt=0)
    peak_gflops: dict[str, float] = Field(description="by dtype; float32 is required")

    @model_validator(mode="after")
    def _has_float32(self) -> DeviceSpec:
        if "float32" not in self.peak_gflops:
            raise ValueError("peak_gflops needs a float32 entry")
        return self


class BotSettings(BaseSettings):
    """Everything the Discord bot needs. Variables are ARENA_BOT_<FIELD>; lists and maps are JSON."""

    model_config = SettingsConfigDict(
        env_prefix="ARENA_BOT_", env_file=".env", extra="ignore", populate_by_name=True, frozen=True
    )

    token: SecretStr = Field(validation_alias=AliasChoices("ARENA_BOT_TOKEN", "DISCORD_TOKEN", "token"))
    guild_id: int | None = Field(None, description="the guild whose commands are synced at start")
    announce_channel_id: int | None = Field(None, description="where personal bests and podium places are posted")
    moderator_role_id: int | None = Field(None, description="members with this role may use /mod")
    moderator_permission: str = Field("manage_guild", description="members with this permission may use /mod")
    discord_api_base: str | None = Field(
        None,
        validation_alias=AliasChoices("ARENA_DISCORD_API_BASE", "discord_api_base"),
        description="another origin that speaks Discord's API (tests); unset: Discord",
    )

    # Gone: runners join their pool at the API service (`arena runner serve --join`). Kept only to say so.
    runners: Any = Field(None, description="removed; see RUNNERS_REMOVED")
    fleet: Literal["auto", "on", "off"] = Field(
        "auto",
        description="dispatch to the runners that joined their pools (read from the store); auto: when an operator "
        "has made a bootstrap token (`arena fleet token create`)",
    )
    local_runner: Literal["auto", "on", "off"] = Field(
        "auto", description="run jobs on this machine too; auto: only when there is no fleet"
    )
    local_device: Literal["auto", "cpu", "gpu"] = "auto"
    local_slots: int = Field(1, ge=1, le=64)
    local_measure: MeasureConfig | None = Field(None, description="timing settings for local jobs (tests: short)")
    default_gpu: str | None = Field(None, pattern=GPU_TYPE_PATTERN)

    progress_interval_s: float = Field(1.0, gt=0, description="least time between two edits of a live message")
    interaction_edit_window_s: float = Field(
        14 * 60.0, ge=0, description="after this, progress moves to a channel message (tokens last 15 min)"
    )
    result_timeout_s: float = Field(3600.0, gt=0, description="how long a live message follows one job")
    view_timeout_s: float = Field(180.0, gt=0, description="buttons stop answering after this")
    contest_freeze_interval_s: float = Field(
        10.0, gt=0, description="how often ended contests are frozen, rated and announced"
    )
    contest_freeze_grace_s: float = Field(
        3600.0,
        gt=0,
        description="how long after its end a contest's board waits for runs still being judged before it freezes",
    )
    contest_podium_check: bool = Field(
        True, description="run each podium entry a second time, on another runner where there is one, before a freeze"
    )
    leaderboard_page_size: int = Field(10, ge=1, le=25)
    sync_builtin_problems: bool = Field(True, description="register the built-in problems in the store at start")
    guild_ready_timeout_s: float = Field(2.0, ge=0)
    device_specs: dict[str, DeviceSpec] = Field(default_factory=dict, description="device name -> peak rates")
    # The probes for machines (bot/health.py): /healthz and /readyz, unauthenticated, on their own small listener.
    health_host: str = Field("127.0.0.1", description="address of the health listener; 0.0.0.0 in a pod")
    health_port: int = Field(8081, ge=0, le=65535, description="port of the health listener; 0 disables it")

    arena: Settings = Field(default_factory=Settings, description="store, dispatch and rate limits (ARENA_*)")

    @model_validator(mode="after")
    def _no_static_runners(self) -> BotSettings:
        if self.runners is not None:
            raise ValueError(RUNNERS_REMOVED)
        return self

    def spec_for(self, device: str) -> GpuSpec | None:
        """Peak rates of `device`: a configured entry first (exact name or prefix), then the built-in table."""
        for name, spec in self.device_specs.items():
            if device == name or device.startswith(name):
                return GpuSpec(name, spec.bandwidth_gbps, dict(spec.peak_gflops))
        return spec_for(device)
