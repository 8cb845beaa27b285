"""The durable job queue: `queued → dispatched → running → done | failed | error`.

A dispatcher claims a job with FOR UPDATE SKIP LOCKED and receives a lease: an owner name, a fresh token and
an expiry. Every later change names the token, so a dispatcher that lost the lease (it stalled, another took
over) changes nothing: the token is the fence that makes a job finish exactly once.

Kept as one module: the queue's statements share its one locking order (a job's row before its submission's) and its
lease fence; split, a change to one statement could no longer be checked against the others on one page.
"""

from __future__ import annotations

import functools
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from contract.names import MODE_PRIORITY, MODES, DType, JobState, Language, Mode
from contract.wire import CaseTiming, TestOutcome
from core.store import submissions
from core.store.pool import Conn
from core.store.submissions import _SELECT as SUBMISSION_SELECT
from core.store.submissions import Outcome, Submission

QUEUE_CHANNEL = "arena_jobs"
LIVE_STATES: tuple[JobState, ...] = ("queued", "dispatched", "running")
FINAL_STATES: tuple[JobState, ...] = ("done", "failed", "error")


@dataclass(frozen=True)
class Lease:
    """A job held by one dispatcher. `token` must accompany every change."""

    job_id: int
    submission_id: int
    gpu_type: str
    state: JobState
    attempts: int
    owner: str
    token: uuid.UUID
    runner: str | None
    podium_check: bool = False
    """A second run of a contest's podium entry (core/podium_checks.py): it leaves its submission alone."""


@dataclass(frozen=True)
class Job:
    id: int
    submission_id: int
    gpu_type: str
    state: JobState
    attempts: int
    lease_owner: str | None
    runner: str | None
    last_error: str | None
    created_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True)
class Transition:
    from_state: JobState | None
    to_state: JobState
    attempt: int
    owner: str | None
    note: str | None


@dataclass(frozen=True)
class JobSpec:
    """Everything a runner needs to evaluate a job."""

    job_id: int
    submission_id: int
    slug: str
    problem_version: int
    problem_source: str | None
    # Typed as the store's CHECK constraints keep them (tests/store/test_names_in_sql.py).
    language: Language
    file_name: str
    source: str
    dtype: DType
    mode: Mode
    profile_case: int | None
    world_size: int = 1  # the ranks to run on (V027): 1, one device


_LEASE_COLUMNS = (
    "j.id AS job_id, j.submission_id, j.gpu_type, j.state, j.attempts, j.lease_owner AS owner, "
    "j.lease_token AS token, j.runner, j.podium_check"
)

# Wraps an UPDATE of the rows chosen by `picked` (a CTE with columns id, state) and logs each move.
_MOVE = """
WITH {before}picked AS ({picked}),
moved AS (
    UPDATE jobs j SET {sets} FROM picked WHERE j.id = picked.id
    RETURNING {lease}, picked.state AS from_state, j.user_id, j.mode, j.requeued
),
logged AS (
    INSERT INTO job_transitions (job_id, from_state, to_state, attempt, owner, note)
    {logged}
){after}
{answer}
"""


def _move_sql(
    picked: str,
    sets: str,
    note: str = "NULL",
    after: str | None = None,
    *,
    before: str | None = None,
    steps: Sequence[tuple[str, str]] = (),
    logged: str | None = None,
    answer: str = "SELECT * FROM moved",
) -> str:
    """The move statement; `after` is one more data-modifying step on `moved`, run in the same statement, and
    `steps` more of them, each (name, body), which `answer` and later steps may read; `before` a CTE that `picked`
    may read; `logged` the moves logged, when not one a job (`_LOGGED`); `answer` what the statement returns (the
    moved jobs' leases)."""
    # Only constant SQL fragments from the store are formatted in; values always travel as $n parameters.
    extra = f",\nafter_move AS ({after})" if after else ""
    extra += "".join(f",\n{name} AS ({body})" for name, body in steps)
    head = f"{before},\n" if before else ""
    rows = logged if logged is not None else _LOGGED.format(note=note)
    return _MOVE.format(
        before=head, picked=picked, sets=sets, lease=_LEASE_COLUMNS, logged=rows, after=extra, answer=answer
    )


# Each moved job's move, as `_move_sql` logs it unless told otherwise.
_LOGGED = "SELECT job_id, from_state, state, attempts, owner, {note} FROM moved"


def _lease(row: object) -> Lease:
    r = dict(row)  # type: ignore[call-overload]
    for column in ("from_state", "user_id", "mode", "requeued"):
        r.pop(column, None)
    return Lease(**r)


# A podium check waits this long for a runner other than the one it avoids; then any runner of the pool takes it
# (a pool that lost its other runners must not hold a contest's freeze until the grace period is over).
AVOID_RUNNER_S = 600


async def enqueue_check(conn: Conn, submission_id: int, gpu_type: str, avoid_runner: str | None) -> int:
    """A queued podium check of the submission: a job that leaves the submission's verdict alone, kept from
    `avoid_runner` for AVOID_RUNNER_S while another runner may take it."""
    job_id: int = await conn.fetchval(
        """
        WITH job AS (INSERT INTO jobs (submission_id, gpu_type, podium_check, avoid_runner)
                     VALUES ($1, $2, true, $4) RETURNING id)
        SELECT id FROM job, pg_notify($3, $2)
        """,
        submission_id,
        gpu_type,
        QUEUE_CHANNEL,
        avoid_runner,
    )
    return job_id


async def enqueue(conn: Conn, submission_id: int, gpu_type: str) -> int:
    """A queued job for the submission; wakes listening dispatchers when the transaction commits."""
    job_id: int = await conn.fetchval(
        """
        WITH job AS (INSERT INTO jobs (submission_id, gpu_type) VALUES ($1, $2) RETURNING id)
        SELECT id FROM job, pg_notify($3, $2)
        """,
        submission_id,
        gpu_type,
        QUEUE_CHANNEL,
    )
    return job_id


