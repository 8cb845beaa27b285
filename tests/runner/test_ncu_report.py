"""Reading Nsight Compute's raw page: real reports recorded on an H100 (tests/fixtures/ncu/README.md)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from contract.wire import ProfileReport
from core.views.profile import summary
from runner.profiling.ncu_report import (
    EXTRA_METRICS,
    TENSOR_OPS_COUNTERS,
    TENSOR_PIPE,
    TENSOR_PIPE_HFMA2,
    NcuReportError,
    parse_raw_page,
    read_rows,
    short_name,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ncu"
RAW = (FIXTURES / "matmul_naive_h100.raw.csv").read_text(encoding="utf-8")


def test_the_recorded_naive_matmul_reads_as_one_kernel_with_ncus_figures() -> None:
    (kernel,) = parse_raw_page(RAW)
    assert kernel.name == "matmul_kernel"
    assert kernel.signature.startswith("matmul_kernel(const float *")
    assert kernel.launches == 1
    assert kernel.duration_us == pytest.approx(47_601.728)  # 47.601728 ms on the page
    assert kernel.sm_throughput_pct == pytest.approx(43.035691)
    assert kernel.memory_throughput_pct == pytest.approx(64.560998)
    assert kernel.achieved_occupancy_pct == pytest.approx(99.42266)
    assert kernel.theoretical_occupancy_pct == pytest.approx(100.0)
    assert kernel.registers_per_thread == 32
    assert kernel.shared_memory_per_block_bytes == 0
    assert kernel.block == (16, 16, 1)
    assert kernel.grid == (256, 256, 1)


def test_bytes_come_out_in_bytes_whatever_unit_the_page_used() -> None:
    (kernel,) = parse_raw_page(RAW)
    assert kernel.dram_bytes_read == 4_256_375_000  # "4.256375 Gbyte"
    assert kernel.dram_bytes_written == 69_599_488  # "69.599488 Mbyte"
    assert kernel.dram_bytes == 4_256_375_000 + 69_599_488


def test_the_counted_flops_match_the_problems_formula_for_a_naive_matmul() -> None:
    (kernel,) = parse_raw_page(RAW)
    # Every multiply-add of C = A·B is one FFMA: 4096^3 of them, two FLOPs each, as the problem's formula says.
    assert kernel.flops == 2 * 4096**3
    assert kernel.tensor_instructions == 0


def test_the_top_stall_is_waiting_on_memory_and_shares_add_up() -> None:
    (kernel,) = parse_raw_page(RAW)
    assert [s.name for s in kernel.stalls][:1] == ["long_scoreboard"]
    assert kernel.stalls[0].cycles_per_issue == pytest.approx(33.609427)
    assert "selected" not in {s.name for s in kernel.stalls}
    assert len(kernel.stalls) == 4
    assert all(0 < s.share <= 1 for s in kernel.stalls)
    assert kernel.stalls[0].share > 0.9


def _with_rows(extra: list[str]) -> str:
    lines = RAW.splitlines()
    return "\n".join([*lines, *extra]) + "\n"


def test_launches_of_one_kernel_are_summed_and_kernels_ordered_by_time() -> None:
    lines = RAW.splitlines()
    header = next(line for line in lines if line.startswith('"ID"'))
    names = [c.strip('"') for c in header.split('","')]
    launch = lines[-1]
    # A second launch of the same kernel, and a short other kernel.
    other = launch.replace("matmul_kernel(", "fill_kernel(").replace('"47.601728"', '"0.002000"')
    kernels = parse_raw_page(_with_rows([launch.replace('"0"', '"1"', 1), other]))
    assert [k.name for k in kernels] == ["matmul_kernel", "fill_kernel"]
    matmul = kernels[0]
    assert matmul.launches == 2
    assert matmul.duration_us == pytest.approx(2 * 47_601.728)
    assert matmul.flops == 2 * 2 * 4096**3
    assert "gpu__time_duration.sum" in names


def test_a_metric_that_was_not_collected_is_none_not_zero() -> None:
    lines = RAW.splitlines()
    page = "\n".join([*lines[:-1], lines[-1].replace('"32"', '"n/a"')])
    (kernel,) = parse_raw_page(page)
    assert kernel.registers_per_thread is None


def test_output_without_a_raw_page_is_an_error() -> None:
    with pytest.raises(NcuReportError, match="raw page"):
        parse_raw_page("==PROF== Disconnected from process 42\n")


@pytest.mark.parametrize(
    ("signature", "name"),
    [
        ("matmul_kernel(const float *, float *)", "matmul_kernel"),
        ("void gemm<float, 128>(const float *, int)", "gemm<float, 128>"),
        (
            "at::native::vectorized_elementwise_kernel<4, (anonymous namespace)::Op>(int, T1)",
            "at::native::vectorized_elementwise_kernel<4, (anonymous namespace)::Op>",
        ),
        ("triton_poi_fused_add_0", "triton_poi_fused_add_0"),
    ],
)
def test_kernel_names_lose_their_parameter_list(signature: str, name: str) -> None:
    assert short_name(signature) == name


# Three reports recorded on an H100 by tests/fixtures/ncu/record.py, the runner's own ncu command on case 3
# (m = n = k = 4096) of matrix-multiplication: an FP32 tiled kernel on the CUDA cores (FFMA only), a WMMA kernel
# (HMMA.16816) and cuBLAS through torch.matmul (HGMMA, Hopper's warpgroup MMA), both in float16.
TILED = (FIXTURES / "matmul_tiled_fp32_h100.raw.csv").read_text(encoding="utf-8")
WMMA = (FIXTURES / "matmul_wmma_fp16_h100.raw.csv").read_text(encoding="utf-8")
CUBLAS = (FIXTURES / "matmul_torch_fp16_h100.raw.csv").read_text(encoding="utf-8")
FORMULA = 2 * 4096**3


def _figure(page: str, metric: str) -> float:
    (row,) = read_rows(page)
    value = row.number(metric)
    assert value is not None, metric
    return value


def test_an_ffma_only_kernel_ran_no_tensor_core_math_though_the_tensor_pipe_counted_its_register_moves() -> None:
    (kernel,) = parse_raw_page(TILED)
    assert kernel.name == "matmul_tiled"
    # The counter the report used to read: nonzero, and every one of them an HFMA2.MMA (the compiler's way of
    # zeroing a register: `HFMA2.MMA R19, -RZ, RZ, 0, 0` in the recorded SASS), no matrix instruction.
    pipe = _figure(TILED, "sm__inst_executed_pipe_tensor.sum")
    assert pipe == 68_157_440
    assert _figure(TILED, "sm__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum") == pipe
    assert _figure(TILED, "sm__inst_executed_pipe_tensor_op_hmma.sum") == pipe  # the HMMA counter counts them too
    assert "HFMA2.MMA R19, -RZ, RZ, 0, 0" in (FIXTURES / "matmul_tiled_fp32_h100.sass").read_text(encoding="utf-8")
    assert "HMMA" not in (FIXTURES / "matmul_tiled_fp32_h100.sass").read_text(encoding="utf-8")
    assert kernel.tensor_instructions == 0
    assert kernel.tensor_flops == 0


def test_an_ffma_only_kernels_flops_are_the_formulas_and_its_register_moves_as_half_fmas() -> None:
    (kernel,) = parse_raw_page(TILED)
    ffma = _figure(TILED, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum")
    hfma = _figure(TILED, "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum")
    assert 2 * ffma == FORMULA  # one FFMA per multiply-add of C = A·B
    # The SASS counters take each HFMA2.MMA move for a half FMA, 32 threads a warp instruction: 3 % over the formula.
    assert hfma == 32 * _figure(TILED, "sm__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum")
    assert kernel.flops == FORMULA + 2 * hfma
    assert kernel.flops is not None and 1.0 < kernel.flops / FORMULA < 1.04


@pytest.mark.parametrize(
    ("page", "name", "instructions"),
    [
        (WMMA, "matmul_wmma", 33_554_432),  # 4096³ multiply-adds, 2048 in each HMMA.16816 (16·8·16)
        (CUBLAS, "nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_NNT", 2_097_152),  # warp instructions of HGMMA
    ],
)
def test_a_tensor_core_gemms_flops_are_counted_from_the_tensor_path(page: str, name: str, instructions: int) -> None:
    (kernel,) = parse_raw_page(page)
    assert kernel.name == name
    assert kernel.tensor_flops == FORMULA  # every multiply-add of the 4096³ GEMM, two ops each
    assert kernel.flops == FORMULA  # nothing on the CUDA cores' FP counters: all of it is the tensor cores'
    assert kernel.tensor_instructions == instructions
    assert kernel.tensor_instructions == _figure(page, "sm__inst_executed_pipe_tensor.sum")


def test_hoppers_warpgroup_mma_is_seen_by_the_gmma_counter_and_wmma_by_hmma_alone() -> None:
    assert _figure(CUBLAS, "sm__inst_executed_pipe_tensor_op_gmma.sum") == 2_097_152
    assert _figure(WMMA, "sm__inst_executed_pipe_tensor_op_gmma.sum") == 0
    assert _figure(WMMA, "sm__inst_executed_pipe_tensor_op_hmma.sum") == 33_554_432
    assert "HMMA.16816.F32" in (FIXTURES / "matmul_wmma_fp16_h100.sass").read_text(encoding="utf-8")


def test_launches_of_a_tensor_core_kernel_sum_their_tensor_flops() -> None:
    lines = WMMA.splitlines()
    kernels = parse_raw_page("\n".join([*lines, lines[-1].replace('"0"', '"1"', 1)]) + "\n")
    (kernel,) = kernels
    assert kernel.launches == 2
    assert kernel.tensor_flops == 2 * FORMULA and kernel.flops == 2 * FORMULA
    assert kernel.tensor_instructions == 2 * 33_554_432


def test_a_page_without_the_tensor_paths_counters_knows_instructions_but_not_their_flops() -> None:
    # The naive matmul's page was recorded before the profile asked for the tensor path's ops counters.
    (kernel,) = parse_raw_page(RAW)
    assert kernel.tensor_flops is None and kernel.tensor_instructions == 0


def _without(page: str, metric: str) -> str:
    """`page` as a GPU without `metric` would print it: the figure reads "n/a"."""
    lines = page.splitlines()
    header = next(csv.reader([next(line for line in lines if line.startswith('"ID"'))]))
    row = next(csv.reader([lines[-1]]))
    row[header.index(metric)] = "n/a"
    return "\n".join([*lines[:-1], ",".join(f'"{cell}"' for cell in row)]) + "\n"


def test_matrix_instructions_whose_ops_no_counter_saw_are_said_to_be_missing_from_the_flops() -> None:
    page = _without(WMMA, "sm__ops_path_tensor_src_fp16.sum")
    (kernel,) = parse_raw_page(page)
    # Hopper has no top-level fp16_dst_fp32 counter (Ampere's name): nothing else counts the fp16 ops.
    assert kernel.tensor_flops == 0 and kernel.flops == 0
    assert kernel.tensor_instructions == 33_554_432
    lines = _summary(page, 2)
    assert lines["FLOP"] == "0 FLOP counted, formula 137.44 GFLOP (0.00×)"
    assert lines["tensor cores"] == (
        "33,554,432 tensor-core instructions ran: their FLOPs are not counted by the SASS counters, so the count "
        "above is short of the work done"
    )


def test_every_tensor_counter_the_reader_uses_is_one_the_profile_asks_for() -> None:
    for name in (TENSOR_PIPE, TENSOR_PIPE_HFMA2, *TENSOR_OPS_COUNTERS):
        assert name in EXTRA_METRICS
    assert "sm__inst_executed_pipe_tensor_op_gmma.sum" in EXTRA_METRICS
    assert "sm__inst_executed_pipe_tensor_op_hmma.sum" in EXTRA_METRICS


def _summary(page: str, dtype_bytes: int) -> dict[str, str]:
    report = ProfileReport(
        case_index=3,
        case_name="m=4096,n=4096,k=4096",
        kernels=parse_raw_page(page),
        kernel_count=1,
        formula_flops=FORMULA,
        formula_bytes=3 * 4096 * 4096 * dtype_bytes,
    )
    return dict(summary(report).lines())


def test_the_fp32_tiled_kernels_summary_has_no_tensor_note_and_its_flops_beside_the_formula() -> None:
    lines = _summary(TILED, 4)
    assert "tensor cores" not in lines
    assert lines["FLOP"] == "141.80 GFLOP counted, formula 137.44 GFLOP (1.03×)"


@pytest.mark.parametrize(("page", "instructions"), [(WMMA, "33,554,432"), (CUBLAS, "2,097,152")])
def test_a_tensor_core_gemms_summary_says_so_and_counts_its_flops(page: str, instructions: str) -> None:
    lines = _summary(page, 2)
    assert lines["FLOP"] == "137.44 GFLOP counted, formula 137.44 GFLOP (1.00×)"
    assert lines["tensor cores"] == (
        f"137.44 GFLOP of the count above ran on the tensor cores ({instructions} matrix instructions)"
    )


def test_without_the_hfma2_counter_a_kernel_with_no_tensor_op_ran_no_matrix_instruction() -> None:
    # A GPU without the HFMA2.MMA figure: the FP32 kernel's register moves must still not read as tensor-core work.
    (kernel,) = parse_raw_page(_without(TILED, TENSOR_PIPE_HFMA2))
    assert kernel.tensor_flops == 0 and kernel.tensor_instructions == 0
    assert "tensor cores" not in _summary(_without(TILED, TENSOR_PIPE_HFMA2), 4)
    (kernel,) = parse_raw_page(_without(WMMA, TENSOR_PIPE_HFMA2))
    assert kernel.tensor_instructions == 33_554_432
