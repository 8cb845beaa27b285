"""One realistic result of mode `profile`, built from the report recorded on an H100 (tests/fixtures/ncu/), so that
the CLI, Discord and chart tests all read the same object."""

from __future__ import annotations

import base64
from pathlib import Path

from contract.wire import ProfileArtifact, ProfileReport, SubmissionResult, TestOutcome
from runner.profiling.ncu_report import parse_raw_page

NCU = Path(__file__).resolve().parent / "fixtures" / "ncu"
# The files a profile comes with, named as the runner names them, and the recording each is read from.
ARTIFACT_FILES = {
    "profile.txt": "matmul_naive_h100.details.txt",
    "profile.ncu-rep": "matmul_naive_h100.ncu-rep",
    "solution.ptx": "matmul_naive_sm90.ptx",
    "solution.sass": "matmul_naive_sm90.sass",
}
CASES = ("m=n=k=64", "m=128,n=256,k=64", "m=1000,n=1000,k=1000", "m=4096,n=4096,k=4096")


def artifact(name: str, data: bytes) -> ProfileArtifact:
    return ProfileArtifact(name=name, data_b64=base64.b64encode(data).decode("ascii"))


def recorded_artifacts() -> list[ProfileArtifact]:
    return [artifact(name, (NCU / file).read_bytes()) for name, file in ARTIFACT_FILES.items()]


def profile_report(**changes: object) -> ProfileReport:
    """The naive matmul's largest case as Nsight Compute measured it; `changes` replace fields."""
    report = ProfileReport(
        case_index=3,
        case_name="m=4096,n=4096,k=4096",
        tool="Nsight Compute 2025.3.1",
        kernels=parse_raw_page((NCU / "matmul_naive_h100.raw.csv").read_text(encoding="utf-8")),
        kernel_count=1,
        formula_flops=2 * 4096**3,
        formula_bytes=3 * 4096 * 4096 * 4,
        artifacts=recorded_artifacts(),
    )
    return report.model_copy(update=changes)


def profile_result(**changes: object) -> SubmissionResult:
    """A passed submission of mode `profile`: every test case passed, no timings, the profile above."""
    tests = [TestOutcome(index=i, name=name, dims=[], passed=True, message="ok") for i, name in enumerate(CASES)]
    result = SubmissionResult(
        submission_id="42",
        problem_slug="matrix-multiplication",
        problem_version=1,
        dtype="float32",
        language="cuda",
        mode="profile",
        status="passed",
        device="NVIDIA H100 80GB HBM3",
        tests=tests,
        profile=profile_report(),
    )
    return result.model_copy(update=changes)