_CLAIM_SETS = """state = 'dispatched', attempts = j.attempts + 1, lease_owner = $2, lease_token = gen_random_uuid(),
    lease_until = now() + make_interval(secs => $3), runner = $4, dispatched_at = now()"""


# The order in which a GPU type's queue serves the modes, most urgent first. A `test` run is the quickest feedback
# (correctness only) and someone is waiting on it to go on; a `benchmark` run is the next step of the same loop;
# a `profile` run is a diagnosis its user waits on, but one that holds a runner longer; a `ranked` run only moves a
# board, which can wait the longest (a contest that needs its runs on time reserves a share of the pool instead,
# `contests.reserve_share`). Rate limits bound how much of the more urgent modes one user can queue, so they
# cannot hold the ranked queue back for long. The claim and the queue position both read this one constant
# (contract.names.MODE_PRIORITY, beside the list of modes).
assert sorted(MODE_PRIORITY) == sorted(MODES), "every mode has its place in the queue's order"
assert all(re.fullmatch("[a-z]+", mode) for mode in MODE_PRIORITY)  # they are formatted into SQL as literals


def _mode_rank(column: str) -> str:
    """SQL for the place of the mode in `column` in MODE_PRIORITY (1 = served first)."""
    modes = ", ".join(f"'{mode}'" for mode in MODE_PRIORITY)
    return f"array_position(ARRAY[{modes}]::text[], {column})"


# Every pick passes over a podium check that avoids the claiming runner ($4 in every claim), until it has waited
# AVOID_RUNNER_S. `{j}` is the jobs table's alias in the pick, if any.
_AVOIDED = (
    " AND ({j}avoid_runner IS NULL OR {j}avoid_runner <> $4"
    f" OR {{j}}created_at < now() - interval '{AVOID_RUNNER_S} seconds')"
)

# 1. The oldest ready re-run of the GPU type (a job `requeue` put back: it had its turn already, and lost it
#    through no fault of its user).
_RERUN_PICK = """SELECT * FROM (
        SELECT id, state FROM jobs
        WHERE state = 'queued' AND requeued AND gpu_type = $1 AND not_before <= now(){no_ranked}{avoided}
        ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED
    ) AS rerun"""

# A job of submission `s` counts for contest `c` (running now): a ranked run on one of its problems at the pinned
# version and on one of its targets, created since its start, by a user who may enter it (as the board counts them,
# core.store.contests._ENTERED, less the ban check: a banned user cannot submit).
_CONTEST_RUN = """j.gpu_type = $1 AND j.mode = 'ranked' AND s.id = j.submission_id AND s.created_at >= c.starts_at
        AND EXISTS (SELECT 1 FROM contest_problems cp WHERE cp.contest_id = c.id AND cp.problem_id = s.problem_id
                    AND cp.problem_version = s.problem_version)
        AND EXISTS (SELECT 1 FROM contest_targets ct WHERE ct.contest_id = c.id AND ct.gpu_type = s.gpu_type
                    AND ct.dtype = s.dtype)
        AND (c.visibility = 'public' OR EXISTS (SELECT 1 FROM contest_invitations i
                                                WHERE i.contest_id = c.id AND i.user_id = s.user_id))"""

# 2. The oldest ready job of a running contest that reserves a share of the pool (`contests.reserve_share`) and has
#    fewer of its runs in flight on this GPU type than that share of the type's runner slots ($5). Contests are few
#    and their in-flight runs at most the slots; the oldest run is read from `jobs_ranked_queue` from the contest's
#    start on, so only the ranked runs queued since then that are not the contest's are passed over (a job of the
#    contest is created after its submission, so none is missed). Left out of the statement when the caller knows no
#    slot count.
_RESERVED_PICK = f"""SELECT * FROM (WITH short AS MATERIALIZED (
        SELECT c.id, c.starts_at, c.visibility FROM contests c
        WHERE c.reserve_share IS NOT NULL AND c.cancelled_at IS NULL AND c.starts_at <= now() AND now() < c.ends_at
          AND EXISTS (SELECT 1 FROM contest_targets t WHERE t.contest_id = c.id AND t.gpu_type = $1)
          AND (SELECT count(*) FROM jobs j, submissions s
               WHERE j.state IN ('dispatched', 'running') AND {_CONTEST_RUN}) < c.reserve_share * $5::int
        ORDER BY c.starts_at, c.id
    )
    SELECT job.id, job.state FROM short c CROSS JOIN LATERAL (
        SELECT j.id, j.state FROM jobs j, submissions s
        WHERE j.state = 'queued' AND j.created_at >= c.starts_at AND j.not_before <= now() AND {_CONTEST_RUN}
          {_AVOIDED.format(j="j.")}
        ORDER BY j.created_at, j.id LIMIT 1 FOR UPDATE OF j SKIP LOCKED
    ) AS job
    LIMIT 1) AS reserved"""

# 3. For each mode in MODE_PRIORITY order, the oldest ready job of the mode of the user who waits longest: the users
#    with queued jobs of the mode are the rows of `queue_waiters` (V015, kept by triggers on jobs, and by the claim's
#    own statement for a claimed job: V028) whose count is above 0, in the claim's order: by their last turn on the GPU
#    type (never served first), then by how long they have waited. The users are sorted before the lateral lookup and
#    nothing sorts after it, so the nested loop stops at the first user with a job it can lock; SKIP LOCKED passes over
#    a user whose only ready job another dispatcher is taking. The first branch reads only the first WAITERS_AHEAD
#    users, which the planner takes from `queue_waiters_next` in order (one index probe for the user, one for the job);
#    a sort of every waiting user would cost a few milliseconds a claim with 1,000 of them. Only when none of those has
#    a ready job it can lock (all backing off, or being taken) does the second branch read them all.
WAITERS_AHEAD = 64
_MODE_WAITERS = """SELECT job.id, job.state FROM (
        SELECT user_id FROM queue_waiters
        WHERE gpu_type = $1 AND mode = '{mode}' AND queued > 0
        ORDER BY turn NULLS FIRST, since{limit}
    ) AS w CROSS JOIN LATERAL (
        SELECT id, state FROM jobs
        WHERE state = 'queued' AND gpu_type = $1 AND mode = '{mode}' AND user_id = w.user_id
          AND not_before <= now(){avoided}
        ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED
    ) AS job"""
