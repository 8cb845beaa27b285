"""Embeds for submissions: live progress, the final GFLOPS table, errors. Pure functions of core data."""

from __future__ import annotations

from dataclasses import dataclass

import discord

from bot.core.gpus import GpuSpec
from runner.api import CaseTiming, JobEvent, SubmissionResult

# Discord's limits (discord.py embeds.py): title 256, description 4096, field value 1024, 25 fields, 6000 total.
TITLE_LIMIT = 256
DESCRIPTION_LIMIT = 4096
FIELD_LIMIT = 1024
CODE_BLOCK_LIMIT = 900

COLOUR_OK = discord.Colour.green()
COLOUR_FAIL = discord.Colour.red()
COLOUR_PENDING = discord.Colour.blurple()


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
        return f"#{self.after} (unchanged)"


def escape_code(text: str, limit: int = CODE_BLOCK_LIMIT) -> str:
    """Text safe inside a ``` block: no closing fence, mentions defused, cut to `limit` characters."""
    text = text.replace("```", "`\u200b``").replace("@", "@\u200b")
    if len(text) > limit:
        text = text[: limit - 20] + "\n… (truncated)"
    return text


def format_runtime(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.2f} s"
    if us >= 1e3:
        return f"{us / 1e3:.2f} ms"
    return f"{us:.2f} µs"


def _rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


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
    """A fixed-width table of the timed cases, for a code block."""
    rows = [("case", "runtime", "GFLOPS", "GB/s", "of peak")]
    for t in result.timings:
        rows.append(
            (
                t.name,
                format_runtime(t.runtime_median_us),
                _rate(t.gflops),
                _rate(t.gbps),
                _peak_percent(t, result, spec),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
        for r in rows
    ]
    return "\n".join(lines)


def render_progress(slug: str, submission_id: str, status: str, events: list[JobEvent]) -> discord.Embed:
    """The live message: one line per phase reached so far."""
    lines: list[str] = []
    for event in events:
        if event.type == "compiling":
            lines.append("⏳ compiling with nvcc…" if event.phase == "nvcc" else "⏳ importing your module…")
        elif event.type == "compiled":
            lines[-1:] = [f"✅ compiled {event.message}".rstrip()]
        elif event.type == "test_case" and event.test is not None:
            mark = "✅" if event.test.passed else "❌"
            lines.append(f"{mark} test {event.index + 1}/{event.count} `{event.test.name}`")  # type: ignore[operator]
        elif event.type == "benchmark_case" and event.timing is not None:
            t = event.timing
            lines.append(
                f"⏱️ benchmark {event.index + 1}/{event.count} `{t.name}`: "  # type: ignore[operator]
                f"{format_runtime(t.runtime_median_us)}, {_rate(t.gflops)} GFLOPS"
            )
    body = "\n".join(lines[-20:]) or status
    embed = discord.Embed(title=f"Submission #{submission_id} · {slug}"[:TITLE_LIMIT], colour=COLOUR_PENDING)
    embed.description = f"{status}\n{body}"[:DESCRIPTION_LIMIT] if lines else status
    return embed


def render_result(
    submission_id: str, result: SubmissionResult, spec: GpuSpec | None, rank: RankChange | None = None
) -> discord.Embed:
    """The final embed: verdict, per-case table, geometric mean and rank change; or what went wrong."""
    title = f"Submission #{submission_id} · {result.problem_slug} · {result.dtype}"
    passed = result.status == "passed"
    embed = discord.Embed(title=title[:TITLE_LIMIT], colour=COLOUR_OK if passed else COLOUR_FAIL)
    embed.set_footer(text=f"{result.language} · {result.mode} · {result.device}"[:2048])
    if result.error is not None:
        embed.description = _error_text(result)[:DESCRIPTION_LIMIT]
        return embed
    if not result.timings:
        embed.description = f"✅ All {len(result.tests)} test cases passed."
        return embed
    unit = "GFLOPS" if result.score_metric == "gflops" else "GB/s"
    score = result.score
    embed.description = f"```\n{escape_code(case_table(result, spec), 3900)}\n```"
    embed.add_field(name=f"Geometric mean {unit}", value=_rate(score) if score is not None else "-", inline=True)
    if result.mean_gflops is not None and result.score_metric == "gflops":
        embed.add_field(name="Arithmetic mean GFLOPS", value=_rate(result.mean_gflops), inline=True)
    if rank is not None:
        embed.add_field(name="Leaderboard", value=rank.describe(), inline=True)
    method = result.timings[0].method
    embed.add_field(name="Timing", value=f"median of `{method}` samples, cold L2", inline=False)
    return embed


def _error_text(result: SubmissionResult) -> str:
    error = result.error
    assert error is not None
    text = f"❌ **{error.code.replace('_', ' ')}**: {error.message}"
    if error.log:
        text += f"\n```\n{escape_code(error.log)}\n```"
        if len(error.log) > CODE_BLOCK_LIMIT:
            text += "\nThe full log is attached."
    return text


def render_user_error(message: str) -> discord.Embed:
    return discord.Embed(description=f"❌ {message}"[:DESCRIPTION_LIMIT], colour=COLOUR_FAIL)


def render_internal_error(incident_id: str) -> discord.Embed:
    return discord.Embed(
        description=f"Sorry, something went wrong on our side. Error id `{incident_id}`; tell a moderator if it "
        "happens again.",
        colour=COLOUR_FAIL,
    )
