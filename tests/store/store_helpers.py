"""Building blocks for the store tests: problems, submit requests, and finishing a job with a chosen score.

`finish` goes through the real path a dispatcher takes (claim the job, record the result under the lease);
only the runner's verdict is made up, so that ranking tests can choose scores.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg

from contract.wire import CaseTiming, ErrorInfo, JobEvent, JobRequest, SubmissionResult, TestOutcome
from core.contests import GpuCatalog
from core.moderation import Actor
from core.problems import ProblemSpec, sync_problem
from core.results import record_result
from core.settings import RateLimitSettings
from core.store import jobs, submissions
from core.store.problems import ProblemVersion
from core.submit.intake import SubmitReceipt, SubmitRequest, submit
from core.submit.uploads import check_upload
from runner.gpus import GPU_MODELS
from runner.protocol import protocol_version

VECTOR_ADD = ProblemSpec("vector_add", "Vector addition", 1, ("float32", "float16", "bfloat16"))
MATMUL = ProblemSpec("matmul", "Matrix multiplication", 1, ("float32", "float16"))
MOD = Actor("discord:1", "mod")
# The GPU types contests may target, as the front ends build them; no runners known, so nothing is warned about.
GPUS = GpuCatalog.of(GPU_MODELS)
ROOMY = RateLimitSettings(test_burst=1000, benchmark_burst=1000, ranked_burst=1000, profile_burst=1000)

PY_SOURCE = "import torch\n\n\ndef solution(a, b, c, n):\n    torch.add(a, b, out=c)\n"
CU_SOURCE = 'extern "C" void solution(const float* a, const float* b, float* c, int n) {}\n'
TRITON_SOURCE = "import triton\nimport torch\n\n\ndef solution(a, b, c, n):\n    torch.add(a, b, out=c)\n"
_unique = itertools.count()


async def add_problems(pool: asyncpg.Pool, *specs: ProblemSpec) -> list[ProblemVersion]:
    return [await sync_problem(pool, spec) for spec in specs or (VECTOR_ADD,)]


def request(
    user: str = "alice",
    *,
    slug: str = "vector_add",
    mode: str = "ranked",
    gpu: str = "h100",
    dtype: str = "float32",
    language: str = "python",
    token: str | None = None,
    unique: bool = True,
    profile_case: int | None = None,
) -> SubmitRequest:
    """A submit request from `discord:<user>`; `unique` gives each request its own source text."""
    file_name, source = {
        "python": ("solution.py", PY_SOURCE),
        "triton": ("solution.py", TRITON_SOURCE),
        "cuda": ("solution.cu", CU_SOURCE),
    }[language]
    if unique:
        source += f"# variant {next(_unique)}\n" if language != "cuda" else f"// variant {next(_unique)}\n"
    return SubmitRequest(
        f"discord:{user}", user, slug, check_upload(file_name, source.encode()), gpu, dtype, mode, token, profile_case
    )


def result_for(spec: jobs.JobSpec | JobRequest, score: float | None, status: str = "passed") -> SubmissionResult:
    """A runner's verdict for the job, with one timed case whose GFLOPS is `score`."""
    if isinstance(spec, jobs.JobSpec):
        slug, version, dtype, language, mode = spec.slug, spec.problem_version, spec.dtype, spec.language, spec.mode
    else:
        slug, version, dtype = spec.problem_slug, spec.problem_version, spec.dtype
        language, mode = spec.language, spec.mode
    tests = [TestOutcome(index=0, name="n=1024", dims=[1024], passed=status == "passed", message=status)]
    timings = []
    if score is not None:
        timing = CaseTiming(
            index=0,
            name="n=1024",
            dims=[1024],
            method="cpu",
            runtime_median_us=1.0,
            runtime_mean_us=1.0,
            gflops=score,
            gflops_mean=score,
            gbps=score * 12,
            flops=1024,
            bytes=12288,
            samples=10,
            cv=0.01,
            converged=True,
        )
        timings.append(timing)
    error = None if status == "passed" else ErrorInfo(code="wrong_answer", message="Wrong answer on case n=1024")
    return SubmissionResult(
        submission_id="x",
        problem_slug=slug,
        problem_version=version,
        dtype=dtype,
        language=language,
        mode=mode,
        status=status,
        device="Test GPU",
        tests=tests,
        timings=timings,
        geomean_gflops=score,
        mean_gflops=score,
        error=error,
        protocol=protocol_version() if timings else None,  # as a runner of this installation times it
    )


