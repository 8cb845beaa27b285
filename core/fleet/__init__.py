"""The fleet: runners join their pool with a bootstrap token, register, send heartbeats, drain and leave.

A pool is a GPU type (`h100`, `cpu`): the key of its boards and of the jobs its runners take. An operator makes a
bootstrap token for a pool (`arena fleet token create --pool h100`); a runner exchanges it for a credential of
its own (`join`), registers the address where dispatchers reach it and its hardware (`register`, which refuses
hardware that is not the pool's), and sends a heartbeat every `heartbeat_s`. One not heard from for
`heartbeat_timeout_s` leaves its pool (`sweep_silent`). The API service (`api/`) calls these functions; runners
never touch the database.

The package's other modules: `view` (what a dispatcher sees of the fleet), `canary` (the runners' canaries and the
flags they raise), `submit` (`arena submit --fleet`).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

import asyncpg
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from contract.wire import (
    RunnerHardware,
    RunnerHeartbeat,
    RunnerJoined,
    RunnerJoinRequest,
    RunnerRegistration,
    RunnerStanding,
)
from core.errors import KernelArenaError, UserFacingError
from core.store import fleet as store

log = logging.getLogger(__name__)

JOIN_TOKEN_PREFIX = "arena-join-"
GPU_TYPE_PATTERN = r"^[a-z0-9][a-z0-9_.-]{0,63}$"


class FleetSettings(BaseSettings):
    """How often runners send heartbeats, and when a silent one leaves its pool (`ARENA_FLEET_*`)."""

    model_config = SettingsConfigDict(env_prefix="ARENA_FLEET_", extra="ignore", env_file=".env")

    heartbeat_s: float = Field(5.0, gt=0, description="a runner sends a heartbeat this often")
    heartbeat_timeout_s: float = Field(
        20.0, gt=0, description="a runner not heard from for this long leaves its pool, and its jobs are requeued"
    )
    refresh_s: float = Field(1.0, gt=0, description="how often a dispatcher reads the live runners from the store")
    join_token_days: float = Field(30.0, gt=0, description="default lifetime of a bootstrap token")
    runner_ca_file: str | None = Field(None, description="PEM bundle that signs https:// runners' certificates")
    allow_plain_http: bool = Field(
        False,
        description="let dispatchers reach runners registered at http:// addresses other than this machine's (a "
        "network you trust, such as a cluster's pod network behind a NetworkPolicy)",
    )
    required_sandbox: Literal["full", "network", "none"] = Field(
        "full",
        description="the least sandbox level a runner must report to join any pool: `full` (namespaces and a fresh "
        "root), `network` (no network, no fresh root), `none` (for a trusted development fleet only)",
    )


class FleetAuthError(KernelArenaError):
    """A runner's request is not authentic (unknown runner, bad or stale signature, replay): answered 401."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class JoinRefusedError(UserFacingError):
    """The bootstrap token is unknown, expired or revoked: answered 401."""


class PoolMismatchError(UserFacingError):
    """The runner's hardware is not its pool's: answered 403, and the runner is `refused`."""


class RunnerGoneError(UserFacingError):
    """The runner left its pool, was revoked or refused: answered 409. A runner that left joins again."""

    def __init__(self, message: str, state: str) -> None:
        super().__init__(message)
        self.state = state


def token_digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


@dataclass(frozen=True)
class NewJoinToken:
    token: str  # shown once
    row: store.JoinToken


async def create_join_token(
    pool: asyncpg.Pool, gpu_type: str, *, note: str = "", lifetime: timedelta | None = None
) -> NewJoinToken:
    """A bootstrap token for the pool `gpu_type`; only its hash is stored."""
    token = JOIN_TOKEN_PREFIX + secrets.token_urlsafe(32)
    expires = datetime.now(UTC) + lifetime if lifetime is not None else None
    row = await store.insert_join_token(
        pool, gpu_type, token_digest(token), token[: len(JOIN_TOKEN_PREFIX) + 6], note, expires
    )
    log.info("join token %d made for pool %s (expires %s)", row.id, gpu_type, expires)
    return NewJoinToken(token, row)


async def join(pool: asyncpg.Pool, request: RunnerJoinRequest, settings: FleetSettings) -> RunnerJoined:
    """Exchange a bootstrap token for a credential of the runner's own. Raises JoinRefusedError."""
    async with pool.acquire() as conn, conn.transaction():
        token = await store.usable_join_token(conn, token_digest(request.token))
        if token is None:
            raise JoinRefusedError(
                "This bootstrap token is unknown, expired or revoked. Ask the operator for a token of your pool "
                "(`arena fleet token create --pool <gpu type>`)."
            )
        secret = secrets.token_urlsafe(32)
        runner_id = await store.insert_runner(conn, request.name, token.gpu_type, token.id, secret)
    log.info("runner %s joined pool %s as runner %d", request.name, token.gpu_type, runner_id)
    return RunnerJoined(
        runner_id=runner_id,
        secret=secret,
        gpu_type=token.gpu_type,
        heartbeat_s=settings.heartbeat_s,
        heartbeat_timeout_s=settings.heartbeat_timeout_s,
    )


async def runner_secret(pool: asyncpg.Pool, runner_id: int) -> bytes:
    """The runner's credential, to check its signature. Raises FleetAuthError for an unknown runner."""
    secret = await store.runner_secret(pool, runner_id)
    if secret is None:
        raise FleetAuthError(f"No runner {runner_id} has joined; join with a bootstrap token first.")
    return secret.encode()


