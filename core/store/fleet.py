"""The fleet's rows: bootstrap tokens, runners (their joins, registrations, heartbeats), secrets and canaries.

A runner is live while its state is `active` or `draining` and it was heard from within the heartbeat timeout;
`sweep_silent` moves the others to `left`. Every function takes a `Conn`, so callers compose them in one
transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.store.pool import Conn

LIVE = ("active", "draining")


@dataclass(frozen=True)
class JoinToken:
    id: int
    gpu_type: str
    prefix: str
    note: str
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None


@dataclass(frozen=True)
class RunnerRow:
    id: int
    name: str
    gpu_type: str
    state: str
    url: str | None
    slots: int
    hardware: dict[str, Any] | None
    joined_at: datetime
    registered_at: datetime | None
    last_seen_at: datetime
    left_at: datetime | None
    note: str | None
    quarantined_at: datetime | None
    quarantine_reason: str | None
    last_good_canary_at: datetime | None

    @property
    def quarantined(self) -> bool:
        return self.quarantined_at is not None


@dataclass(frozen=True)
class LiveRunner:
    """A runner a dispatcher may send jobs to: where it is and the secret to sign with."""

    id: int
    name: str
    gpu_type: str
    url: str
    slots: int
    state: str
    quarantined: bool
    secret: str
    in_flight: int = 0  # jobs in flight that name it, whichever dispatcher sent them
    # The rank counts of its multi-rank slots, as it registered them (RunnerHardware.rank_slots), one per slot.
    rank_slots: tuple[int, ...] = ()


_RUNNER_COLUMNS = """id, name, gpu_type, state, url, slots, hardware, joined_at, registered_at, last_seen_at, left_at,
    note, quarantined_at, quarantine_reason, last_good_canary_at"""


async def insert_join_token(
    conn: Conn, gpu_type: str, token_sha256: bytes, prefix: str, note: str, expires_at: datetime | None
) -> JoinToken:
    row = await conn.fetchrow(
        """INSERT INTO runner_join_tokens (gpu_type, token_sha256, prefix, note, expires_at)
        VALUES ($1, $2, $3, $4, $5)
        RETURNING id, gpu_type, prefix, note, created_at, expires_at, revoked_at""",
        gpu_type,
        token_sha256,
        prefix,
        note,
        expires_at,
    )
    return JoinToken(**row)


async def usable_join_token(conn: Conn, token_sha256: bytes) -> JoinToken | None:
    """The token with this hash, if it is neither revoked nor expired."""
    row = await conn.fetchrow(
        """SELECT id, gpu_type, prefix, note, created_at, expires_at, revoked_at FROM runner_join_tokens
        WHERE token_sha256 = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())""",
        token_sha256,
    )
    return JoinToken(**row) if row else None


async def list_join_tokens(conn: Conn) -> list[JoinToken]:
    rows = await conn.fetch(
        "SELECT id, gpu_type, prefix, note, created_at, expires_at, revoked_at FROM runner_join_tokens ORDER BY id"
    )
    return [JoinToken(**r) for r in rows]


async def revoke_join_token(conn: Conn, token_id: int) -> bool:
    status = await conn.execute(
        "UPDATE runner_join_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL", token_id
    )
    return status != "UPDATE 0"


async def pool_types(conn: Conn) -> list[str]:
    """The pools (GPU types) an operator made a token for, usable or not: their jobs wait for a runner to join."""
    rows = await conn.fetch("SELECT DISTINCT gpu_type FROM runner_join_tokens ORDER BY gpu_type")
    return [r["gpu_type"] for r in rows]


async def any_join_token(conn: Conn) -> bool:
    """Whether a fleet was ever set up here (a token made, revoked or not)."""
    return bool(await conn.fetchval("SELECT EXISTS (SELECT 1 FROM runner_join_tokens)"))


async def insert_runner(conn: Conn, name: str, gpu_type: str, join_token_id: int, secret: str) -> int:
    """A newly joined runner. An earlier join under the same name that is still on the books leaves: the name
    belongs to the host that joined last (a restarted runner joins again)."""
    await conn.execute(
        """UPDATE runners SET state = 'left', left_at = now(), note = 'joined again'
        WHERE name = $1 AND state IN ('joined', 'active', 'draining')""",
        name,
    )
    runner_id: int = await conn.fetchval(
        "INSERT INTO runners (name, gpu_type, join_token_id) VALUES ($1, $2, $3) RETURNING id",
        name,
        gpu_type,
        join_token_id,
    )
    await conn.execute("INSERT INTO runner_secrets (runner_id, secret) VALUES ($1, $2)", runner_id, secret)
    return runner_id


async def runner_secret(conn: Conn, runner_id: int) -> str | None:
    value: str | None = await conn.fetchval("SELECT secret FROM runner_secrets WHERE runner_id = $1", runner_id)
    return value


async def accept_request_ts(conn: Conn, runner_id: int, ts: float) -> bool:
    """Record `ts` as the runner's newest signed request; False when it is not newer than the last one (a replay,
    or a request that lost a race with a newer one: the runner sends again)."""
    status = await conn.execute(
        "UPDATE runners SET last_request_ts = $2 WHERE id = $1 AND last_request_ts < $2", runner_id, ts
    )
    return status != "UPDATE 0"


async def get_runner(conn: Conn, runner_id: int, *, lock: bool = False) -> RunnerRow | None:
    suffix = " FOR UPDATE" if lock else ""
    row = await conn.fetchrow(f"SELECT {_RUNNER_COLUMNS} FROM runners WHERE id = $1{suffix}", runner_id)
    return RunnerRow(**row) if row else None


async def find_runner(conn: Conn, name: str) -> RunnerRow | None:
    """The latest join under `name`."""
    row = await conn.fetchrow(f"SELECT {_RUNNER_COLUMNS} FROM runners WHERE name = $1 ORDER BY id DESC LIMIT 1", name)
    return RunnerRow(**row) if row else None


async def register(conn: Conn, runner_id: int, url: str, slots: int, hardware: dict[str, Any]) -> None:
    await conn.execute(
        """UPDATE runners SET state = 'active', url = $2, slots = $3, hardware = $4,
            registered_at = now(), last_seen_at = now(), left_at = NULL, note = NULL
        WHERE id = $1""",
        runner_id,
        url,
        slots,
        hardware,
    )


async def set_state(conn: Conn, runner_id: int, state: str, note: str | None = None) -> None:
    left = state in ("left", "revoked", "refused")
    await conn.execute(
        """UPDATE runners SET state = $2, note = coalesce($3, note),
            left_at = CASE WHEN $4 THEN coalesce(left_at, now()) ELSE left_at END
        WHERE id = $1""",
        runner_id,
        state,
        note,
        left,
    )


async def heard_from(conn: Conn, runner_id: int, state: str) -> None:
    """A heartbeat: the runner is alive, active or draining."""
    await conn.execute("UPDATE runners SET last_seen_at = now(), state = $2 WHERE id = $1", runner_id, state)


async def heard_from_member(conn: Conn, runner_id: int, state: str) -> RunnerRow | None:
    """A heartbeat of a runner that is in its pool (active or draining), in one statement: the runner as it now is,
    or None, changing nothing, for any other runner (the caller tells why)."""
    row = await conn.fetchrow(
        f"""UPDATE runners SET last_seen_at = now(), state = $2 WHERE id = $1 AND state IN ('active', 'draining')
        RETURNING {_RUNNER_COLUMNS}""",
        runner_id,
        state,
    )
    return RunnerRow(**row) if row else None


async def sweep_silent(conn: Conn, timeout_s: float) -> list[RunnerRow]:
    """Runners not heard from within `timeout_s` leave their pool; the ones that just left."""
    rows = await conn.fetch(
        f"""UPDATE runners SET state = 'left', left_at = now(), note = 'no heartbeat'
        WHERE state IN ('joined', 'active', 'draining') AND last_seen_at < now() - make_interval(secs => $1)
        RETURNING {_RUNNER_COLUMNS}""",
        timeout_s,
    )
    return [RunnerRow(**r) for r in rows]


async def live_runners(conn: Conn, timeout_s: float) -> list[LiveRunner]:
    """Registered runners heard from within `timeout_s`, with their secrets and their jobs in flight: the
    dispatchers' view of the fleet."""
    rows = await conn.fetch(
        """SELECT r.id, r.name, r.gpu_type, r.url, r.slots, r.state, r.quarantined_at IS NOT NULL AS quarantined,
            s.secret,
            (SELECT count(*) FROM jobs j WHERE j.runner = r.name AND j.state IN ('dispatched', 'running'))
                AS in_flight,
            ARRAY(SELECT jsonb_array_elements_text(coalesce(r.hardware -> 'rank_slots', '[]'))::int) AS rank_slots
        FROM runners r JOIN runner_secrets s ON s.runner_id = r.id
        WHERE r.state IN ('active', 'draining') AND r.url IS NOT NULL
          AND r.last_seen_at >= now() - make_interval(secs => $1)
        ORDER BY r.gpu_type, r.name""",
        timeout_s,
    )
    return [LiveRunner(**{**r, "rank_slots": tuple(r["rank_slots"])}) for r in rows]


