"""The diff of two profiles recorded on an H100 (tests/fixtures/ncu/): the naive matmul against the tiled FP32 one,
the FP16 WMMA kernel against cuBLAS's. The real figures move as the kernels' designs say they must, each change is
B minus A and its share of A, kernels are matched by name, and the text the CLI and the bot print carries the
figures as one profile's table prints them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from contract.wire import ProfileDiff, ProfiledRun, ProfileReport
from core.views import profile_diff as view
from tests.store.profiled_runs import recorded


def run(submission_id: int, dtype: str = "float32", case: str = "m=4096,n=4096,k=4096") -> ProfiledRun:
    return ProfiledRun(
        submission_id=submission_id,
        owner="ada",
        file_name="solution.cu",
        language="cuda",
        dtype=dtype,
        problem_version=1,
        device="NVIDIA H100 80GB HBM3",
        case_index=3,
        case_name=case,
        created_at=datetime(2030, 1, 1, tzinfo=UTC),
    )


def diff(a: ProfileReport, b: ProfileReport, dtype_b: str = "float32") -> ProfileDiff:
    return view.diff_reports(run(1), a, run(2, dtype_b, b.case_name), b, problem="matmul", gpu_type="h100")


def test_tiling_the_naive_kernel_cuts_its_time_and_raises_its_throughput_on_the_recorded_reports() -> None:
    # The tiled kernel as the competitor's next version of `matmul_kernel`: the same name, so the two are matched.
    naive, tiled = recorded("naive"), recorded("tiled", kernel_name="matmul_kernel")
    found = diff(naive, tiled)
    assert [(k.name, k.side) for k in found.kernels] == [("matmul_kernel", "both")]
    kernel = found.kernels[0]

    # 47.60 ms -> 19.79 ms: B is 2.40x faster, 58.4 % less time.
    assert kernel.duration_us.a == pytest.approx(47601.728) and kernel.duration_us.b == pytest.approx(19794.624)
    assert kernel.duration_us.change == pytest.approx(19794.624 - 47601.728)
    assert kernel.duration_us.change_pct == pytest.approx(-58.42, abs=0.01)
    assert found.totals.speedup == pytest.approx(2.405, abs=0.001)
    # Reusing tiles in shared memory keeps the SMs and the memory pipes busier, from 0 to 8 KiB of shared memory.
    assert kernel.sm_throughput_pct.change is not None and kernel.sm_throughput_pct.change > 25
    assert kernel.memory_throughput_pct.change is not None and kernel.memory_throughput_pct.change > 15
    assert (kernel.shared_memory_per_block_bytes.a, kernel.shared_memory_per_block_bytes.b) == (0, 8192)
    assert kernel.shared_memory_per_block_bytes.change_pct is None, "no share of nothing"
    assert kernel.registers_per_thread.change == 0
    # The naive kernel waits on global loads (91 % long_scoreboard); tiled, it waits on the shared-memory queue.
    stalls = {s.name: (s.a_share, s.b_share) for s in kernel.stalls}
    assert stalls["long_scoreboard"][0] == pytest.approx(0.915, abs=0.001)
    assert stalls["long_scoreboard"][1] == pytest.approx(0.141, abs=0.001)
    assert stalls["mio_throttle"] == (None, pytest.approx(0.449, abs=0.001))
    assert kernel.stalls[0].name == "long_scoreboard", "the largest share of either side first"
    # The counters: the tiled kernel's HFMA2.MMA register moves count as FLOPs (1.03x the formula), and it reads
    # twice the DRAM bytes (its 32x32 tiles over 128x128 blocks).
    assert found.totals.measured_flops.change == 141801029632 - 137438953472
    assert kernel.dram_bytes_read.change_pct == pytest.approx(97.95, abs=0.01)
    assert found.totals.measured_dram_bytes.a == 4256375000 + 69599488
    assert found.notes == []

    lines = {line.label: line.cells()[1:] for line in view.kernel_lines(kernel)}
    assert lines["time"] == ("47.60 ms", "19.79 ms", "-27.81 ms (-58.4 %)")
    assert lines["SM throughput"] == ("43.0 %", "71.1 %", "+28.1 pt (+65.3 %)")
    assert lines["smem/block"] == ("0 B", "8 KiB", "+8 KiB")
    assert lines["regs"] == ("32", "32", "same")
    assert lines["DRAM read"] == ("4.26 GB", "8.43 GB", "+4.17 GB (+97.9 %)")
    assert view.headline(found) == "B took 19.79 ms against A's 47.60 ms: 2.40× faster (58.4 % less time)."
    assert "long_scoreboard 91 % → 14 %" in view.stall_line(kernel)
    assert "mio_throttle - → 45 %" in view.stall_line(kernel)
    totals = {line.label: line.cells()[1:] for line in view.total_lines(found)}
    assert totals["DRAM moved"] == ("4.33 GB", "8.49 GB", "+4.17 GB (+96.4 %)")


def test_the_reverse_diff_says_slower_and_every_change_turns_sign() -> None:
    forward = diff(recorded("naive"), recorded("tiled", kernel_name="matmul_kernel"))
    backward = diff(recorded("tiled", kernel_name="matmul_kernel"), recorded("naive"))
    assert backward.totals.duration_us.change == pytest.approx(-(forward.totals.duration_us.change or 0))
    assert view.headline(backward) == "B took 47.60 ms against A's 19.79 ms: 2.40× slower (140.5 % more time)."


def test_kernels_of_other_names_are_listed_each_on_its_side_with_no_change() -> None:
    # WMMA's kernel against cuBLAS's: two names, no pair; the totals still compare the whole call.
    found = diff(recorded("wmma"), recorded("torch"), dtype_b="float16")
    assert [(k.name, k.side) for k in found.kernels] == [
        ("matmul_wmma", "a"),
        ("nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_NNT", "b"),
    ]
    alone_a, alone_b = found.kernels
    assert alone_a.duration_us.b is None and alone_a.duration_us.change is None
    assert alone_b.registers_per_thread.a is None and alone_b.registers_per_thread.b == 168
    assert view.format_change(alone_a.duration_us, "duration") == "-"
    assert view.kernel_title(alone_a) == "matmul_wmma (A only)"
    # 6.35 ms -> 0.22 ms; both count 2·4096³ tensor FLOPs.
    assert found.totals.speedup == pytest.approx(6353.28 / 219.968)
    assert found.totals.measured_flops.change == 0
    assert view.format_change(found.totals.measured_flops, "flops") == "same"
    assert view.headline(found).startswith("B took 219.97 µs against A's 6.35 ms: 28.88× faster")


def test_notes_say_when_the_two_runs_profiled_other_cases_or_dtypes() -> None:
    found = diff(recorded("naive"), recorded("wmma", case_name="m=1000,n=1000,k=1000"), dtype_b="float16")
    assert len(found.notes) == 2
    assert "case m=4096,n=4096,k=4096 and B case m=1000,n=1000,k=1000" in found.notes[0]
    assert "float32 and B in float16" in found.notes[1]


def test_two_kernels_of_one_name_pair_in_order_and_a_profile_without_kernels_compares_no_time() -> None:
    naive = recorded("naive")
    twice = naive.model_copy(update={"kernels": [*naive.kernels, naive.kernels[0]]})
    found = diff(twice, naive)
    assert [(k.name, k.side) for k in found.kernels] == [("matmul_kernel", "both"), ("matmul_kernel", "a")]
    empty = diff(naive, naive.model_copy(update={"kernels": []}))
    assert empty.totals.speedup is None and empty.kernels[0].side == "a"
    assert view.headline(empty).startswith("One of the two profiles saw no kernel run")