def check_signature(secret: bytes, provided: str, expected: str) -> None:
    if not hmac.compare_digest(provided.encode(), expected.encode()):
        raise FleetAuthError("The signature does not match; sign with the secret this runner got when it joined.")


async def accept_request(pool: asyncpg.Pool, runner_id: int, timestamp: float) -> None:
    """Fence replays: a signed request is accepted once, and only if newer than the runner's last."""
    if not await store.accept_request_ts(pool, runner_id, timestamp):
        raise FleetAuthError("This request is not newer than the runner's last one: a replay, or sent out of order.")


def _gone(row: store.RunnerRow) -> RunnerGoneError:
    advice = {
        "left": "it left its pool; join again with the bootstrap token",
        "revoked": "an operator revoked its credential",
        "refused": "its hardware does not match its pool",
    }[row.state]
    return RunnerGoneError(
        f"Runner {row.name} ({row.id}) is {row.state}: {advice}. {row.note or ''}".strip(), row.state
    )


def standing(row: store.RunnerRow) -> RunnerStanding:
    return RunnerStanding(
        runner_id=row.id,
        state=row.state,  # type: ignore[arg-type]
        gpu_type=row.gpu_type,
        quarantined=row.quarantined,
        note=row.quarantine_reason if row.quarantined else row.note,
    )


PoolCheck = Callable[[str, RunnerHardware], str | None]
"""Why hardware does not belong in a pool (`gpu_type`), or None when it does; the API maps device names to the
GPU registry's entries."""


async def register(
    pool: asyncpg.Pool, runner_id: int, registration: RunnerRegistration, pool_check: PoolCheck
) -> RunnerStanding:
    """Record where the runner is and what it has; refuse it (for good) when its hardware is not its pool's."""
    async with pool.acquire() as conn, conn.transaction():
        row = await store.get_runner(conn, runner_id, lock=True)
        if row is None:
            raise FleetAuthError(f"No runner {runner_id} has joined.")
        if row.state in ("revoked", "refused"):
            raise _gone(row)
        mismatch = pool_check(row.gpu_type, registration.hardware)
        if mismatch is not None:
            await store.set_state(conn, runner_id, "refused", mismatch)
            refused = PoolMismatchError(f"Runner {row.name} cannot join pool `{row.gpu_type}`: {mismatch}.")
        else:
            hardware = registration.hardware
            await store.register(conn, runner_id, registration.url, hardware.slots, hardware.model_dump(mode="json"))
            refused = None
        row = await store.get_runner(conn, runner_id)
    if refused is not None:
        log.warning("runner %d refused: %s", runner_id, refused.message)
        raise refused
    assert row is not None
    log.info("runner %s (%d) registered at %s with %d slot(s)", row.name, row.id, row.url, row.slots)
    return standing(row)


async def heartbeat(pool: asyncpg.Pool, runner_id: int, beat: RunnerHeartbeat) -> RunnerStanding:
    """The runner is alive. One that left (it was silent too long) must register again: RunnerGoneError."""
    # The usual beat, a runner in its pool, is one statement: one round trip where the checks below take five, for
    # every runner every `heartbeat_s`. Any other runner is read and told why.
    row = await store.heard_from_member(pool, runner_id, beat.state)
    if row is not None:
        return standing(row)
    async with pool.acquire() as conn, conn.transaction():
        row = await store.get_runner(conn, runner_id, lock=True)
        if row is None:
            raise FleetAuthError(f"No runner {runner_id} has joined.")
        if row.state not in ("active", "draining"):
            if row.state == "joined":
                raise RunnerGoneError(f"Runner {row.name} has not registered yet: register first.", row.state)
            raise _gone(row)
        await store.heard_from(conn, runner_id, beat.state)
        row = await store.get_runner(conn, runner_id)
    assert row is not None
    return standing(row)


async def deregister(pool: asyncpg.Pool, runner_id: int) -> RunnerStanding:
    """The runner leaves its pool (it drained and stops)."""
    async with pool.acquire() as conn, conn.transaction():
        row = await store.get_runner(conn, runner_id, lock=True)
        if row is None:
            raise FleetAuthError(f"No runner {runner_id} has joined.")
        if row.state in ("joined", "active", "draining"):
            await store.set_state(conn, runner_id, "left", "deregistered")
        row = await store.get_runner(conn, runner_id)
    assert row is not None
    log.info("runner %s (%d) left its pool", row.name, row.id)
    return standing(row)


async def revoke(pool: asyncpg.Pool, name: str, reason: str = "revoked by an operator") -> store.RunnerRow:
    """Revoke the latest join under `name`: its credential stops working, and dispatchers drop it."""
    async with pool.acquire() as conn, conn.transaction():
        row = await store.find_runner(conn, name)
        if row is None:
            raise UserFacingError(f"No runner is called {name!r}; `arena fleet runners` lists them.")
        await store.set_state(conn, row.id, "revoked", reason)
        await conn.execute("DELETE FROM runner_secrets WHERE runner_id = $1", row.id)
        row = await store.get_runner(conn, row.id)
    assert row is not None
    log.warning("runner %s (%d) revoked: %s", row.name, row.id, reason)
    return row


async def sweep_silent(pool: asyncpg.Pool, settings: FleetSettings) -> list[store.RunnerRow]:
    """Move the runners not heard from within the timeout out of their pools."""
    left = await store.sweep_silent(pool, settings.heartbeat_timeout_s)
    for row in left:
        log.warning(
            "runner %s (%d) left pool %s: no heartbeat for %.0f s",
            row.name,
            row.id,
            row.gpu_type,
            settings.heartbeat_timeout_s,
        )
    return left