async def list_runners(conn: Conn, *, include_gone: bool = False, limit: int = 200) -> list[RunnerRow]:
    where = "" if include_gone else "WHERE state IN ('joined', 'active', 'draining')"
    rows = await conn.fetch(
        f"SELECT {_RUNNER_COLUMNS} FROM runners {where} ORDER BY gpu_type, name, id DESC LIMIT $1", limit
    )
    return [RunnerRow(**r) for r in rows]


async def quarantine(conn: Conn, runner_id: int, reason: str) -> None:
    await conn.execute(
        """UPDATE runners SET quarantined_at = coalesce(quarantined_at, now()), quarantine_reason = $2
        WHERE id = $1""",
        runner_id,
        reason,
    )


async def release_quarantine(conn: Conn, runner_id: int) -> bool:
    status = await conn.execute(
        """UPDATE runners SET quarantined_at = NULL, quarantine_reason = NULL, last_good_canary_at = now()
        WHERE id = $1 AND quarantined_at IS NOT NULL""",
        runner_id,
    )
    return status != "UPDATE 0"


async def insert_canary(
    conn: Conn, runner_id: int, set_version: int, report: dict[str, Any], verdict: str, detail: str
) -> None:
    await conn.execute(
        """INSERT INTO runner_canaries (runner_id, set_version, report, verdict, detail)
        VALUES ($1, $2, $3, $4, $5)""",
        runner_id,
        set_version,
        report,
        verdict,
        detail,
    )
    if verdict == "ok":
        await conn.execute("UPDATE runners SET last_good_canary_at = now() WHERE id = $1", runner_id)


