"""The CLI and Discord show one profile with the same figures, digit for digit: both format through
`core.views.profile`."""

from __future__ import annotations

import re

from arena.render import render_result as render_cli
from bot.ui.results import profile_message
from contract.wire import KernelProfile, StallReason
from core.views.profile import LAUNCH_HEADERS, TRAFFIC_HEADERS
from runner.gpus import GPU_SPECS
from tests.profile_fixture import profile_report, profile_result

FILL = KernelProfile(
    name="fill_kernel", launches=3, duration_us=12.3456, sm_throughput_pct=5.25, memory_throughput_pct=88.0,
    achieved_occupancy_pct=45.5, theoretical_occupancy_pct=50.0, registers_per_thread=16,
    shared_memory_per_block_bytes=49_152, block=(256, 1, 1), grid=(65_536, 1, 1), dram_bytes_read=512,
    dram_bytes_written=67_108_864, flops=0, tensor_instructions=0,
    stalls=[StallReason(name="lg_throttle", cycles_per_issue=3.0, share=0.75),
            StallReason(name="drain", cycles_per_issue=1.0, share=0.25)],
)  # fmt: skip
RESULT = profile_result(profile=profile_report(kernels=[*profile_report().kernels, FILL], kernel_count=4))


def _cells(line: str) -> list[str]:
    return re.split(r"\s{2,}", line.strip())


def _cli_figures(text: str) -> dict[str, list[str]]:
    """Per kernel, "header cell" for each figure of both CLI tables, in table order."""
    figures: dict[str, list[str]] = {}
    headers: list[str] = []
    for line in text.splitlines():
        cells = _cells(line)
        if cells[0] == "kernel":
            headers = cells
        elif set(line) <= {"-", " "} and headers:
            continue  # the rule under the header row
        elif headers and len(cells) == len(headers):
            figures.setdefault(cells[0], []).extend(f"{h} {c}" for h, c in zip(headers[1:], cells[1:], strict=True))
        else:
            headers = []
    return figures


def _embed_figures(fields: list[dict[str, str]]) -> dict[str, list[str]]:
    """Per kernel field, its "label figure" pieces, in the order they are shown."""
    return {
        field["name"].split(" ", 1)[1].strip("`"): [
            piece for line in field["value"].splitlines() for piece in line.split(" · ")
        ]
        for field in fields
        if field["name"].startswith("#")
    }


def test_each_kernel_shows_the_same_figures_in_the_cli_tables_and_its_discord_field() -> None:
    cli = _cli_figures(render_cli(RESULT))
    embed = profile_message(None, RESULT, GPU_SPECS["NVIDIA H100 80GB HBM3"]).embed.to_dict()
    discord = _embed_figures(embed["fields"])
    assert list(cli) == list(discord) == ["matmul_kernel", "fill_kernel ×3"]
    for kernel, figures in cli.items():
        assert figures == discord[kernel], kernel  # the same figures, in the same order
        assert len(figures) == len(LAUNCH_HEADERS) + len(TRAFFIC_HEADERS) - 2
    assert "smem/block 48 KiB" in discord["fill_kernel ×3"]
    assert "DRAM read / written 512 B / 67.11 MB" in discord["fill_kernel ×3"]
    assert "top stalls lg_throttle 75 %, drain 25 %" in discord["fill_kernel ×3"]


def test_the_summary_lines_read_the_same_in_both() -> None:
    cli = {
        label: text.strip()
        for line in render_cli(RESULT).splitlines()
        if (match := re.fullmatch(r"([a-zA-Z ]+):\s+(.*)", line)) is not None
        for label, text in [match.groups()]
    }
    description = profile_message(None, RESULT, None).embed.description or ""
    discord = dict(re.findall(r"^\*\*([^*]+)\*\* (.*)$", description, flags=re.MULTILINE))
    summary = ["profiled", "duration", "FLOP", "DRAM", "intensity", "achieved", "top stall"]
    assert {label: cli[label] for label in summary} == {label: discord[label] for label in summary}
    assert discord["duration"] == "47.61 ms over 4 kernel launches"
    # Discord shows each attached file's size itself; the CLI names the sizes.
    assert [f"{name} (" for name in discord["files"].split(", ")] == re.findall(r"[\w.-]+ \(", cli["files"])
