"""The end-to-end harness: the real bot's settings, and `Arena`, which plays users in the fake Discord.

The bot is configured by settings alone (`BotSettings`), as in production: the fake Discord's token and
guild, a moderator role, an announce channel, a per-test database (a copy of a migrated template), and the
local runner on the CPU with short timing (each job is a real sandboxed worker process).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.bot_settings import BotSettings, DeviceSpec
from bot.client import ArenaBot
from contract.wire import MeasureConfig
from core.settings import DispatchSettings, RateLimitSettings, Settings, StoreSettings
from tests.fakediscord import FakeDiscord, FakeRole, FakeUser, InteractionRecord, RecordedMessage

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
DATA = Path(__file__).resolve().parent / "data"

FAST = MeasureConfig(target_cv=0.2, min_samples=10, max_samples=200, max_seconds=0.3, warmup=False)
# Nominal peaks for a small CI CPU (the test cases fit in its caches, so the bandwidth is a cache figure), only so
# that % of peak and the roofline have a roof to draw.
CPU_SPEC = DeviceSpec(bandwidth_gbps=200.0, peak_gflops={"float32": 500.0})
GREEN, RED = 0x2ECC71, 0xE74C3C
# How long a test waits for a job's final message: a bound that tells a stuck job from a busy host (a job takes a
# few seconds on an idle machine), never a budget.
JOB_TIMEOUT_S = 300.0


def make_settings(fake: FakeDiscord, dsn: str, moderator_role: FakeRole, **overrides: Any) -> BotSettings:
    rate = overrides.pop("rate", RateLimitSettings(test_burst=100, benchmark_burst=100, ranked_burst=100))
    values: dict[str, Any] = {
        "token": fake.token,
        "guild_id": int(fake.guild.id),
        "announce_channel_id": int(fake.channel("general").id),
        "moderator_role_id": int(moderator_role.id),
        "local_runner": "on",
        "local_device": "cpu",
        "local_slots": 2,
        "local_measure": FAST,
        "guild_ready_timeout_s": 0.05,
        "device_specs": {"CPU": CPU_SPEC},
        "arena": Settings(
            store=StoreSettings(database_url=dsn, pool_min_size=1, pool_max_size=8),
            dispatch=DispatchSettings(owner="bot-tests", lease_s=30.0, retry_backoff_s=0.0, poll_s=0.2),
            rate=rate,
            local_user="tester",
        ),
    }
    values.update(overrides)
    return BotSettings(**values)


def is_final(message: RecordedMessage) -> bool:
    return bool(message.embeds) and message.embeds[0].get("color") in (GREEN, RED)


@dataclass
class Arena:
    """The running bot and the people in the fake guild."""

    fake: FakeDiscord
    bot: ArenaBot
    moderator: FakeUser
    moderator_role: FakeRole

    async def submit(
        self, user: FakeUser, problem: str, file_name: str, data: bytes, **options: Any
    ) -> InteractionRecord:
        return await self.fake.invoke_slash(
            user, "submit", {"problem": problem, **options}, attachments=[(file_name, data)], channel="submissions"
        )

    async def submit_example(self, user: FakeUser, problem: str, example: str, **options: Any) -> InteractionRecord:
        path = EXAMPLES / example if (EXAMPLES / example).exists() else DATA / example
        return await self.submit(user, problem, path.name, path.read_bytes(), **options)

    async def final(self, interaction: InteractionRecord, timeout: float = JOB_TIMEOUT_S) -> RecordedMessage:
        """The submission's public message once it shows the result (green or red)."""
        return await self.fake.wait_for_followup(interaction, is_final, timeout=timeout)

    async def error_of(self, interaction: InteractionRecord) -> str:
        """The private red answer to a command that was refused."""
        reply = await self.fake.wait_for_original(interaction, lambda m: bool(m.embeds))
        assert reply.ephemeral, reply.summary()
        assert reply.embeds[0]["color"] == RED, reply.embeds
        return str(reply.embeds[0]["description"])

    async def count(self, table: str) -> int:
        assert table.isidentifier()
        return int(await self.bot.pool.fetchval(f"SELECT count(*) FROM {table}"))