async def latest_canaries(conn: Conn, gpu_type: str, set_version: int, exclude_runner: int) -> list[dict[str, Any]]:
    """The latest report of the same canary set from every other live, unquarantined runner of the pool."""
    rows = await conn.fetch(
        """SELECT DISTINCT ON (c.runner_id) c.report
        FROM runner_canaries c JOIN runners r ON r.id = c.runner_id
        WHERE r.gpu_type = $1 AND c.set_version = $2 AND c.runner_id <> $3
          AND r.state IN ('active', 'draining') AND r.quarantined_at IS NULL
        ORDER BY c.runner_id, c.id DESC""",
        gpu_type,
        set_version,
        exclude_runner,
    )
    return [r["report"] for r in rows]


async def last_verdicts(conn: Conn, runner_id: int, count: int) -> list[str]:
    rows = await conn.fetch(
        "SELECT verdict FROM runner_canaries WHERE runner_id = $1 ORDER BY id DESC LIMIT $2", runner_id, count
    )
    return [r["verdict"] for r in rows]


async def flag_results_since_good_canary(conn: Conn, runner_id: int, reason: str) -> int:
    """Flag the ranked results this runner timed since its last good canary (since it joined, if none was good);
    the number flagged."""
    status = await conn.execute(
        """UPDATE submissions s SET timing_flag = $2
        FROM runners r
        WHERE r.id = $1 AND s.runner = r.name AND s.mode = 'ranked' AND s.timing_flag IS NULL
          AND s.finished_at >= coalesce(r.last_good_canary_at, r.joined_at)""",
        runner_id,
        reason,
    )
    return int(status.split()[-1])


async def flagged_submissions(conn: Conn, runner_name: str | None = None) -> list[int]:
    rows = await conn.fetch(
        """SELECT id FROM submissions WHERE timing_flag IS NOT NULL AND ($1::text IS NULL OR runner = $1)
        ORDER BY id""",
        runner_name,
    )
    return [r["id"] for r in rows]


async def clear_flag(conn: Conn, submission_id: int) -> None:
    await conn.execute("UPDATE submissions SET timing_flag = NULL WHERE id = $1", submission_id)


async def in_flight_on(conn: Conn, runner_name: str) -> int:
    value: int = await conn.fetchval(
        "SELECT count(*) FROM jobs WHERE runner = $1 AND state IN ('dispatched', 'running')", runner_name
    )
    return value


@dataclass(frozen=True)
class FleetCounts:
    """What the metrics show: runners per pool and state (with the quarantined and the heard-from among them),
    unfinished jobs per pool and state, and the flagged results."""

    runners: list[dict[str, Any]]
    jobs: list[dict[str, Any]]
    flagged: int


async def fleet_counts(conn: Conn, timeout_s: float) -> FleetCounts:
    runners = await conn.fetch(
        """SELECT gpu_type, state, count(*) AS n,
            count(*) FILTER (WHERE quarantined_at IS NOT NULL) AS quarantined,
            count(*) FILTER (WHERE last_seen_at >= now() - make_interval(secs => $1)) AS heard
        FROM runners WHERE state IN ('joined', 'active', 'draining') GROUP BY gpu_type, state""",
        timeout_s,
    )
    jobs = await conn.fetch(
        """SELECT gpu_type, state, count(*) AS n FROM jobs WHERE state IN ('queued', 'dispatched', 'running')
        GROUP BY gpu_type, state"""
    )
    flagged: int = await conn.fetchval("SELECT count(*) FROM submissions WHERE timing_flag IS NOT NULL")
    return FleetCounts([dict(r) for r in runners], [dict(r) for r in jobs], flagged)
