"""Mode `profile` on the runner: who may profile, which case, how the collector's files become a report, and a
CPU runner's clear refusal through a real job. The GPU side (ncu on the examples) is in tests/gpu."""

from __future__ import annotations

import argparse
import base64
import json
import secrets
import shutil
from pathlib import Path

import pytest

from contract.wire import ProfileReport
from problems.registry import get_problem
from runner.errors import BadRequestError, ProfilerUnavailableError, SolutionRuntimeError
from runner.host.executor import Executor
from runner.job.run import run_job
from runner.judge.evaluate import profile_target
from runner.profiling import collect
from runner.profiling.availability import counters_admin_only, profiling_support
from runner.profiling.run import ProfileFailedError, read_collected
from tests.runner.conftest import good_request, settings_for

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ncu"
TARGET = ProfileReport(case_index=3, case_name="m=4096,n=4096,k=4096", formula_flops=2 * 4096**3, formula_bytes=1)


def _params(tmp_path: Path, admin_only: int) -> str:
    params = tmp_path / "params"
    params.write_text(f"ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: {admin_only}\nEnableMSI: 1\n")
    return str(params)


def test_a_runner_without_a_gpu_cannot_profile_and_says_so() -> None:
    support = profiling_support(has_gpu=False, jobs_run_as_root=False, ncu="/usr/bin/ncu")
    assert not support.available
    assert support.note is not None and "no GPU" in support.note


def test_counters_kept_for_admins_stop_unprivileged_jobs_with_the_operators_fix(tmp_path: Path) -> None:
    params = _params(tmp_path, 1)
    assert counters_admin_only(params) is True
    support = profiling_support(has_gpu=True, jobs_run_as_root=False, ncu="/usr/bin/ncu", params_file=params)
    assert not support.available
    assert support.note is not None and "NVreg_RestrictProfilingToAdminUsers=0" in support.note
    # Jobs that keep root (a daemon not running as root gives them its own uid, not this) may still read them.
    assert profiling_support(True, True, ncu="/usr/bin/ncu", params_file=params).available


def test_counters_open_to_all_users_allow_profiling(tmp_path: Path) -> None:
    params = _params(tmp_path, 0)
    assert counters_admin_only(params) is False
    assert profiling_support(True, False, ncu="/usr/bin/ncu", params_file=params).available
    assert counters_admin_only(str(tmp_path / "missing")) is None


def test_the_default_case_is_the_one_with_the_most_work() -> None:
    problem = get_problem("matrix-multiplication")
    cases = problem.generate_test_cases("float32", "gpu")
    target = profile_target(problem, cases, "float32", None)
    flops = [problem.get_flops(c) for c in cases]
    assert target.case_index == flops.index(max(flops))
    assert target.formula_flops == max(flops)
    assert target.case_name == cases[target.case_index]["name"]


def test_a_case_past_the_last_is_a_bad_request_that_names_the_range() -> None:
    problem = get_problem("matrix-multiplication")
    cases = problem.generate_test_cases("float32", "gpu")
    assert profile_target(problem, cases, "float32", 0).case_index == 0
    with pytest.raises(BadRequestError, match=f"0 to {len(cases) - 1}"):
        profile_target(problem, cases, "float32", len(cases))


def test_the_profiler_command_profiles_only_the_calls_range_with_every_section() -> None:
    command = collect.profile_command("/opt/ncu", "/usr/bin/python3", ["--case", "3"], Path("/out/profile"))
    assert command[:3] == ["/opt/ncu", "--target-processes", "all"]
    assert command[command.index("--nvtx-include") + 1] == "arena-profile/"
    assert "--nvtx" in command
    sections = [command[i + 1] for i, arg in enumerate(command) if arg == "--section"]
    assert set(sections) >= {"SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats"}
    metrics = command[command.index("--metrics") + 1].split(",")
    assert "dram__bytes_read.sum" in metrics and "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum" in metrics
    child = command[command.index("--force-overwrite") + 1 :]
    assert child[:2] == ["/usr/bin/python3", "-I"] and "runner.launcher.profiled_call" in child[3]
    assert child[-2:] == ["--case", "3"]


def _collected(tmp_path: Path, code: str, message: str = "", recording: str = "matmul_naive_h100") -> Path:
    out = tmp_path / "out"
    out.mkdir()
    (out / collect.STATUS).write_text(json.dumps({"code": code, "message": message}))
    shutil.copy(FIXTURES / f"{recording}.raw.csv", out / collect.RAW_PAGE)
    shutil.copy(FIXTURES / f"{recording}.details.txt", out / collect.DETAILS)
    shutil.copy(FIXTURES / f"{recording}.ncu-rep", out / collect.REPORT)
    return out


