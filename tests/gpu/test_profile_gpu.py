"""Mode `profile` for real: the examples under Nsight Compute on this machine's GPU, through `run_job`.

Where this runner may not profile (no ncu, or counters kept for administrators while jobs run unprivileged), the
job must be refused with the same words `/v1/health` gives, and nothing else: that branch is checked too.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from contract.names import DType
from contract.wire import JobRequest, SubmissionResult
from runner.host.executor import default_executor
from runner.job.run import run_job
from runner.profiling.availability import jobs_run_as_root, profiling_support

pytestmark = pytest.mark.gpu

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# The FP32 tiled matmul whose recorded report the CPU tests read (tests/fixtures/ncu/README.md).
TILED = Path(__file__).resolve().parents[1] / "fixtures" / "ncu" / "matmul_tiled_fp32.cu"


async def profile(
    slug: str, example: str, language: str, dtype: DType = "float32", source: Path | None = None
) -> tuple[SubmissionResult, str | None]:
    executor = await default_executor(timeout_s=600)
    support = profiling_support(True, jobs_run_as_root(executor.sandbox.policy.uid_base))
    request = JobRequest(
        submission_id=f"gpu-profile-{example}-{dtype}",
        problem_slug=slug,
        language=language,
        file_name=example,
        source=(source or EXAMPLES / example).read_text(),
        dtype=dtype,
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


async def test_an_ffma_only_tiled_matmul_ran_nothing_on_the_tensor_cores() -> None:
    result, refusal = await profile("matrix-multiplication", "matmul_tiled_fp32.cu", "cuda", source=TILED)
    if refusal is not None:
        assert result.error is not None and result.error.code == "profiler_unavailable"
        return
    assert result.status == "passed", result.error
    assert result.profile is not None
    (kernel,) = result.profile.kernels
    assert kernel.name == "matmul_tiled"
    # The compiler's HFMA2.MMA register moves issue on the tensor pipe; no matrix instruction or tensor op ran.
    assert kernel.tensor_instructions == 0 and kernel.tensor_flops == 0
    assert not any("tensor" in note for note in result.profile.notes)
    assert kernel.flops is not None and 1.0 <= kernel.flops / result.profile.formula_flops < 1.05


@pytest.mark.parametrize(
    ("example", "language"), [("matmul_wmma.cu", "cuda"), ("matmul.py", "python")], ids=["wmma-hmma", "cublas"]
)
async def test_a_float16_gemm_on_the_tensor_cores_has_its_flops_counted(example: str, language: str) -> None:
    result, refusal = await profile("matrix-multiplication", example, language, dtype="float16")
    if refusal is not None:
        assert result.error is not None and result.error.code == "profiler_unavailable"
        return
    assert result.status == "passed", result.error
    report = result.profile
    assert report is not None and report.kernels
    tensor_flops = sum(k.tensor_flops or 0 for k in report.kernels)
    assert sum(k.tensor_instructions or 0 for k in report.kernels) > 0
    # Every multiply-add of the largest case, and no more than its tiles' zero padding could add.
    assert 1.0 <= tensor_flops / report.formula_flops < 1.1
    assert not any("fall short" in note for note in report.notes)
