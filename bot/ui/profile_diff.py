"""The answer to `/profile diff`: two profiled runs side by side, one field per kernel and one for the totals.

Every figure and line comes from `core.views.profile_diff`, as the CLI's table does, so that a diff reads the same
in Discord and in a terminal: each figure as A → B, then its change.
"""

from __future__ import annotations

import discord

from bot.ui.embeds import COLOUR_INFO, DESCRIPTION_LIMIT, FIELD_LIMIT, FIELD_NAME_LIMIT, TITLE_LIMIT, clip, fit
from contract.wire import KernelDiff, ProfileDiff
from core.views import profile_diff as diff_view

# Kernels with a field of their own (the runner sends its top five per run: matched, both runs' would be ten).
KERNEL_FIELDS = 10


def _lines(lines: list[diff_view.DiffLine]) -> str:
    return "\n".join(f"**{line.label}** {line.a} → {line.b} · {line.change}" for line in lines)


def kernel_field(kernel: KernelDiff) -> tuple[str, str]:
    """A kernel's field: its name (in a code span: a template's `*` or `_` is no Markdown), its figures, its stalls."""
    name = clip(diff_view.kernel_title(kernel).replace("`", "ˋ"), FIELD_NAME_LIMIT - 4)
    value = f"{_lines(diff_view.kernel_lines(kernel))}\n**top stalls** {diff_view.stall_line(kernel)}"
    return f"`{name}`", clip(value, FIELD_LIMIT)


def render_profile_diff(diff: ProfileDiff) -> discord.Embed:
    """The diff's embed: the headline and the two runs in the description, then the kernels and the totals."""
    description = [
        diff_view.headline(diff),
        "",
        f"**A** {diff_view.run_label(diff.a)}",
        f"**B** {diff_view.run_label(diff.b)}",
        diff_view.choice_line(diff),
        *(f"⚠️ {note}" for note in diff.notes),
    ]
    embed = discord.Embed(
        title=clip(f"🔬 Profile diff · {diff.problem} · {diff.gpu_type}", TITLE_LIMIT),
        description=clip("\n".join(description), DESCRIPTION_LIMIT),
        colour=COLOUR_INFO,
    )
    for kernel in diff.kernels[:KERNEL_FIELDS]:
        name, value = kernel_field(kernel)
        embed.add_field(name=name, value=value, inline=False)
    if (hidden := len(diff.kernels) - KERNEL_FIELDS) > 0:
        embed.add_field(name="More kernels", value=f"{hidden} more: `arena profile diff` lists them all", inline=False)
    embed.add_field(name="Totals", value=clip(_lines(diff_view.total_lines(diff)), FIELD_LIMIT), inline=False)
    embed.set_footer(text=f"A {diff.a.device} · B {diff.b.device}")
    return fit(embed)