_MODE_PICK = (
    "SELECT * FROM (("
    + _MODE_WAITERS.replace("{limit}", f" LIMIT {WAITERS_AHEAD}")
    + " LIMIT 1) UNION ALL ("
    + _MODE_WAITERS.replace("{limit}", "")
    + " LIMIT 1) LIMIT 1) AS {mode}_turn"
).replace("{avoided}", _AVOIDED.format(j=""))


@functools.cache
def _fair_pick(*, ranked: bool, reserve: bool) -> str:
    """The fair claim's choice: the branches above, in order, as one UNION ALL under LIMIT 1. An Append runs its
    branches one after the other and the LIMIT stops it at the first row, so a branch runs only when every branch
    before it found nothing. (Each branch is a subquery of its own: a locking clause may not sit on a UNION's
    member.) `ranked` False leaves every ranked job out; `reserve` adds the contest branch (parameter $5)."""
    rerun = _RERUN_PICK.format(no_ranked="" if ranked else " AND mode <> 'ranked'", avoided=_AVOIDED.format(j=""))
    branches = [rerun]
    if reserve and ranked:
        branches.append(_RESERVED_PICK)
    branches += [_MODE_PICK.format(mode=mode) for mode in MODE_PRIORITY if ranked or mode != "ranked"]
    return "\n    UNION ALL\n    ".join(branches) + "\n    LIMIT 1"


# A claim counts its job out of its user's `queue_waiters` row of the mode itself, in its own statement (V028: the
# dequeue trigger leaves claims alone), as the trigger did: only while the count is above 0.
_COUNT_OUT = """queued = CASE WHEN w.mode = m.mode AND w.queued > 0 THEN w.queued - 1 ELSE w.queued END,
        reruns = CASE WHEN w.mode = m.mode AND w.queued > 0 THEN greatest(w.reruns - m.requeued::int, 0)
                      ELSE w.reruns END"""
# The fair claim's steps: the claimed job's user takes the next turn on its GPU type (queue_turns, which a new row
# of the user's reads), and one UPDATE of the user's rows there writes the turn into each and counts the job out of
# its mode's: one version of each row a claim, and the rows locked in the key's order.
_CLAIM_STEPS = (
    (
        "turn",
        """INSERT INTO queue_turns (gpu_type, user_id, turn)
    SELECT gpu_type, user_id, nextval('queue_turn_seq') FROM moved
    ON CONFLICT (gpu_type, user_id) DO UPDATE SET turn = excluded.turn
    RETURNING gpu_type, user_id, turn""",
    ),
    (
        "waiting",
        f"""UPDATE queue_waiters w SET turn = t.turn, {_COUNT_OUT}
    FROM moved m JOIN turn t ON t.gpu_type = m.gpu_type AND t.user_id = m.user_id
    WHERE w.gpu_type = m.gpu_type AND w.user_id = m.user_id""",
    ),
)
# A job claimed by its id (a CLI running its own) takes no turn: it is counted out only.
_CLAIM_JOB_STEPS = (
    (
        "waiting",
        f"""UPDATE queue_waiters w SET {_COUNT_OUT}
    FROM moved m WHERE w.gpu_type = m.gpu_type AND w.user_id = m.user_id AND w.mode = m.mode""",
    ),
)


# The claim goes ahead only while the runner has a free slot by the store's count (V016 `runner_has_room`), whichever
# dispatcher sent its other jobs. The room is read once, before the pick locks any job, and answered beside the lease
# (`claim_for_runner`): a claim that finds nothing tells the dispatcher at once whether the queue was empty or the
# runner full, with no second statement on every idle pass.
_ROOM = "room AS MATERIALIZED (SELECT runner_has_room($4) AS ok)"
_ROOM_GATE = "SELECT * FROM ({pick}) AS fair WHERE (SELECT ok FROM room)"


async def runner_has_room(conn: Conn, runner: str) -> bool:
    """Whether the runner called `runner` has a free slot by the store's count of its jobs in flight (always, for
    a runner the fleet does not list): a claim for it that found nothing may have found it full."""
    return bool(await conn.fetchval("SELECT runner_has_room($1)", runner))


async def claim_next(
    conn: Conn,
    gpu_type: str,
    owner: str,
    lease_s: float,
    runner: str,
    *,
    ranked: bool = True,
    capacity: int | None = None,
) -> Lease | None:
    """The next ready queued job for `gpu_type` in the fair order, dispatched to `runner`; None when no job is
    ready. The order: the oldest ready re-run; a reserving contest's oldest job while it is short of its share of
    `capacity` (the GPU type's runner slots; None: no share applies); then the modes in MODE_PRIORITY order, and
    within a mode round robin over users. `ranked` False (a quarantined runner) never gets a ranked job. None too
    while `runner` has no free slot by the store's count (`runner_has_room`): another dispatcher filled it."""
    claim = await claim_for_runner(conn, gpu_type, owner, lease_s, runner, ranked=ranked, capacity=capacity)
    return claim.lease


@dataclass(frozen=True)
class Claim:
    """What a claim for a runner found: the job's lease, or None with the reason, `full` (the runner had no free
    slot by the store's count) or not (no job was ready)."""

    lease: Lease | None
    full: bool
    spec: JobSpec | None = None
    """What the runner is to be sent for the job, read in the claim's statement (None when nothing was claimed)."""


# A job's spec, joined to the job's row called `moved`: the claim's answer (the dispatcher posts it at once) and
# `job_spec` (a re-run or a re-attached job) read it so.
_SPEC_JOINS = """LEFT JOIN submissions s ON s.id = moved.submission_id
    LEFT JOIN problems p ON p.id = s.problem_id
    LEFT JOIN problem_versions v ON v.problem_id = s.problem_id AND v.version = s.problem_version
    LEFT JOIN sources src ON src.sha256 = s.source_sha256"""