def test_the_collectors_files_become_the_report_with_its_artifacts(tmp_path: Path) -> None:
    report = read_collected(_collected(tmp_path, "ok"), TARGET)
    assert report.case_index == 3 and report.formula_flops == 2 * 4096**3
    (kernel,) = report.kernels
    assert kernel.name == "matmul_kernel" and kernel.flops == 2 * 4096**3
    assert report.kernel_count == 1
    assert report.measured_flops == report.formula_flops
    names = [a.name for a in report.artifacts]
    assert names == [collect.DETAILS, collect.REPORT]  # no PTX or SASS were left: they are left out
    details = base64.b64decode(report.artifacts[0].data_b64).decode()
    assert "matmul_kernel" in details
    assert any("base" in note for note in report.notes)


def test_the_profiler_asks_for_the_counters_that_see_tensor_core_work_on_each_architecture() -> None:
    command = collect.profile_command("/opt/ncu", "/usr/bin/python3", ["--case", "3"], Path("/out/profile"))
    metrics = command[command.index("--metrics") + 1].split(",")
    assert {
        "sm__inst_executed_pipe_tensor.sum",
        "sm__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum",
        "sm__inst_executed_pipe_tensor_op_hmma.sum",
        "sm__inst_executed_pipe_tensor_op_gmma.sum",
        "sm__ops_path_tensor_src_fp16.sum",
        "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
        "sm__ops_path_tensor_src_fp16_dst_fp32.sum",
    } <= set(metrics)
    assert len(metrics) == len(set(metrics))


@pytest.mark.parametrize(
    ("recording", "tensor_flops"),
    [("matmul_tiled_fp32_h100", 0), ("matmul_wmma_fp16_h100", 2 * 4096**3), ("matmul_torch_fp16_h100", 2 * 4096**3)],
)
def test_no_report_says_its_flops_fall_short_where_the_tensor_cores_work_was_counted(
    tmp_path: Path, recording: str, tensor_flops: int
) -> None:
    report = read_collected(_collected(tmp_path, "ok", recording=recording), TARGET)
    (kernel,) = report.kernels
    assert kernel.tensor_flops == tensor_flops
    assert not any("tensor" in note for note in report.notes), report.notes
    assert report.measured_flops is not None and report.measured_flops >= report.formula_flops


def test_matrix_instructions_without_counted_ops_are_noted_as_missing_from_the_flops(tmp_path: Path) -> None:
    out = _collected(tmp_path, "ok", recording="matmul_wmma_fp16_h100")
    page = (out / collect.RAW_PAGE).read_text(encoding="utf-8")
    # Every tensor ops counter (the page prints counts with thousands separators) as a GPU without them reads it.
    (out / collect.RAW_PAGE).write_text(page.replace('"137,438,953,472"', '"n/a"'), encoding="utf-8")
    report = read_collected(out, TARGET)
    assert report.kernels[0].tensor_instructions and not report.kernels[0].tensor_flops
    assert any("tensor-core instructions" in note and "fall short" in note for note in report.notes)


def test_the_collectors_refusal_is_the_users_profiler_unavailable(tmp_path: Path) -> None:
    out = _collected(tmp_path, "profiler_unavailable", "only administrators may read the counters")
    with pytest.raises(ProfilerUnavailableError, match="administrators"):
        read_collected(out, TARGET)


def test_a_call_that_failed_under_the_profiler_is_the_submissions_runtime_error(tmp_path: Path) -> None:
    out = _collected(tmp_path, "runtime_error", "The solution failed while being profiled: RuntimeError: boom")
    with pytest.raises(SolutionRuntimeError, match="boom"):
        read_collected(out, TARGET)


def test_an_ncu_launcher_without_its_install_tree_is_the_runners_refusal_not_the_submissions_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    launcher = tools / "ncu"
    launcher.write_text(
        "#!/bin/sh\necho 'The nsight-compute directory is not found under /usr/local/cuda/bin/../ or /opt/nvidia. "
        "Nsight Compute is not installed on your system.'\nexit 1\n"
    )
    launcher.chmod(0o755)
    monkeypatch.setenv("PATH", str(tools))
    out = tmp_path / "out"
    out.mkdir()
    args = argparse.Namespace(
        out=out, request=tmp_path / "request.json", case=0, workdir=tmp_path, prebuilt_dir=None, source=None, arch=None
    )
    assert collect.collect(args) == 2
    with pytest.raises(ProfilerUnavailableError, match="cannot find its Nsight Compute installation"):
        read_collected(out, TARGET)


def test_a_collector_that_left_no_status_is_the_runners_failure(tmp_path: Path) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    with pytest.raises(ProfileFailedError):
        read_collected(out, TARGET)


async def test_a_profile_on_a_cpu_runner_is_refused_before_anything_runs(state_dir: Path) -> None:
    executor = await Executor.from_settings(settings_for(state_dir, secrets.token_hex(24), device="cpu"))
    request = good_request().model_copy(update={"mode": "profile"})
    events = []
    result = await run_job(request, events.append, executor=executor)
    assert result.status == "error" and result.mode == "profile"
    assert result.error is not None and result.error.code == "profiler_unavailable"
    assert "no GPU" in result.error.message
    assert not result.tests  # refused before the tests: nothing was compiled or run
    assert events[-1].type == "done"
