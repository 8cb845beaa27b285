"""Embeds for submissions: the receipt, live progress, the final GFLOPS table, errors. Pure functions of core data.

Every embed respects Discord's limits (discord.py embeds.py): title 256, description 4096, field name 256,
field value 1024, 25 fields, footer 2048, 6000 characters in all.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import discord

from contract.wire import CaseTiming, JobEvent, SubmissionResult, TestOutcome
from core.contests.entry import ContestEntries, receipt_line
from core.progress import ProgressState, describe_place, describe_start
from core.submit.distributed import board_world_size
from core.submit.service import SubmitTicket
from core.views.result import (
    CASE_HEADERS,
    case_rate,
    case_rows,
    format_duration_us,
    method_label,
    summary,
    timing_caveat,
)
from core.views.result import format_rate as format_rate  # the other embeds format rates the same way
from runner.gpus import GpuSpec

TITLE_LIMIT = 256
DESCRIPTION_LIMIT = 4096
FIELD_NAME_LIMIT = 256
FIELD_LIMIT = 1024
FOOTER_LIMIT = 2048
TOTAL_LIMIT = 6000
CODE_BLOCK_LIMIT = 900
PROGRESS_LINES = 20

COLOUR_OK = discord.Colour.green()
COLOUR_FAIL = discord.Colour.red()
COLOUR_PENDING = discord.Colour.blurple()
COLOUR_INFO = discord.Colour.dark_teal()

CHART_FILE = "roofline.png"


@dataclass(frozen=True)
class RankChange:
    """Where a ranked run left the user on the board: None means not on it."""

    before: int | None
    after: int | None

    def describe(self) -> str:
        if self.after is None:
            return "not on the leaderboard"
        if self.before is None:
            return f"entered the leaderboard at #{self.after}"
        if self.after < self.before:
            return f"#{self.before} → #{self.after} (up {self.before - self.after})"
        if self.after > self.before:
            return f"#{self.before} → #{self.after} (down {self.after - self.before})"
        return f"#{self.after} (unchanged)"


@dataclass(frozen=True)
class SubmissionHeader:
    """Who submitted what, shown on the live message and the final embed."""

    submission_id: int
    slug: str
    user_name: str
    file_name: str
    language: str
    dtype: str
    mode: str
    gpu_type: str
    # What `dtype` reads as for the problem (`uint32` for a finite-field problem's float32); empty: the key itself.
    data_type: str = ""
    # A ranked run: what it counts for (as accepted, then once judged: `judged`); None: no contest holds the problem.
    contests: ContestEntries | None = None

    @classmethod
    def of(cls, ticket: SubmitTicket) -> SubmissionHeader:
        return cls(
            ticket.submission_id, ticket.slug, ticket.user_name, ticket.file_name, ticket.language, ticket.dtype,
            ticket.mode, ticket.gpu_type, ticket.data_type, ticket.contests,
        )  # fmt: skip

    def judged(self, contests: ContestEntries | None) -> SubmissionHeader:
        """The header of the final message: what the run counts for once judged (the contest may have started,
        or the run failed, since it was accepted)."""
        return replace(self, contests=contests)

    @property
    def shown_dtype(self) -> str:
        """The dtype as people read it: the problem's data types, else the stored key."""
        return self.data_type or self.dtype

    @property
    def title(self) -> str:
        return f"Submission #{self.submission_id} · {self.slug} · {self.shown_dtype}"[:TITLE_LIMIT]

    @property
    def on(self) -> str:
        """Where it runs: the GPU type, and a distributed run's ranks, which its key (`cpux2`) only encodes."""
        return f"{self.gpu_type}{world_note(self.slug, self.gpu_type)}"

    @property
    def footer(self) -> str:
        return f"{self.user_name} · {self.file_name} · {self.language} · {self.mode} · {self.on}"[:FOOTER_LIMIT]


def world_note(slug: str, gpu_type: str) -> str:
    """` · 2 ranks` for a distributed problem's board (`cpux2`), as `arena leaderboard` says it; empty for one
    device."""
    ranks = board_world_size(slug, gpu_type)
    return f" · {ranks} ranks" if ranks > 1 else ""


def escape_code(text: str, limit: int = CODE_BLOCK_LIMIT) -> str:
    """Text safe inside a ``` block: no closing fence, mentions defused, cut to `limit` characters."""
    text = text.replace("```", "`\u200b``").replace("@", "@\u200b")
    if len(text) > limit:
        text = text[: limit - 20] + "\n… (truncated)"
    return text


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fit(embed: discord.Embed) -> discord.Embed:
    """Trim `embed` to Discord's 6000-character total: drop trailing fields (saying how many), then shorten
    the description."""
    dropped = 0
    while len(embed) > TOTAL_LIMIT and embed.fields:
        embed.remove_field(len(embed.fields) - 1)
        dropped += 1
    if dropped:
        note = f"\n… {dropped} more not shown."
        embed.description = clip(embed.description or "", DESCRIPTION_LIMIT - len(note)) + note
    excess = len(embed) - TOTAL_LIMIT
    if excess > 0 and embed.description:
        embed.description = clip(embed.description, max(1, len(embed.description) - excess))
    return embed