_SPEC_COLUMNS = """p.slug AS spec_slug, s.problem_version AS spec_problem_version, v.source AS spec_problem_source,
    s.language AS spec_language, s.file_name AS spec_file_name, src.body AS spec_source, s.dtype AS spec_dtype,
    s.mode AS spec_mode, s.profile_case AS spec_profile_case, s.world_size AS spec_world_size"""


def _claimed_spec(found: dict[str, object]) -> JobSpec:
    spec = {k.removeprefix("spec_"): found.pop(k) for k in [k for k in found if k.startswith("spec_")]}
    return JobSpec(job_id=found["job_id"], submission_id=found["submission_id"], **spec)  # type: ignore[arg-type]


@functools.cache
def _claim_sql(*, ranked: bool, reserve: bool) -> str:
    """The claim's statement for `claim_for_runner`, built once per kind (it is the dispatcher's most frequent)."""
    return _move_sql(
        _ROOM_GATE.format(pick=_fair_pick(ranked=ranked, reserve=reserve)),
        _CLAIM_SETS,
        before=_ROOM,
        steps=_CLAIM_STEPS,
        # One row even when nothing moved, so that the room is answered either way.
        answer=f"SELECT (SELECT ok FROM room) AS room, moved.*, {_SPEC_COLUMNS} "
        f"FROM (SELECT 1) AS one LEFT JOIN moved ON true {_SPEC_JOINS}",
    )


async def claim_for_runner(
    conn: Conn,
    gpu_type: str,
    owner: str,
    lease_s: float,
    runner: str,
    *,
    ranked: bool = True,
    capacity: int | None = None,
) -> Claim:
    """`claim_next`, answering also whether a claim that found nothing found the runner full, and the claimed job's
    spec, in one statement."""
    if capacity is not None and capacity < 0:
        raise ValueError(f"capacity {capacity} is not a number of runner slots; pass 0 or more, or None")
    reserve = capacity is not None
    sql = _claim_sql(ranked=ranked, reserve=reserve)
    args: tuple[object, ...] = (gpu_type, owner, lease_s, runner) + ((capacity,) if reserve and ranked else ())
    row = await conn.fetchrow(sql, *args)
    assert row is not None, "the statement answers one row, moved or not"
    if row["job_id"] is None:
        return Claim(None, full=not row["room"])
    found = dict(row)
    found.pop("room")
    spec = _claimed_spec(found)
    return Claim(_lease(found), full=False, spec=spec)


async def claim_job(conn: Conn, job_id: int, owner: str, lease_s: float, runner: str) -> Lease | None:
    """Dispatch this queued job (a CLI runs its own job at once); None when it is not queued or is locked."""
    picked = "SELECT id, state FROM jobs WHERE id = $1 AND state = 'queued' FOR UPDATE SKIP LOCKED"
    row = await conn.fetchrow(_move_sql(picked, _CLAIM_SETS, steps=_CLAIM_JOB_STEPS), job_id, owner, lease_s, runner)
    return _lease(row) if row else None


async def take_over(
    conn: Conn,
    owner: str,
    lease_s: float,
    *,
    include_own: bool,
    limit: int = 100,
    exclude: Sequence[int] = (),
) -> list[Lease]:
    """Leases that lapsed (their dispatcher died), plus `owner`'s own when it restarts; each gets a new token.

    `exclude` names jobs the caller is still running: their leases lapsed only because the store was out of reach
    for a while, and their tasks renew them (their tokens are still good) as soon as it is back."""
    picked = """SELECT id, state FROM jobs WHERE state IN ('dispatched', 'running')
        AND (lease_until < now() OR ($3 AND lease_owner = $1)) AND id <> ALL($5::bigint[])
        ORDER BY id LIMIT $4 FOR UPDATE SKIP LOCKED"""
    sets = "lease_owner = $1, lease_token = gen_random_uuid(), lease_until = now() + make_interval(secs => $2)"
    rows = await conn.fetch(_move_sql(picked, sets, "'taken over'"), owner, lease_s, include_own, limit, list(exclude))
    return [_lease(r) for r in rows]


async def claim_stranded(
    conn: Conn, gpu_type: str, owner: str, lease_s: float, waited_s: float, limit: int = 100
) -> list[Lease]:
    """Queued jobs of `gpu_type` created more than `waited_s` ago, leased to `owner` so that it can fail them (no
    runner of their type has answered for that long). Their attempt count is left alone: no runner tried them."""
    picked = """SELECT id, state FROM jobs WHERE state = 'queued' AND gpu_type = $1
        AND created_at < now() - make_interval(secs => $4) ORDER BY id LIMIT $5 FOR UPDATE SKIP LOCKED"""
    sets = """state = 'dispatched', lease_owner = $2, lease_token = gen_random_uuid(),
        lease_until = now() + make_interval(secs => $3), runner = NULL"""
    rows = await conn.fetch(_move_sql(picked, sets, "'no runner answers'"), gpu_type, owner, lease_s, waited_s, limit)
    return [_lease(r) for r in rows]


def _fenced(states: str) -> str:
    return f"SELECT id, state FROM jobs WHERE id = $1 AND lease_token = $2 AND state IN ({states}) FOR UPDATE"


# The job's submission moves with it (as `submissions.set_status` moves it), in the same statement. $3: how long ago
# the runner started the job (its first event), in seconds.
_STARTED_AT = "coalesce({alias}.started_at, now() - make_interval(secs => $3))"
_SUBMISSION_RUNNING = f"""UPDATE submissions s SET status = 'running', started_at = {_STARTED_AT.format(alias="s")}
    FROM moved WHERE s.id = moved.submission_id AND NOT moved.podium_check"""


