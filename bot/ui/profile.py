"""The final message of a profile (mode `profile`): the summary, one field per kernel, and the profile's files.

Every figure comes from `core.views.profile`, as the CLI's do. The files are the roofline chart and the profile's
artifacts (the full text report, the .ncu-rep, the PTX and SASS), decoded, as many as fit in one message.
"""

from __future__ import annotations

import discord

from bot.ui.embeds import (
    CHART_FILE,
    COLOUR_FAIL,
    COLOUR_OK,
    DESCRIPTION_LIMIT,
    FIELD_LIMIT,
    FIELD_NAME_LIMIT,
    FOOTER_LIMIT,
    TITLE_LIMIT,
    SubmissionHeader,
    clip,
    fit,
)
from contract.wire import ProfileReport, SubmissionResult
from core.views import profile as profile_view

# The runner sends its top kernels (five); a field each keeps the embed far from Discord's 25.
KERNEL_FIELDS = 5
# Discord refuses a message whose files exceed the upload limit (8 MiB where a server has no boost for it): the
# chart and the artifacts stay under 8 MB together. At most 7 artifacts: with the chart, a long error log and the
# source file that /submission adds, a message holds Discord's 10 files at most.
ATTACHMENT_BUDGET = 8_000_000
MAX_ARTIFACT_FILES = 7
# Which artifacts claim the budget first: the report people read, then the one Nsight Compute's window opens, then
# the code it ran.
ARTIFACT_ORDER = ("profile.txt", "profile.ncu-rep", "solution.ptx", "solution.sass")
# Which figures of a kernel share a line of its field.
FIELD_LINES = (
    ("time", "SM throughput", "mem throughput"),
    ("occupancy", "regs", "smem/block"),
    ("block", "grid"),
    ("DRAM read / written", "FLOP"),
    ("top stalls",),
)


Files = list[tuple[str, bytes]]


def _claim_order(name: str) -> int:
    return ARTIFACT_ORDER.index(name) if name in ARTIFACT_ORDER else len(ARTIFACT_ORDER)


def profile_files(report: ProfileReport, chart: bytes | None) -> tuple[Files, list[str]]:
    """The chart and the decoded artifacts that fit in one message, and a note for each artifact left out.

    Sizes are read from the base64 length, so an artifact that cannot fit is never decoded."""
    files: Files = [] if chart is None else [(CHART_FILE, chart)]
    room = ATTACHMENT_BUDGET - sum(len(data) for _, data in files)
    left_out: list[str] = []
    taken = 0
    for artifact in sorted(report.artifacts, key=lambda a: _claim_order(a.name)):
        name = profile_view.artifact_file_name(artifact)
        size = profile_view.artifact_size(artifact)
        if size > room or taken == MAX_ARTIFACT_FILES:
            left_out.append(f"{name} ({profile_view.format_amount(size, 'B')})")
            continue
        data = profile_view.decode_artifact(artifact)
        if data is None:
            left_out.append(f"{name} (not valid base64)")
            continue
        files.append((name, data))
        room -= len(data)
        taken += 1
    return files, left_out


def kernel_field(index: int, row: profile_view.KernelRow) -> tuple[str, str]:
    """A kernel's field: its name, and its figures labelled as the CLI's table heads them."""
    cells = dict(row.labelled())
    lines = [" · ".join(f"{label} {cells[label]}" for label in line) for line in FIELD_LINES]
    # In a code span: a template's `*` or `_` would otherwise be read as Markdown.
    name = clip(row.name.replace("`", "ˋ"), FIELD_NAME_LIMIT - 10)
    return f"#{index} `{name}`", clip("\n".join(lines), FIELD_LIMIT)


def _description(result: SubmissionResult, report: ProfileReport, attached: list[str], left_out: list[str]) -> str:
    tests = len(result.tests)
    passed = f"✅ All {tests} test cases passed, then " if tests and result.status == "passed" else ""
    lines = [f"{passed}one case ran once under the profiler. A profile is never ranked.", ""]
    if report.kernels:
        lines += [f"**{label}** {text}" for label, text in profile_view.summary(report).lines()]
    else:
        lines.append(profile_view.NO_KERNELS)
    if attached:
        lines.append(f"**files** {', '.join(attached)}")
    if left_out:
        lines.append(
            f"**left out** {', '.join(left_out)}: over what one Discord message holds. "
            "`arena submit --mode profile --profile-dir DIR` saves every file."
        )
    return clip("\n".join(lines), DESCRIPTION_LIMIT)


def render_profile(
    header: SubmissionHeader | None,
    result: SubmissionResult,
    *,
    attached: list[str],
    left_out: list[str],
    chart: bool,
) -> discord.Embed:
    """The profile's embed: the summary in the description, one field per kernel (the longest first).

    `attached` and `left_out` name the profile's files sent with it and those that did not fit; with `chart`, the
    embed shows the attachment `roofline.png`.
    """
    report = result.profile
    assert report is not None, "render_profile takes a result of mode `profile`"
    title = header.title if header else f"Submission #{result.submission_id} · {result.problem_slug} · {result.dtype}"
    passed = result.status == "passed"
    embed = discord.Embed(
        title=clip(f"🔬 {title}", TITLE_LIMIT),
        description=_description(result, report, attached, left_out),
        colour=COLOUR_OK if passed else COLOUR_FAIL,
    )
    footer = header.footer if header else f"{result.language} · {result.mode}"
    embed.set_footer(text=f"{footer} · {result.device}"[:FOOTER_LIMIT])
    for index, row in enumerate(profile_view.kernel_rows(report)[:KERNEL_FIELDS], start=1):
        name, value = kernel_field(index, row)
        embed.add_field(name=name, value=value, inline=False)
    if (hidden := len(report.kernels) - KERNEL_FIELDS) > 0:
        embed.add_field(name="More kernels", value=f"{hidden} more, in profile.txt", inline=False)
    if report.notes:
        embed.add_field(name="Profiler notes", value=clip("; ".join(report.notes), FIELD_LIMIT), inline=False)
    if result.notes:
        embed.add_field(name="Notes for reviewers", value=clip("; ".join(result.notes), FIELD_LIMIT), inline=False)
    if result.error is not None:
        error = f"{result.error.code.replace('_', ' ')}: {result.error.message}"
        embed.add_field(name="Error", value=clip(error, FIELD_LIMIT), inline=False)
    if chart:
        embed.set_image(url=f"attachment://{CHART_FILE}")
    return fit(embed)
