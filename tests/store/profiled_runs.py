"""Profiled runs in the store for the profile-diff tests: each a real submission of mode `profile` whose result
carries one of the reports recorded on an H100 (tests/fixtures/ncu/), recorded through the path a dispatcher takes.

The four recordings are one problem's largest case (m = n = k = 4096); each kernel keeps its recorded name unless a
test renames it (a competitor's next version of the same kernel keeps its name).
"""

from __future__ import annotations

import asyncpg

from contract.wire import ProfileReport
from core.results import record_result
from core.store import jobs
from core.submit.intake import SubmitRequest, submit
from core.submit.uploads import check_upload
from runner.profiling.ncu_report import parse_raw_page
from tests.profile_fixture import NCU
from tests.store.store_helpers import ROOMY, result_for

RECORDINGS = {
    "naive": "matmul_naive_h100",
    "tiled": "matmul_tiled_fp32_h100",
    "wmma": "matmul_wmma_fp16_h100",
    "torch": "matmul_torch_fp16_h100",
}
CASE = "m=4096,n=4096,k=4096"


def recorded(name: str, *, kernel_name: str | None = None, case_name: str = CASE) -> ProfileReport:
    """The recording's report as a runner sends it, without files; `kernel_name` renames its one kernel."""
    kernels = parse_raw_page((NCU / f"{RECORDINGS[name]}.raw.csv").read_text(encoding="utf-8"))
    if kernel_name is not None:
        kernels = [k.model_copy(update={"name": kernel_name}) for k in kernels]
    return ProfileReport(
        case_index=3,
        case_name=case_name,
        tool="Nsight Compute 2025.3.1",
        kernels=kernels,
        kernel_count=len(kernels),
        formula_flops=2 * 4096**3,
        formula_bytes=3 * 4096 * 4096 * 4,
    )


async def run_of(
    pool: asyncpg.Pool,
    user: str,
    source: str,
    *,
    mode: str = "profile",
    report: ProfileReport | None = None,
    score: float | None = None,
    slug: str = "matmul",
    gpu: str = "h100",
    dtype: str = "float32",
    external_id: str | None = None,
) -> int:
    """A finished run of `source` (CUDA) by `discord:<user>` (or `external_id`), with `report` as its profile."""
    upload = check_upload("solution.cu", source.encode())
    who = external_id or f"discord:{user}"
    receipt = await submit(pool, SubmitRequest(who, user, slug, upload, gpu, dtype, mode, None, None), ROOMY)
    lease = await jobs.claim_job(pool, receipt.job_id, "test-owner", 30.0, "test-runner")
    assert lease is not None
    spec = await jobs.job_spec(pool, receipt.job_id)
    assert spec is not None
    result = result_for(spec, score).model_copy(update={"profile": report, "device": "NVIDIA H100 80GB HBM3"})
    assert await record_result(pool, lease, result, "test-runner")
    assert receipt.submission_id is not None
    return receipt.submission_id


def cuda(variant: str) -> str:
    """A CUDA source of its own (the store keeps each text once: two runs of one text share their code)."""
    return f'extern "C" void solution(const float* a, const float* b, float* c, int n) {{}}\n// {variant}\n'
