"""The CUDA and Triton examples on a real GPU: verdicts and the seed method's figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from contract.wire import JobRequest, MeasureConfig, SubmissionResult
from runner.job.run import run_job

pytestmark = pytest.mark.gpu

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QUICK = MeasureConfig(target_cv=0.02, min_samples=5, max_samples=200, max_seconds=2.0)


async def submit(slug: str, example: str, language: str, mode: str = "benchmark") -> SubmissionResult:
    request = JobRequest(
        submission_id=f"gpu-{example}",
        problem_slug=slug,
        language=language,
        file_name=example,
        source=(EXAMPLES / example).read_text(),
        mode=mode,
        device_kind="gpu",
        measure=QUICK,
    )
    return await run_job(request, timeout_s=600)


@pytest.mark.parametrize(
    ("slug", "example", "language"),
    [
        ("vector_add", "vector_add.cu", "cuda"),
        ("matrix-multiplication", "matmul_naive.cu", "cuda"),
        ("matrix-multiplication", "matmul_triton.py", "triton"),
    ],
)
async def test_correct_gpu_example_passes_with_positive_gflops_on_every_case(slug: str, example: str, language: str):
    result = await submit(slug, example, language)
    assert result.status == "passed", result.error
    assert "CPU" not in result.device
    assert len(result.timings) == len(result.tests) >= 3
    for timing in result.timings:
        assert timing.method == "arena"
        assert timing.gflops > 0 and timing.samples >= 5
        # No kernel here can beat the H100's dense peak; a number above it means the timing is broken.
        assert timing.gflops < 1.0e6


@pytest.mark.parametrize(
    ("slug", "example"), [("vector_add", "vector_add_wrong.cu"), ("matrix-multiplication", "matmul_wrong.cu")]
)
async def test_wrong_cuda_example_fails_verification(slug: str, example: str):
    result = await submit(slug, example, "cuda", mode="test")
    assert result.status == "failed"
    assert result.error.code == "wrong_answer"


async def test_python_example_runs_on_the_gpu():
    result = await submit("matrix-multiplication", "matmul.py", "python")
    assert result.status == "passed"
    assert result.timings[-1].dims == [4096, 4096, 4096]