async def finish(
    pool: asyncpg.Pool, receipt: SubmitReceipt | int, score: float | None, status: str = "passed"
) -> jobs.Lease:
    """Claim the submission's queued job and record a result with `score` under that lease."""
    job_id = receipt.job_id if isinstance(receipt, SubmitReceipt) else receipt
    lease = await jobs.claim_job(pool, job_id, "test-owner", 30.0, "test-runner")
    assert lease is not None, f"job {job_id} was not queued"
    spec = await jobs.job_spec(pool, job_id)
    assert spec is not None
    assert await record_result(pool, lease, result_for(spec, score, status), "test-runner")
    return lease


async def submit_scored(
    pool: asyncpg.Pool, user: str, score: float | None, status: str = "passed", **kw: object
) -> SubmitReceipt:
    receipt = await submit(pool, request(user, **kw), ROOMY)  # type: ignore[arg-type]
    await finish(pool, receipt, score, status)
    return receipt


async def count(pool: asyncpg.Pool, table: str) -> int:
    assert table.isidentifier()
    return int(await pool.fetchval(f"SELECT count(*) FROM {table}"))


async def wait_for_state(pool: asyncpg.Pool, job_id: int, states: set[str], timeout_s: float = 180.0) -> str:
    """Poll the job until it is in one of `states` (the timeout only tells a stuck job from a busy host)."""
    async with asyncio.timeout(timeout_s):
        while True:
            job = await jobs.get_job(pool, job_id)
            assert job is not None
            if job.state in states:
                return job.state
            await asyncio.sleep(0.05)


async def cancel_and_wait(task: asyncio.Task[Any], what: str = "the dispatcher", timeout_s: float = 60.0) -> None:
    """Cancel `task` and wait until it has ended.

    A task still running `timeout_s` after its cancel has lost the cancellation (on Python 3.11,
    `asyncio.wait_for` returns instead of raising when the cancel arrives as the awaited thing completes, and a
    loop around it goes on for ever): the test then fails naming that, instead of hanging until pytest's timeout.
    """
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=timeout_s)
    if not done:
        task.cancel()  # once more, so that the test can clean up
        await asyncio.wait({task}, timeout=timeout_s)
        raise AssertionError(f"{what} was still running {timeout_s:.0f} s after it was cancelled (a lost cancellation)")
    if not task.cancelled():
        task.exception()  # retrieved: an error on the way out is not what these tests look at


class ScriptedRunner:
    """A JobRunner whose verdicts come from `script`: for dispatcher tests that need no real worker."""

    def __init__(
        self,
        name: str,
        script: Callable[[str, JobRequest], Awaitable[SubmissionResult]],
        *,
        gpu_type: str = "h100",
        slots: int = 1,
    ) -> None:
        self.name = name
        self.gpu_type = gpu_type
        self.slots = slots
        self._script = script
        self.calls: list[str] = []

    async def run(
        self, job_key: str, request: JobRequest, on_event: Callable[[JobEvent], Awaitable[None] | None]
    ) -> SubmissionResult:
        self.calls.append(job_key)
        maybe = on_event(JobEvent(seq=1, type="accepted", message="Test GPU"))
        if maybe is not None:
            await maybe
        return await self._script(job_key, request)

    async def attach(
        self, job_key: str, on_event: Callable[[JobEvent], Awaitable[None] | None]
    ) -> SubmissionResult | None:
        return None


async def submission(pool: asyncpg.Pool, submission_id: int) -> submissions.Submission:
    found = await submissions.get_submission(pool, submission_id)
    assert found is not None
    return found