async def set_running(conn: Conn, lease: Lease, started_s: float = 0.0) -> bool:
    """The runner started the job `started_s` seconds ago: the job and its submission move to `running`, in one
    statement (lock order as everywhere, the job's row before its submission's). False when this lease no longer
    holds the job, or it is running already.

    A dispatcher marks a job running only once it has run for a moment (`core.dispatch.job_run.RUNNING_AFTER_S`):
    a job that ends sooner goes from `dispatched` to its end in one statement, which logs its run too
    (`finish_with_result`)."""
    row = await conn.fetchrow(
        _move_sql(
            _fenced("'dispatched'"),
            f"state = 'running', started_at = {_STARTED_AT.format(alias='j')}",
            after=_SUBMISSION_RUNNING,
        ),
        lease.job_id,
        lease.token,
        started_s,
    )
    return row is not None


async def extend(conn: Conn, lease: Lease, lease_s: float) -> bool:
    """Push the lease's expiry out; False when it was lost."""
    status = await conn.execute(
        """UPDATE jobs SET lease_until = now() + make_interval(secs => $3)
        WHERE id = $1 AND lease_token = $2 AND state IN ('dispatched', 'running')""",
        lease.job_id,
        lease.token,
        lease_s,
    )
    return status != "UPDATE 0"


async def requeue(conn: Conn, lease: Lease, reason: str, delay_s: float, *, refund: bool = False) -> bool:
    """Put the job back in the queue after `delay_s`. False when this lease no longer holds it.

    `refund` takes back the attempt this dispatch counted: the runner never got the job (it did not answer)."""
    sets = """state = 'queued', lease_owner = NULL, lease_token = NULL, lease_until = NULL, runner = NULL,
        not_before = now() + make_interval(secs => $3), last_error = $4, requeued = true,
        attempts = CASE WHEN $5 THEN greatest(j.attempts - 1, 0) ELSE j.attempts END"""
    row = await conn.fetchrow(
        _move_sql(_fenced("'dispatched', 'running'"), sets, "$4"), lease.job_id, lease.token, delay_s, reason, refund
    )
    return row is not None


_FINISH_SETS = """state = $3, lease_owner = NULL, lease_token = NULL, lease_until = NULL, finished_at = now(),
    last_error = $4"""


def _check_final(state: JobState) -> None:
    if state not in FINAL_STATES:
        raise ValueError(f"{state!r} is not a final job state")


async def finish(conn: Conn, lease: Lease, state: JobState, reason: str | None = None) -> bool:
    """Move the job to a final state. False when this lease no longer holds it: the caller must drop its result."""
    _check_final(state)
    row = await conn.fetchrow(
        _move_sql(_fenced("'dispatched', 'running'"), _FINISH_SETS, "$4"), lease.job_id, lease.token, state, reason
    )
    return row is not None


async def finish_with_submission(
    conn: Conn, lease: Lease, state: JobState, reason: str | None = None
) -> Submission | None:
    """`finish`, answering the job's submission with its row locked until the transaction ends, in one statement
    (what storing a result reads next; lock order as everywhere, the job's row before its submission's). None when
    this lease no longer holds the job."""
    _check_final(state)
    answer = SUBMISSION_SELECT + " JOIN moved ON moved.submission_id = s.id FOR UPDATE OF s"
    sql = _move_sql(_fenced("'dispatched', 'running'"), _FINISH_SETS, "$4", answer=answer)
    row = await conn.fetchrow(sql, lease.job_id, lease.token, state, reason)
    return Submission(**row) if row else None


# A result is the submission's when it answers for the problem, version, dtype, mode and language the submission
# asked for: `finish_with_result` stores it only then (core.results records any other as an error of the service).
_RESULT_FITS = """SELECT j.id, j.state FROM jobs j
    JOIN submissions s ON s.id = j.submission_id JOIN problems p ON p.id = s.problem_id
    WHERE j.id = $1 AND j.lease_token = $2 AND j.state IN ('dispatched', 'running') AND NOT j.podium_check
      AND (p.slug, s.problem_version, s.dtype, s.mode, s.language) = ($5, $6, $7, $8, $9)
    FOR UPDATE OF j"""
# $1-$9 above; $10 whether the user's rate-limit token goes back; $11 how long ago the runner started a job not yet
# marked running (NULL: it was marked, or it is not known); the outcome's values from $12 on.
_RESULT_ARGS = 11
# A job that ends while still `dispatched` ran all the same: its move to `running` is logged before its end, in the
# order they happened (an Append runs its branches in order, so the first takes the lower id).
_RESULT_STARTED = "now() - make_interval(secs => $11::float8)"
_RESULT_LOGGED = """SELECT job_id, 'dispatched', 'running', attempts, owner, NULL FROM moved
        WHERE from_state = 'dispatched' AND $11::float8 IS NOT NULL
    UNION ALL
    SELECT job_id, CASE WHEN from_state = 'dispatched' AND $11::float8 IS NOT NULL THEN 'running' ELSE from_state END,
           state, attempts, owner, $4 FROM moved"""


@dataclass(frozen=True)
class FittingResult:
    """A finished job's result as `finish_with_result` takes it: the verdict for its submission, whether the user's
    rate-limit token goes back (the service failed the run), and its case rows."""

    state: JobState
    note: str | None
    answers_for: tuple[str, int, str, str, str]
    """The (problem slug, version, dtype, mode, language) the runner answered for."""
    outcome: Outcome
    give_back: bool
    tests: list[TestOutcome]
    timings: list[CaseTiming]
    started_s: float | None = None
    """How long ago the runner started the job, when the dispatcher has not marked it running (`set_running`)."""