def _peak_percent(timing: CaseTiming, result: SubmissionResult, spec: GpuSpec | None) -> str:
    if spec is None:
        return "-"
    if result.score_metric == "gbps" or timing.flops == 0:
        return f"{timing.gbps / spec.bandwidth_gbps * 100:.1f}% BW"
    compute = timing.gflops / spec.peak_for(result.dtype)
    memory = timing.gbps / spec.bandwidth_gbps
    # The binding roof is whichever of compute or bandwidth the kernel is closer to.
    return f"{compute * 100:.1f}% FLOP" if compute >= memory else f"{memory * 100:.1f}% BW"


def case_table(result: SubmissionResult, spec: GpuSpec | None) -> str:
    """A fixed-width table of the timed cases, for a code block: the CLI's figures (`core.views.result`), and the
    share of the GPU's peak."""
    rows = [(*CASE_HEADERS, "of peak")]
    for t, row in zip(result.timings, case_rows(result), strict=True):
        rows.append((*row.cells(), _peak_percent(t, result, spec)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
        for r in rows
    ]
    return "\n".join(lines)


def _event_line(event: JobEvent) -> str | None:
    if event.type == "compiling":
        return "⏳ compiling with nvcc…" if event.phase == "nvcc" else "⏳ importing your module…"
    if event.type == "test_case" and event.test is not None and event.index is not None:
        mark = "✅" if event.test.passed else "❌"
        return f"{mark} test {event.index + 1}/{event.count} `{clip(event.test.name, 60)}`"
    if event.type == "benchmark_case" and event.timing is not None and event.index is not None:
        t = event.timing
        return (
            f"⏱️ benchmark {event.index + 1}/{event.count} `{clip(t.name, 60)}`: "
            f"{format_duration_us(t.runtime_median_us)}, {case_rate(t)}"
        )
    return None


def progress_lines(events: list[JobEvent]) -> list[str]:
    """One line per phase reached so far; a finished compile replaces its 'compiling' line."""
    lines: list[str] = []
    for event in events:
        if event.type == "compiled":
            done = f"✅ compiled {clip(event.message, 80)}".rstrip()
            if lines and lines[-1].startswith(("⏳ compiling", "⏳ importing")):
                lines[-1] = done
            else:
                lines.append(done)
        elif (line := _event_line(event)) is not None:
            lines.append(line)
    return lines


def render_receipt(
    header: SubmissionHeader, queue_position: int, size_bytes: int, start_in_s: float | None = None
) -> discord.Embed:
    """The private answer to /submit: the file arrived and is queued, and when it should start."""
    place = (
        f"queue position {describe_place(queue_position)}{describe_start(start_in_s, queue_position)}"
        if queue_position
        else "already known (same request)"
    )
    embed = discord.Embed(
        title=f"📥 Got `{clip(header.file_name, 100)}`"[:TITLE_LIMIT],
        description=(
            f"{header.language}, {size_bytes / 1024:.1f} KiB → **{header.slug}** · {header.shown_dtype} · "
            f"{header.mode} on `{header.gpu_type}`.\nSubmission **#{header.submission_id}**, {place}. "
            "Live progress follows below."
        ),
        colour=COLOUR_PENDING,
    )
    if (warning := receipt_line(header.contests)) is not None:
        # Said before the run, so that a run made just before a contest's start is not a surprise after it.
        embed.description = f"{embed.description}\n⚠️ {clip(warning, 1000)}"
    return embed


def render_progress(header: SubmissionHeader, state: ProgressState) -> discord.Embed:
    """The live message: where the submission is, then one line per phase reached so far."""
    lines = progress_lines(state.events)
    if len(lines) > PROGRESS_LINES:
        lines = ["…", *lines[-PROGRESS_LINES:]]
    body = "\n".join([f"**{state.status}**", *lines])
    embed = discord.Embed(title=header.title, description=body[:DESCRIPTION_LIMIT], colour=COLOUR_PENDING)
    embed.set_footer(text=header.footer)
    return embed


def render_result(
    submission_id: int | str,
    result: SubmissionResult,
    spec: GpuSpec | None,
    rank: RankChange | None = None,
    *,
    header: SubmissionHeader | None = None,
    chart: bool = False,
) -> discord.Embed:
    """The final embed: verdict, per-case table, geometric mean and rank change; or what went wrong.

    With `chart`, the embed shows the attachment `roofline.png` (send it with the message).
    """
    return fit(_result_embed(submission_id, result, spec, rank, header, chart))


def _result_embed(
    submission_id: int | str,
    result: SubmissionResult,
    spec: GpuSpec | None,
    rank: RankChange | None,
    header: SubmissionHeader | None,
    chart: bool,
) -> discord.Embed:
    title = header.title if header else f"Submission #{submission_id} · {result.problem_slug} · {result.dtype}"
    passed = result.status == "passed"
    embed = discord.Embed(title=title[:TITLE_LIMIT], colour=COLOUR_OK if passed else COLOUR_FAIL)
    footer = header.footer if header else f"{result.language} · {result.mode}"
    embed.set_footer(text=f"{footer} · {result.device}"[:FOOTER_LIMIT])
    if result.error is not None:
        embed.description = _error_text(result)[:DESCRIPTION_LIMIT]
        failing = next((t for t in result.tests if not t.passed), None)
        if failing is not None and failing.details:
            embed.add_field(name=clip(f"Failing case: {failing.name}", FIELD_NAME_LIMIT), value=_figures(failing))
        _add_contests(embed, header)
        return embed
    if not result.timings:
        embed.description = f"✅ All {len(result.tests)} test cases passed."
        return embed
    view = summary(result)
    tests = f"✅ {len(result.tests)}/{len(result.tests)} test cases passed.\n" if result.tests else ""
    embed.description = f"{tests}```\n{escape_code(case_table(result, spec), 3800)}\n```"
    embed.add_field(name=f"Geometric mean {view.unit}", value=view.geomean)
    mean = result.mean_gflops if result.score_metric == "gflops" else result.mean_gbps
    if mean is not None:
        embed.add_field(name=f"Arithmetic mean {view.unit}", value=view.mean)
    if rank is not None:
        embed.add_field(name="Leaderboard", value=rank.describe())
    _add_contests(embed, header)
    if result.notes:
        embed.add_field(name="Notes for reviewers", value=clip("; ".join(result.notes), 1024), inline=False)
    timing = method_label(result) or "-"
    if (caveat := timing_caveat(result)) is not None:
        timing += f"\n{caveat}"
    embed.add_field(name="Timing", value=clip(timing, 1024), inline=False)
    if chart:
        embed.set_image(url=f"attachment://{CHART_FILE}")
    return embed


def _add_contests(embed: discord.Embed, header: SubmissionHeader | None) -> None:
    """A ranked run's line: the contests it counts for, or why it counts for none."""
    if header is not None and header.contests is not None:
        embed.add_field(name="Contests", value=clip(header.contests.line, FIELD_LIMIT), inline=False)


def _figures(test: TestOutcome) -> str:
    d = test.details
    parts = []
    if "mismatches" in d and "total" in d:
        parts.append(f"{d['mismatches']:,} of {d['total']:,} elements differ")
    for key, label in (("max_abs_error", "max abs error"), ("max_rel_error", "max rel error")):
        if isinstance(d.get(key), int | float):
            parts.append(f"{label} {d[key]:.3g}")
    if d.get("first_mismatch_index") is not None:
        expected, actual = d.get("expected_at_mismatch"), d.get("actual_at_mismatch")
        parts.append(f"first at {d['first_mismatch_index']}: expected {expected}, got {actual}")
    text = "\n".join(parts) or test.message or "differs from the reference"
    return clip(escape_code(text, FIELD_LIMIT), FIELD_LIMIT)


def _error_text(result: SubmissionResult) -> str:
    error = result.error
    assert error is not None
    text = f"❌ **{error.code.replace('_', ' ')}**: {clip(error.message, 2000)}"
    if error.log:
        text += f"\n```\n{escape_code(error.log)}\n```"
        if len(error.log) > CODE_BLOCK_LIMIT:
            text += "\nThe full log is attached."
    return text


def log_attachment(result: SubmissionResult) -> tuple[str, bytes] | None:
    """The full compiler or runtime log, when the embed shows only its start."""
    error = result.error
    if error is None or not error.log or len(error.log) <= CODE_BLOCK_LIMIT:
        return None
    name = "compile.log" if error.code in ("compile_error", "syntax_error", "import_error") else "error.log"
    return name, error.log.encode("utf-8")


def render_announcement(
    header: SubmissionHeader, result: SubmissionResult, rank: int, score: float, *, personal_best: bool
) -> discord.Embed:
    """A public note for a personal best or a podium place."""
    unit = "GFLOPS" if result.score_metric == "gflops" else "GB/s"
    medal = {1: "🥇", 2: "🥈", 3: "🥉"}.get(rank, "🏅")
    what = "a new personal best" if personal_best else "a podium place"
    embed = discord.Embed(
        title=clip(f"{medal} {header.user_name}: {what} on {header.slug}", TITLE_LIMIT),
        description=(
            f"**#{rank}** on `{header.slug}` · `{header.gpu_type}`{world_note(header.slug, header.gpu_type)} · "
            f"{header.shown_dtype} with "
            f"**{format_rate(score)} {unit}** ({header.language}, submission #{header.submission_id})."
        ),
        colour=discord.Colour.gold(),
    )
    return embed


def render_user_error(message: str) -> discord.Embed:
    return discord.Embed(description=clip(f"❌ {message}", DESCRIPTION_LIMIT), colour=COLOUR_FAIL)


def render_internal_error(incident_id: str) -> discord.Embed:
    return discord.Embed(
        description=f"Sorry, something went wrong on our side. Error id `{incident_id}`; tell a moderator if it "
        "happens again.",
        colour=COLOUR_FAIL,
    )


def render_notice(message: str, *, title: str | None = None) -> discord.Embed:
    return discord.Embed(title=title, description=clip(message, DESCRIPTION_LIMIT), colour=COLOUR_INFO)
