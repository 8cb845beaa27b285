"""Mode `profile` for real: the examples under Nsight Compute on this machine's GPU, through `run_job`.

Where this runner may not profile (no ncu, or counters kept for administrators while jobs run unprivileged), the
job must be refused with the same words `/v1/health` gives, and nothing else: that branch is checked too.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from runner.api import JobRequest, SubmissionResult
from runner.host.executor import default_executor
from runner.host.job import run_job
from runner.profiling.availability import jobs_run_as_root, profiling_support

pytestmark = pytest.mark.gpu

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


async def profile(slug: str, example: str, language: str) -> tuple[SubmissionResult, str | None]:
    executor = await default_executor(timeout_s=600)
    support = profiling_support(True, jobs_run_as_root(executor.sandbox.policy.uid_base))
    request = JobRequest(
        submission_id=f"gpu-profile-{example}",
        problem_slug=slug,
        language=language,
        file_name=example,
        source=(EXAMPLES / example).read_text(),
        mode="profile",
        device_kind="gpu",
    )
    result = await run_job(request, executor=executor, timeout_s=600)
    return result, None if support.available else support.note


async def test_the_naive_cuda_matmul_profiles_to_its_one_kernel_and_its_formulas_flops() -> None:
    result, refusal = await profile("matrix-multiplication", "matmul_naive.cu", "cuda")
    if refusal is not None:
        assert result.error is not None and result.error.code == "profiler_unavailable"
        assert result.error.message == refusal
        return
    assert result.status == "passed", result.error
    assert result.profile is not None and not result.timings
    report = result.profile
    assert report.case_name == "m=4096,n=4096,k=4096"
    (kernel,) = report.kernels
    assert kernel.name == "matmul_kernel"
    assert kernel.block == (16, 16, 1) and kernel.registers_per_thread is not None
    assert kernel.duration_us > 0 and kernel.stalls
    assert kernel.flops == report.formula_flops  # one FFMA per multiply-add: the counters see the formula
    assert kernel.dram_bytes_read is not None and kernel.dram_bytes_read > 0
    names = {a.name for a in report.artifacts}
    assert {"profile.txt", "profile.ncu-rep", "solution.sass", "solution.ptx"} <= names
    sass = next(a for a in report.artifacts if a.name == "solution.sass")
    assert "matmul_kernel" in base64.b64decode(sass.data_b64).decode(errors="replace")


async def test_the_triton_matmul_profiles_its_kernel_without_the_warm_ups_autotuning() -> None:
    result, refusal = await profile("matrix-multiplication", "matmul_triton.py", "triton")
    if refusal is not None:
        assert result.error is not None and result.error.code == "profiler_unavailable"
        return
    assert result.status == "passed", result.error
    assert result.profile is not None and result.profile.kernels
    assert result.profile.kernel_count <= 3  # one call's kernels, not the autotuner's trials