async def finish_with_result(conn: Conn, lease: Lease, result: FittingResult) -> Submission | None:
    """Store a finished job's result in one statement: the job moves to its final state, its submission takes the
    outcome, its case rows are written and the rate-limit token is given back where the service failed the run.
    Answers the submission as it now is; None, changing nothing, when this lease no longer holds the job, when it
    is a podium check, or when the result answers for another job (`_RESULT_FITS`): the caller then stores it the
    long way (`finish_with_submission`), which tells those apart.

    One statement is one transaction: the usual result (no board to refresh, no profile) costs one round trip, in
    place of five (BEGIN, the finish, the outcome, the case rows, COMMIT). Lock order as everywhere: the job's row
    (in `picked`) before its submission's (in `outcome`). A job still `dispatched` (its run was too short to be
    marked running) gets its start and its move to `running` here too, from `result.started_s`."""
    _check_final(result.state)
    row = await conn.fetchrow(
        _result_sql(),
        lease.job_id,
        lease.token,
        result.state,
        result.note,
        *result.answers_for,
        result.give_back,
        result.started_s,
        *submissions.outcome_args(lease.job_id, result.outcome),
        *submissions.case_arrays(result.tests, result.timings),
    )
    return Submission(**row) if row else None


@functools.cache
def _result_sql() -> str:
    """`finish_with_result`'s statement, built once."""
    first_case = _RESULT_ARGS + submissions.OUTCOME_ARGS + 1
    steps = (
        (
            "outcome",
            f"""UPDATE submissions s SET {submissions.outcome_sets(_RESULT_ARGS + 1)},
                started_at = coalesce(s.started_at, {_RESULT_STARTED})
            FROM moved, problems p WHERE s.id = moved.submission_id AND p.id = s.problem_id
            RETURNING {submissions.SUBMISSION_COLUMNS}""",
        ),
        (
            "given_back",
            "UPDATE rate_limits r SET tokens = r.tokens + 1 FROM outcome o "
            "WHERE $10::boolean AND r.user_id = o.user_id AND r.mode = o.mode",
        ),
        ("cases", submissions.case_rows_sql(first_case, "moved.job_id", "moved")),
    )
    sets = f"{_FINISH_SETS}, started_at = coalesce(j.started_at, {_RESULT_STARTED})"
    return _move_sql(_RESULT_FITS, sets, steps=steps, logged=_RESULT_LOGGED, answer="SELECT * FROM outcome")


@dataclass(frozen=True)
class QueuedJob:
    """One of a user's queued jobs, as `/quota` lists them."""

    job_id: int
    submission_id: int
    slug: str
    mode: str
    gpu_type: str


async def queued_jobs_of(conn: Conn, user_id: int, limit: int) -> tuple[int, list[QueuedJob]]:
    """How many jobs the user has queued, and the first `limit` of them roughly in the order they go out: re-runs,
    then by mode (MODE_PRIORITY), then oldest first (`start_estimate` gives each its real place)."""
    rows = await conn.fetch(
        f"""
        SELECT j.id AS job_id, j.submission_id, p.slug, j.mode, j.gpu_type, count(*) OVER () AS total
        FROM jobs j JOIN submissions s ON s.id = j.submission_id JOIN problems p ON p.id = s.problem_id
        WHERE j.user_id = $1 AND j.state = 'queued'
        ORDER BY j.requeued DESC, {_mode_rank("j.mode")}, j.id
        LIMIT $2
        """,
        user_id,
        limit,
    )
    total = int(rows[0]["total"]) if rows else 0
    return total, [QueuedJob(**{k: v for k, v in r.items() if k != "total"}) for r in rows]


async def get_job(conn: Conn, job_id: int) -> Job | None:
    row = await conn.fetchrow(
        """SELECT id, submission_id, gpu_type, state, attempts, lease_owner, runner, last_error, created_at,
        finished_at FROM jobs WHERE id = $1""",
        job_id,
    )
    return Job(**row) if row else None


async def jobs_of(conn: Conn, submission_id: int) -> list[Job]:
    rows = await conn.fetch(
        """SELECT id, submission_id, gpu_type, state, attempts, lease_owner, runner, last_error, created_at,
        finished_at FROM jobs WHERE submission_id = $1 ORDER BY id""",
        submission_id,
    )
    return [Job(**r) for r in rows]


async def transitions(conn: Conn, job_id: int) -> list[Transition]:
    rows = await conn.fetch(
        "SELECT from_state, to_state, attempt, owner, note FROM job_transitions WHERE job_id = $1 ORDER BY id",
        job_id,
    )
    return [Transition(**r) for r in rows]


async def job_spec(conn: Conn, job_id: int) -> JobSpec | None:
    """What the runner is sent for the job (the claim reads the same, `Claim.spec`); None for no such job."""
    row = await conn.fetchrow(
        f"SELECT moved.id AS job_id, moved.submission_id, {_SPEC_COLUMNS} FROM jobs moved {_SPEC_JOINS} "
        "WHERE moved.id = $1",
        job_id,
    )
    return _claimed_spec(dict(row)) if row else None


