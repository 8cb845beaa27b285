"""The names every layer agrees on, each listed once: dtypes, languages, modes, timing methods, score metrics and
statuses.

The Literal types are for pydantic (`contract.wire` re-exports them) and for discord.py's choices; the tuples, read
off the Literals, are for argparse, messages and membership checks. The store's CHECK constraints spell the same
names in SQL: `tests/store/test_names_in_sql.py` parses the migrations and fails when the two disagree, so a new
name is added here and in a migration together. `problems/` may not import the runner: its `DTYPES` and
`STARTER_LANGUAGES` are checked against these lists instead (`tests/test_architecture.py`).

Imports nothing of the project, so that the core, the front ends and every process of the runner may import it.
"""

from __future__ import annotations

from typing import Literal, get_args

# The element types a job, a board and a contest target name (a problem's real types may differ: its `dtypes` are
# these keys).
DType = Literal["float32", "float16", "bfloat16"]
Language = Literal["cuda", "python", "triton"]
# A board's language filter: every language, or one of them.
LanguageFilter = Literal["any", Language]
Mode = Literal["test", "benchmark", "ranked", "profile"]
# How a case is timed: each method ranks on a board of its own.
Method = Literal["arena", "seed", "cpu"]
ScoreMetric = Literal["gflops", "gbps"]
# A finished run's verdict.
SubmissionStatus = Literal["passed", "failed", "error"]
# A submission's status in the store: waiting, being run, or its latest run's verdict.
StoredStatus = Literal["queued", "running", SubmissionStatus]
# A job's place in the service's dispatch queue (the store's jobs.state, the API's job events). A runner daemon's
# own queue has states of its own (`contract.wire.RunnerJobState`): a job there is never dispatched, failed or errored.
JobState = Literal["queued", "dispatched", "running", "done", "failed", "error"]
# An event of a submission as its owner follows it (core/submit/events.py, the API's event stream, the CLI).
SubmissionEventType = Literal["submitted", "queue", "dispatched", "running", "requeued", "case", "result"]
# What a finished case of a running job was: verified, timed, or a profile's step.
CasePhase = Literal["test", "benchmark", "profile"]

# The one line every front end shows for a case timed with the host's part of each call included
# (CaseTiming.host_bound; runner/judge/case_protocol.py says when).
HOST_BOUND_LINE = "host-bound: timed with the host's part of each call included"

DTYPES: tuple[DType, ...] = get_args(DType)
LANGUAGES: tuple[Language, ...] = get_args(Language)
ANY_LANGUAGE: LanguageFilter = "any"
LANGUAGE_FILTERS: tuple[LanguageFilter, ...] = get_args(LanguageFilter)
MODES: tuple[Mode, ...] = get_args(Mode)
# A runner's sandbox levels, weakest first (runner/host/sandbox.py: SandboxLevel; the fleet's pool check).
SANDBOX_LEVELS: tuple[str, ...] = ("none", "network", "full")
# What each mode does, in the words a competitor chooses by: the bot's choices, the editor's menu and the CLI's
# help all show these (a Discord choice's name holds 100 characters, "mode: " included).
MODE_DESCRIPTIONS: dict[Mode, str] = {
    "test": "verify only",
    "benchmark": "verify and time",
    "ranked": "timed on a secret seed, on the leaderboard",
    "profile": "verify, then one case once under Nsight Compute; never ranked",
}
DEFAULT_MODE: Mode = "benchmark"
# The dtype a submission, a board or a starter takes when none is named.
DEFAULT_DTYPE: DType = "float32"
JOB_STATES: tuple[JobState, ...] = get_args(JobState)
SUBMISSION_EVENT_TYPES: tuple[SubmissionEventType, ...] = get_args(SubmissionEventType)
CASE_PHASES: tuple[CasePhase, ...] = get_args(CasePhase)
# The order in which a GPU type's queue serves the modes, most urgent first (core/store/jobs.py says why).
MODE_PRIORITY: tuple[Mode, ...] = ("test", "benchmark", "profile", "ranked")
METHODS: tuple[Method, ...] = get_args(Method)
# A CPU runner times with a monotonic clock whatever the job asked for; a job asks for one of the others.
CPU_METHOD: Method = "cpu"
GPU_METHODS: tuple[Method, ...] = tuple(method for method in METHODS if method != CPU_METHOD)
SCORE_METRICS: tuple[ScoreMetric, ...] = get_args(ScoreMetric)
SUBMISSION_STATUSES: tuple[SubmissionStatus, ...] = get_args(SubmissionStatus)
STORED_STATUSES: tuple[StoredStatus, ...] = get_args(StoredStatus)


def rank_pool(pool: str, world_size: int) -> str:
    """The queue and board key of a job on `world_size` ranks of the pool `pool`: the pool itself for one device,
    `<pool>x<N>` for a slot of N ranks (`cpux2`), so that each world size has its own queue and its own board."""
    return pool if world_size == 1 else f"{pool}x{world_size}"
