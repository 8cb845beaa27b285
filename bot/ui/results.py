"""The final message of a submission: the result embed with its attachments (chart, full log, what the solution
printed, code)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field

import discord

from bot.ui.embeds import CHART_FILE, RankChange, SubmissionHeader, log_attachment, render_result
from bot.ui.output import add_output, output_attachment
from bot.ui.profile import profile_files, render_profile
from contract.wire import SubmissionResult
from core.charts import render_profile_roofline_png, render_roofline_png
from runner.gpus import GpuSpec


def as_files(files: Sequence[tuple[str, bytes]]) -> list[discord.File]:
    """Fresh discord.File objects (each can be sent once) for (name, bytes) pairs."""
    return [discord.File(io.BytesIO(data), filename=name) for name, data in files]


@dataclass
class ResultMessage:
    embed: discord.Embed
    files: list[tuple[str, bytes]] = field(default_factory=list)

    def file_names(self) -> list[str]:
        return [name for name, _ in self.files]


def result_message(
    header: SubmissionHeader, result: SubmissionResult, spec: GpuSpec | None, rank: RankChange | None = None
) -> ResultMessage:
    """Embed, roofline chart (for a passed, timed run) and the full log when the embed shows only its start; for
    a profile, its own embed with the chart and the profile's files.

    Draws a chart with matplotlib: call it through `asyncio.to_thread` from the event loop.
    """
    if result.profile is not None:
        return profile_message(header, result, spec)
    files: list[tuple[str, bytes]] = []
    chart = bool(result.timings) and result.status == "passed"
    if chart:
        files.append((CHART_FILE, render_roofline_png(result, spec)))
    if (log_file := log_attachment(result)) is not None:
        files.append(log_file)
    if (output_file := output_attachment(result)) is not None:
        files.append(output_file)
    embed = render_result(header.submission_id, result, spec, rank, header=header, chart=chart)
    return ResultMessage(add_output(embed, result), files)


def profile_message(header: SubmissionHeader | None, result: SubmissionResult, spec: GpuSpec | None) -> ResultMessage:
    """A profile's embed, its roofline chart (where Nsight Compute measured the call) and as many of its files as
    one message holds."""
    assert result.profile is not None, "profile_message takes a result of mode `profile`"
    chart = render_profile_roofline_png(result, spec) if result.profile.kernels else None
    files, left_out = profile_files(result.profile, chart)
    attached = [name for name, _ in files if name != CHART_FILE]
    embed = render_profile(header, result, attached=attached, left_out=left_out, chart=chart is not None)
    if (log_file := log_attachment(result)) is not None:
        files.append(log_file)
    return ResultMessage(embed, files)