# The place of queued job `job` in the fair order, computed as if the queue stood still (no new jobs, no backoff, no
# contest reserve): the re-runs ahead of it (all of them, for a job that is not one), then every queued job of a
# mode served before its own (MODE_PRIORITY), then round robin within its mode in the claim's user order
# (`queue_waiters_next`: last turn, never served first, then how long they have waited). Its user's k-th job of the
# mode goes out in round k. Before it go k jobs (or all, if fewer) of the mode of each user whose turn comes first,
# k - 1 (or all) of each user whose turn comes after, and its user's own k - 1. A job not queued has place 0.
#
# It reads the waiting users (`queue_waiters`, one row per user and mode, with how many of their queued jobs are
# re-runs), not the queued jobs, and at most PLACE_CAP of them per part, so that a burst of thousands of
# submissions, each told its place, costs each submission a bounded read: a place of PLACE_CAP or more is given as
# PLACE_CAP ("200+"). For the usual first job of a user in its mode (k = 1), the users ahead are one range of
# that index. The queued jobs are read only for a user with several of the mode queued (their k), unless `newest` says
# the job is its user's newest (a submission's own receipt), and for a re-run's place among the re-runs.
# 200: past that a place is a long wait on most pools, and the read grows with the cap (a burst of 10,000
# submissions at 10 million rows went at 638 a second with 1,000, at 775 with 200: bench/store_10m.md).
PLACE_CAP = 200
_NO_JOB_ID = 9223372036854775807  # past every job id: a user never served waits behind every user never served
_EARLIER_MODES = "(ARRAY[{}]::text[])[1:(SELECT mode_rank FROM me) - 1]".format(
    ", ".join(f"'{m}'" for m in MODE_PRIORITY)
)
_POSITION_CTES = f"""
job AS MATERIALIZED (
    -- By its key alone: with the state beside it, the planner may read the small partial index of live jobs,
    -- every entry of it, since its statistics see hardly any job queued.
    SELECT id, gpu_type, user_id, mode, requeued, state FROM jobs WHERE id = {{job}}
),
me AS MATERIALIZED (
    SELECT j.id, j.gpu_type, j.user_id, j.mode, j.requeued, {_mode_rank("j.mode")} AS mode_rank, w.turn,
           coalesce(w.since, j.id) AS since, coalesce(w.queued - w.reruns, 1) AS own
    FROM job j LEFT JOIN queue_waiters w ON w.gpu_type = j.gpu_type AND w.user_id = j.user_id AND w.mode = j.mode
    WHERE j.state = 'queued'
),
mine AS (
    -- The job is its user's k-th of the mode. The order is that of jobs_fair_queue, the partial index meant: the
    -- planner would otherwise read the partial index of live jobs whole (see `job`).
    SELECT CASE WHEN me.own <= 1 OR {{newest}}::boolean THEN greatest(me.own, 1) ELSE (
        SELECT count(*) FROM (
            SELECT 1 FROM jobs q
            WHERE q.state = 'queued' AND q.gpu_type = me.gpu_type AND q.mode = me.mode AND q.user_id = me.user_id
              AND q.id <= me.id AND NOT q.requeued
            ORDER BY q.gpu_type, q.mode, q.user_id, q.id
            LIMIT {PLACE_CAP}) AS k) END AS k
    FROM me
),
reruns AS (
    SELECT coalesce(sum(w.reruns), 0) AS n FROM queue_waiters w
    WHERE w.gpu_type = (SELECT gpu_type FROM me) AND w.reruns > 0
),
earlier AS (
    SELECT coalesce(sum(w.queued - w.reruns), 0) AS n FROM (
        SELECT w.queued, w.reruns FROM queue_waiters w
        WHERE w.gpu_type = (SELECT gpu_type FROM me) AND w.mode = ANY({_EARLIER_MODES}) AND w.queued > 0
        LIMIT {PLACE_CAP}
    ) AS w
),
ahead AS (
    -- k = 1: the users whose turn comes first, one range each of queue_waiters_next (never served, then served);
    -- me's values as scalar subqueries, so that they bound the index scans rather than filter them.
    SELECT (SELECT count(*) FROM (
                SELECT 1 FROM queue_waiters w
                WHERE w.gpu_type = (SELECT gpu_type FROM me) AND w.mode = (SELECT mode FROM me) AND w.queued > 0
                  AND w.turn IS NULL
                  AND w.since < (SELECT CASE WHEN turn IS NULL THEN since ELSE {_NO_JOB_ID} END FROM me)
                  AND w.user_id <> (SELECT user_id FROM me) AND w.queued > w.reruns
                LIMIT {PLACE_CAP}) AS never)
         + (SELECT count(*) FROM (
                SELECT 1 FROM queue_waiters w
                WHERE w.gpu_type = (SELECT gpu_type FROM me) AND w.mode = (SELECT mode FROM me) AND w.queued > 0
                  AND (w.turn, w.since) < ((SELECT turn FROM me), (SELECT since FROM me))
                  AND w.user_id <> (SELECT user_id FROM me) AND w.queued > w.reruns
                LIMIT {PLACE_CAP}) AS served) AS n
),
rounds AS (
    -- k > 1: every waiting user of the mode counts, up to k jobs if its turn comes first, k - 1 if after.
    SELECT coalesce(sum(least(o.n, CASE WHEN (coalesce(o.turn, 0), o.since) < (coalesce(me.turn, 0), me.since)
                                     THEN mine.k ELSE mine.k - 1 END)), 0) AS n
    FROM (
        SELECT w.queued - w.reruns AS n, w.turn, w.since FROM queue_waiters w
        WHERE w.gpu_type = (SELECT gpu_type FROM me) AND w.mode = (SELECT mode FROM me) AND w.queued > w.reruns
          AND w.user_id <> (SELECT user_id FROM me) AND (SELECT k FROM mine) > 1
        LIMIT {PLACE_CAP}
    ) AS o, me, mine
),
place AS (
    SELECT least(CASE WHEN me.requeued THEN (
                          SELECT count(*) FROM jobs q
                          WHERE q.state = 'queued' AND q.requeued AND q.gpu_type = me.gpu_type AND q.id <= me.id)
                      ELSE reruns.n + earlier.n + mine.k
                           + CASE WHEN mine.k > 1 THEN rounds.n ELSE ahead.n END END, {PLACE_CAP}) AS position
    FROM me, mine, reruns, earlier, ahead, rounds
)"""


def _position_ctes(job: str = "$1", newest: str = "$2") -> str:
    """The CTEs of `_POSITION_CTES` for the job `job` names (a parameter or a column), `newest` a boolean."""
    return _POSITION_CTES.format(job=job, newest=newest)


# A new job this near the head of its queue wakes the dispatchers (`places_and_wake`).
WAKE_PLACES = 16

# Each new job's place, in a subquery of its own (OFFSET 0 keeps the planner from merging it into the outer query,
# which would copy the place's subquery into each of its uses and compute it twice).
_PLACES = f"""
SELECT p.position, CASE WHEN p.position <= {WAKE_PLACES} OR p.reruns > 0 THEN pg_notify($3, n.gpu_type) END
FROM unnest($1::bigint[], $2::text[]) WITH ORDINALITY AS n(job_id, gpu_type, i)
CROSS JOIN LATERAL (
    WITH {_position_ctes(job="n.job_id", newest="true")}
    SELECT coalesce((SELECT position FROM place), 0) AS position, (SELECT n FROM reruns) AS reruns OFFSET 0
) AS p
ORDER BY n.i
"""


