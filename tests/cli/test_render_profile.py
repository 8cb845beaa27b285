"""`arena submit --mode profile` shows what Nsight Compute measured: the kernel tables, the summary against the
problem's formulas, and the files; `--json` keeps them, `--profile-dir` writes them out."""

from __future__ import annotations

import base64
import re
from pathlib import Path

from arena.profile_artifacts import save_artifacts
from arena.render import render_result
from contract.wire import KernelProfile, StallReason, SubmissionResult
from core.views.profile import LAUNCH_HEADERS, TRAFFIC_HEADERS
from tests.cli.harness import arena, arena_env, assert_one_line_error
from tests.profile_fixture import NCU, profile_report, profile_result


def _cells(line: str) -> list[str]:
    # Columns are separated by at least two spaces; a figure holds at most one ("99.4 % of 100 %").
    return re.split(r"\s{2,}", line.strip())


def _row(text: str, header: str, kernel: str = "matmul_kernel") -> list[str]:
    """The cells of `kernel`'s row in the table whose header row starts with `header`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if _cells(line)[:2] == ["kernel", header])
    return next(_cells(line) for line in lines[start + 2 :] if _cells(line)[0] == kernel)


def test_the_recorded_naive_matmul_shows_ncus_figures_in_the_kernel_tables() -> None:
    text = render_result(profile_result())
    launch = dict(zip(LAUNCH_HEADERS, _row(text, "time"), strict=True))
    assert launch == {
        "kernel": "matmul_kernel",
        "time": "47.60 ms",  # as profile.txt prints it: "Duration  ms  47.60"
        "SM throughput": "43.0 %",
        "mem throughput": "64.6 %",
        "occupancy": "99.4 % of 100 %",
        "regs": "32",
        "smem/block": "0 B",
        "block": "16×16×1",
        "grid": "256×256×1",
    }
    traffic = dict(zip(TRAFFIC_HEADERS, _row(text, "DRAM read / written"), strict=True))
    assert traffic["DRAM read / written"] == "4.26 GB / 69.60 MB"
    assert traffic["FLOP"] == "137.44 GFLOP"
    assert traffic["top stalls"].startswith("long_scoreboard 91 %, ")


def test_the_summary_sets_the_counters_beside_the_problems_formulas() -> None:
    text = render_result(profile_result())
    assert "all 4 test cases passed; one case profiled (a profile is never ranked)" in text
    assert "profiled:  m=4096,n=4096,k=4096 (case 3) by Nsight Compute 2025.3.1" in text
    assert "duration:  47.60 ms over 1 kernel launch" in text
    # Every multiply-add is one FFMA: the counters see exactly the formula's 2·4096³.
    assert "FLOP:      137.44 GFLOP counted, formula 137.44 GFLOP (1.00×)" in text
    # No tiling: each thread reads its row and column from L2 and DRAM, 21 times the three matrices.
    assert "DRAM:      4.33 GB moved, formula 201.33 MB (21.49×)" in text
    assert "intensity: 31.8 FLOP/byte measured (formula 683)" in text
    assert "achieved:  2,887 GFLOPS, 90.9 GB/s" in text  # profile.txt: "Memory Throughput  Gbyte/s  90.88"
    assert "top stall: long_scoreboard (91 % of stalls): waiting on global or local memory loads (L1TEX)" in text
    assert "tensor cores" not in text
    assert text.splitlines()[-1] == (
        "files: profile.txt (9.05 kB), profile.ncu-rep (116.51 kB), solution.ptx (3.57 kB), solution.sass (28.98 kB)"
    )


def test_tensor_core_work_is_said_to_be_missing_from_the_flop_count() -> None:
    (kernel,) = profile_report().kernels
    tensor = kernel.model_copy(update={"tensor_instructions": 524_288, "flops": 0})
    text = render_result(profile_result(profile=profile_report(kernels=[tensor])))
    assert "FLOP:         0 FLOP counted, formula 137.44 GFLOP (0.00×)" in text
    assert (
        "tensor cores: 524,288 tensor-core instructions ran: their FLOPs are not counted by the SASS counters" in text
    )


def test_kernels_launched_more_than_once_and_figures_not_collected_read_as_such() -> None:
    fill = KernelProfile(
        name="fill_kernel", launches=3, duration_us=0.875, stalls=[StallReason(name="sleeping", cycles_per_issue=1.0,
        share=1.0)], flops=None,
    )  # fmt: skip
    (matmul,) = profile_report().kernels
    report = profile_report(kernels=[matmul, fill], kernel_count=6)
    text = render_result(profile_result(profile=report))
    row = _row(text, "time", kernel="fill_kernel ×3")
    assert row == ["fill_kernel ×3", "875.00 ns", "-", "-", "-", "-", "-", "-", "-"]
    assert _row(text, "DRAM read / written", kernel="fill_kernel ×3") == ["fill_kernel ×3", "-", "-", "sleeping 100 %"]
    assert "duration:  47.60 ms over 4 kernel launches (2 more not listed, nor counted here)" in text
    # One kernel's FLOPs and bytes were not collected: a sum would be short, so there is none.
    assert "FLOP:      not measured, formula 137.44 GFLOP" in text
    assert "DRAM:      not measured, formula 201.33 MB" in text
    assert "achieved:  - GFLOPS, - GB/s" in text


def test_a_call_that_launched_no_kernel_says_so_instead_of_an_empty_table() -> None:
    text = render_result(profile_result(profile=profile_report(kernels=[], kernel_count=0, artifacts=[])))
    assert "The profiler saw no kernel launch in the profiled call" in text
    assert "SM throughput" not in text and text.endswith("files: none")


def test_the_json_output_keeps_the_whole_profile_and_its_files() -> None:
    result = profile_result()
    again = SubmissionResult.model_validate_json(result.model_dump_json(indent=2))
    assert again == result
    assert again.profile is not None and again.profile.duration_us == 47_601.728


def test_profile_dir_writes_each_file_as_recorded_and_never_outside_the_folder(tmp_path: Path) -> None:
    report = profile_report()
    strays = [report.artifacts[0].model_copy(update={"name": name}) for name in ("../escaped.txt", "a/..", "..\\x")]
    written = save_artifacts(report.model_copy(update={"artifacts": [*report.artifacts, *strays]}), tmp_path / "out")
    assert sorted(p.name for p in written) == [
        "artifact", "escaped.txt", "profile.ncu-rep", "profile.txt", "solution.ptx", "solution.sass", "x",
    ]  # fmt: skip
    assert all(p.parent == tmp_path / "out" for p in written)
    assert (tmp_path / "out" / "profile.ncu-rep").read_bytes() == (NCU / "matmul_naive_h100.ncu-rep").read_bytes()
    assert not (tmp_path / "escaped.txt").exists()
    bad = report.artifacts[0].model_copy(update={"data_b64": "not base64!"})
    assert save_artifacts(report.model_copy(update={"artifacts": [bad]}), tmp_path / "bad") == []
    assert base64.b64decode(report.artifacts[0].data_b64) == (tmp_path / "out" / "profile.txt").read_bytes()


def test_profile_options_without_mode_profile_are_refused_in_one_line(tmp_path: Path) -> None:
    proc = arena(
        "submit", "vector_add", "examples/vector_add.cu", "--mode", "test", "--profile-case", "1",
        env=arena_env(tmp_path),
    )  # fmt: skip
    assert_one_line_error(proc, "--profile-case and --profile-dir go with --mode profile")
