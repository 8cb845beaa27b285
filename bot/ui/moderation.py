"""Embeds for moderators: a problem's admission report, the runners and the queue, action receipts."""

from __future__ import annotations

import discord

from bot.runners import RunnerStatus
from bot.ui.embeds import (
    COLOUR_FAIL,
    COLOUR_INFO,
    COLOUR_OK,
    DESCRIPTION_LIMIT,
    FIELD_LIMIT,
    TITLE_LIMIT,
    clip,
    escape_code,
    fit,
)
from core.admission import Candidate
from core.store.moderation import AuditEntry
from core.store.problems import ProblemVersion

MAX_FIELDS = 25


def render_admission(candidate: Candidate) -> discord.Embed:
    """The self-test's checks, and what publishing will do."""
    info, report = candidate.info, candidate.report
    verdict = "✅ passed" if candidate.publishable else "❌ failed"
    embed = discord.Embed(
        title=clip(f"Admission self-test of `{info.slug}`: {verdict}", TITLE_LIMIT),
        colour=COLOUR_OK if candidate.publishable else COLOUR_FAIL,
    )
    lines = [f"**{info.title}** · {info.difficulty} · {', '.join(info.dtypes)} · scored by {info.score_metric}"]
    lines.append(f"Ran on `{candidate.validator}` ({report.device}).")
    if report.error is not None:
        lines.append(f"❌ **{report.error.code.replace('_', ' ')}**: {clip(report.error.message, 1500)}")
        if report.error.log:
            lines.append(f"```\n{escape_code(report.error.log, 1200)}\n```")
    if report.ok and report.slug not in (None, info.slug):
        lines.append(f"❌ The runner loaded `{report.slug}`, but the module reads as `{info.slug}`.")
    if candidate.publishable:
        if candidate.existing is None:
            lines.append("Publishing creates the problem and opens it for submissions.")
        else:
            lines.append(
                f"`{info.slug}` exists (v{candidate.existing.version}): publishing adds the next version; "
                "earlier boards stay as they are."
            )
    embed.description = clip("\n".join(lines), DESCRIPTION_LIMIT)
    by_case: dict[str, list[str]] = {}
    for check in report.checks:
        mark = "✅" if check.ok else "❌"
        by_case.setdefault(check.case, []).append(f"{mark} {check.check} → {check.expect}")
    for case, checks in list(by_case.items())[:MAX_FIELDS]:
        embed.add_field(name=clip(case, 256), value=clip("\n".join(checks), FIELD_LIMIT))
    return fit(embed)


def render_published(problem: ProblemVersion) -> discord.Embed:
    return discord.Embed(
        title=clip(f"Published `{problem.slug}` v{problem.version}", TITLE_LIMIT),
        description=f"**{problem.title}** is open for submissions: `/submit problem:{problem.slug}`.",
        colour=COLOUR_OK,
    )


def render_runners(statuses: list[RunnerStatus], jobs_by_state: dict[str, int], inflight: int) -> discord.Embed:
    """Each runner's health, slots and queue; the job queue in the store."""
    embed = discord.Embed(title="Runners", colour=COLOUR_INFO)
    queue = ", ".join(f"{state} {n}" for state, n in sorted(jobs_by_state.items())) or "empty"
    embed.description = f"Jobs in the store: {queue}. Running from this bot: {inflight}."
    if not statuses:
        embed.description += (
            "\nNo runner has joined a pool (`arena fleet token create`, then `arena runner serve --join`)."
        )
    for status in statuses[:MAX_FIELDS]:
        kind = f"pool · {status.state}" if status.kind == "fleet" else status.kind
        lines = [f"GPU type `{status.gpu_type}` · {kind} · {status.slots} slot(s)"]
        if status.quarantine is not None:
            lines.append(f"🔒 quarantined, no ranked job: {clip(status.quarantine, 300)}")
        health = status.health
        if status.refused is not None:
            lines.append(f"⛔ refused, no job goes to it: {clip(status.refused, 300)}")
        if status.error is not None:
            lines.append(f"❌ unreachable: {clip(status.error, 300)}")
        elif health is not None:
            gpus = ", ".join(g.name for g in health.gpus) or health.device
            lines.append(f"{'✅' if health.status == 'ok' else '⚠️'} {health.status} · {gpus}")
            lines.append(
                f"free slots {health.free_slots}/{health.slots} · queue {health.queue_depth}/{health.max_queue}"
            )
            versions = [f"torch {health.torch}" if health.torch else "", f"nvcc {health.nvcc}" if health.nvcc else ""]
            lines.append(f"sandbox {health.sandbox} · {' · '.join(v for v in versions if v) or 'no toolchain info'}")
        elif status.kind == "local":
            lines.append("runs on this machine, in sandboxed worker processes")
        embed.add_field(name=clip(status.name, 256), value=clip("\n".join(lines), FIELD_LIMIT), inline=False)
    return fit(embed)


def render_audit(entries: list[AuditEntry], target: str | None) -> discord.Embed:
    """The latest moderator actions, newest first: when, who, what, on what, and why."""
    where = f" on `{target}`" if target else ""
    embed = discord.Embed(title=clip(f"Audit log{where}", TITLE_LIMIT), colour=COLOUR_INFO)
    if not entries:
        embed.description = f"No moderator action{where} is recorded."
        return embed
    lines = []
    for entry in entries:
        who = entry.actor_name or "the system"
        line = f"`#{entry.id}` <t:{int(entry.created_at.timestamp())}:f> · **{clip(who, 64)}** {entry.action}"
        line += f" `{clip(entry.target, 80)}`"
        if entry.reason:
            line += f" · {clip(entry.reason, 200)}"
        lines.append(line)
    embed.description = clip("\n".join(lines), DESCRIPTION_LIMIT)
    embed.set_footer(text=f"{len(entries)} newest entr{'y' if len(entries) == 1 else 'ies'}")
    return embed