async def places_and_wake(conn: Conn, new_jobs: Sequence[tuple[int, str]]) -> list[int]:
    """The places of new jobs, each given as (job id, GPU type), in that order (as `queue_position`), and the
    dispatchers' wake-up when one may be idle, in one statement, sent after the submissions' own statement
    committed.

    The wake-up goes out only for a job near the head of its queue (place WAKE_PLACES or less; 0: already taken),
    or one behind re-runs, which may be waiting out a backoff. A dispatcher stops claiming with a slot free only
    when it finds the queue empty; so behind more jobs than a few claims in flight at once, whichever dispatcher
    takes the jobs ahead looks for the next in the same pass, and finds this one, committed before its place was
    read. So a burst of submissions sends a few notifications, not one each: a notification gives its statement a
    transaction id and so a commit to flush to disk, and it holds PostgreSQL's database-wide notification lock
    meanwhile (sent from the submit statement itself, it held every submit back behind the one before: 300-400
    submissions a second at 10 million rows on 2 cores, against 570-600 without; bench/results/store_10m.md). A
    process that dies between the two statements loses only the wake-up: dispatchers look for queued jobs every few
    seconds anyway."""
    ids, gpu_types = [job_id for job_id, _ in new_jobs], [gpu_type for _, gpu_type in new_jobs]
    rows = await conn.fetch(_PLACES, ids, gpu_types, QUEUE_CHANNEL)
    return [int(r["position"]) for r in rows]


async def queue_position(conn: Conn, job_id: int) -> int:
    """1 for the next job to dispatch on its GPU type, 2 behind it, ...; 0 once it has left the queue. The place
    is in the fair order (`_POSITION_CTES`), as if no job joined or waited out a backoff meanwhile."""
    value: int | None = await conn.fetchval(f"WITH {_position_ctes()} SELECT position FROM place", job_id, False)
    return int(value or 0)


# The jobs of a GPU type in flight (dispatched or running): those holding a lease token (jobs_check), counted from
# the index of those alone (V022). Written `state IN ('dispatched', 'running')`, the count was read from the index
# of every live job, queued ones too, whenever that index's statistics called it empty.
_IN_FLIGHT = "r.lease_token IS NOT NULL AND r.gpu_type = {gpu_type}"

# How many of a GPU type's latest finished jobs the start estimate takes the median of.
ESTIMATE_WINDOW = 50


@dataclass(frozen=True)
class QueueEstimate:
    position: int  # 1 for the next job to dispatch on its GPU type; 0 once it has left the queue
    in_flight: int  # jobs of its GPU type dispatched or running now
    median_job_s: float | None  # of the latest finished jobs of its GPU type; None before any finished

    @property
    def start_in_s(self) -> float | None:
        """When the job should start: the jobs ahead of it and itself, each a median job, shared by the jobs in
        flight (with a queue, every slot of the type is busy, so their count is the type's parallelism)."""
        if self.position == 0 or self.median_job_s is None:
            return None
        return self.position * self.median_job_s / max(self.in_flight, 1)


async def start_estimate(conn: Conn, job_id: int) -> QueueEstimate:
    """The queued job's place, and what the latest jobs of its GPU type took; position 0 once it left the queue."""
    row = await conn.fetchrow(
        f"""
        WITH {_position_ctes()},
        recent AS (
            SELECT extract(epoch FROM j.finished_at - j.started_at)::float8 AS seconds
            FROM jobs j, me
            WHERE j.gpu_type = me.gpu_type AND j.finished_at IS NOT NULL AND j.started_at IS NOT NULL
            ORDER BY j.finished_at DESC
            LIMIT $3
        )
        SELECT
            coalesce((SELECT position FROM place), 0) AS position,
            (SELECT count(*) FROM jobs r, me WHERE {_IN_FLIGHT.format(gpu_type="me.gpu_type")}) AS in_flight,
            (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds) FROM recent) AS median_job_s
        """,
        job_id,
        False,
        ESTIMATE_WINDOW,
    )
    return QueueEstimate(int(row["position"]), int(row["in_flight"]), row["median_job_s"])


async def estimate_at(conn: Conn, gpu_type: str, position: int) -> QueueEstimate:
    """The start estimate of a job whose place is known (a new submission's receipt has it): what the latest jobs
    of `gpu_type` took, and how many run now."""
    row = await conn.fetchrow(
        f"""
        SELECT (SELECT count(*) FROM jobs r WHERE {_IN_FLIGHT.format(gpu_type="$1")}) AS in_flight,
               (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds) FROM (
                    SELECT extract(epoch FROM j.finished_at - j.started_at)::float8 AS seconds
                    FROM jobs j
                    WHERE j.gpu_type = $1 AND j.finished_at IS NOT NULL AND j.started_at IS NOT NULL
                    ORDER BY j.finished_at DESC
                    LIMIT $2) AS recent) AS median_job_s
        """,
        gpu_type,
        ESTIMATE_WINDOW,
    )
    return QueueEstimate(position, int(row["in_flight"]), row["median_job_s"])


async def count_by_state(conn: Conn) -> dict[str, int]:
    rows = await conn.fetch("SELECT state, count(*) AS n FROM jobs GROUP BY state")
    return {r["state"]: r["n"] for r in rows}


async def withdraw(conn: Conn, job_id: int, reason: str) -> bool:
    """End a job that has not finished, whoever holds it: its submitter withdrew it (Ctrl-C on `arena submit`).

    The job becomes `failed` with `reason`, its lease is void (a dispatcher still following it can change
    nothing), and no queue or sweep picks it up again. False when it had already reached a final state.
    """
    picked = f"SELECT id, state FROM jobs WHERE id = $1 AND state IN {LIVE_STATES!r} FOR UPDATE"
    sets = """state = 'failed', lease_owner = NULL, lease_token = NULL, lease_until = NULL, finished_at = now(),
        last_error = $2"""
    row = await conn.fetchrow(_move_sql(picked, sets, "$2"), job_id, reason)
    return row is not None
