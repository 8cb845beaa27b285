"""The CLI and Discord show one result with the same figures, digit for digit: both format through
`core.views.result`."""

from __future__ import annotations

import re

from arena.render import render_result as render_cli
from bot.ui.embeds import render_result as render_embed
from contract.names import HOST_BOUND_LINE
from contract.wire import CaseTiming, SubmissionResult
from core.views.result import CASE_HEADERS


def _timing(index: int, runtime_us: float, gflops: float, flops: int) -> CaseTiming:
    return CaseTiming(
        index=index, name=f"case{index}", dims=[index + 1], method="seed", runtime_median_us=runtime_us,
        runtime_mean_us=runtime_us * 1.0734, gflops=gflops, gflops_mean=gflops * 0.98, gbps=gflops / 7.3,
        flops=flops, bytes=12_345, samples=100 + index, cv=0.012345 * (index + 1), converged=True,
    )  # fmt: skip


RESULT = SubmissionResult(
    submission_id="9", problem_slug="matmul", problem_version=1, dtype="float32", language="cuda", mode="ranked",
    status="passed", device="NVIDIA H100 80GB HBM3",
    timings=[
        _timing(0, 0.98765, 0.123456, 10),  # sub-microsecond, a rate under 1
        _timing(1, 12.3456, 45.6789, 10**6),  # a rate between 1 and 100
        _timing(2, 4567.891, 98_765.4321, 10**9),  # milliseconds, thousands separators
        _timing(3, 2_345_678.9, 3.5, 0),  # seconds, no arithmetic: no GFLOPS figure
    ],
    geomean_gflops=1234.5678, mean_gflops=24_702.9, geomean_gbps=56.789, mean_gbps=3383.9,
)  # fmt: skip


def _cells(line: str) -> list[str]:
    # Columns are separated by at least two spaces; a figure holds at most one ("1.234 ms").
    return re.split(r"\s{2,}", line.strip())


def _case_lines(text: str) -> dict[str, list[str]]:
    return {
        cells[0]: cells for line in text.splitlines() if (cells := _cells(line)) and re.fullmatch(r"case\d+", cells[0])
    }


def test_the_cli_table_and_the_discord_embed_show_the_same_figures_for_each_case() -> None:
    cli = _case_lines(render_cli(RESULT))
    embed = render_embed(9, RESULT, None)
    table = (embed.description or "").split("```")[1]
    discord = _case_lines(table)
    assert sorted(cli) == sorted(discord) == [f"case{i}" for i in range(4)]
    columns = len(CASE_HEADERS)
    for name, cells in cli.items():
        assert cells[:columns] == discord[name][:columns], name
    # The figures themselves, as both show them.
    assert cli["case0"][:columns] == ["case0", "0.988 µs", "1.060 µs", "0.123", "0.0169", "100", "1.23%"]
    assert cli["case2"][1:4] == ["4.568 ms", "4.903 ms", "98,765"]
    assert cli["case3"][1:4] == ["2.346 s", "2.518 s", "-"]
    # The header row names the same columns.
    assert _cells(render_cli(RESULT).splitlines()[2]) == list(CASE_HEADERS)
    assert _cells(table.strip().splitlines()[0])[:columns] == list(CASE_HEADERS)


def test_the_summary_and_the_timing_method_read_the_same_in_both() -> None:
    cli = render_cli(RESULT)
    fields = {f.name: f.value for f in render_embed(9, RESULT, None).fields}
    assert "geometric mean: 1,235 GFLOPS" in cli and fields["Geometric mean GFLOPS"] == "1,235"
    assert "(arithmetic mean: 24,703 GFLOPS)" in cli and fields["Arithmetic mean GFLOPS"] == "24,703"
    assert "timing method: seed" in cli and "seed" in fields["Timing"]


def test_a_host_bound_case_is_named_in_one_line_by_the_cli_discord_and_the_web() -> None:
    from web.html import esc
    from web.result_parts import timing_part

    bound = RESULT.model_copy(
        update={"timings": [t.model_copy(update={"host_bound": t.index == 1}) for t in RESULT.timings]}
    )
    line = f"{HOST_BOUND_LINE} (case1)"
    assert line in render_cli(bound).splitlines()
    fields = {f.name: f.value for f in render_embed(9, bound, None).fields}
    assert line in (fields["Timing"] or "")
    assert str(esc(f"{line}.")) in str(timing_part(bound, None, 9))
    for shown in (render_cli(RESULT), str(timing_part(RESULT, None, 9))):
        assert "host-bound" not in shown
    every = RESULT.model_copy(update={"timings": [t.model_copy(update={"host_bound": True}) for t in RESULT.timings]})
    assert f"{HOST_BOUND_LINE} (every case)" in render_cli(every)
