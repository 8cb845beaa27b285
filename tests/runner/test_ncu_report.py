"""Reading Nsight Compute's raw page: a real report recorded on an H100 (tests/fixtures/ncu/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.profiling.ncu_report import NcuReportError, parse_raw_page, short_name

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
