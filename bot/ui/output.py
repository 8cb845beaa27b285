"""What the solution printed, in the result message: a code block in the embed when it is short, else the
block's start and the whole text as the attachment `output.txt` (at most 8 KiB per phase and stream, so it is
always small enough to attach)."""

from __future__ import annotations

import discord

from bot.ui.embeds import FIELD_LIMIT, clip, escape_code, fit
from contract.wire import SubmissionResult
from core.views.output import output_text

OUTPUT_FILE = "output.txt"
OUTPUT_FIELD = "What the solution printed"
_ATTACHED = "\nThe whole output is attached as output.txt."
# The room of one field for the code block: the fences and, when the text is longer, the line naming the file.
_BLOCK_LIMIT = FIELD_LIMIT - len("```\n\n```") - len(_ATTACHED)


def output_attachment(result: SubmissionResult) -> tuple[str, bytes] | None:
    """`output.txt` when the output does not fit the embed's field."""
    text = output_text(result.output)
    if len(escape_code(text, 10 * FIELD_LIMIT)) <= _BLOCK_LIMIT:
        return None
    return OUTPUT_FILE, text.encode("utf-8")


def add_output(embed: discord.Embed, result: SubmissionResult) -> discord.Embed:
    """The embed with a field of what the solution printed (none when it printed nothing), trimmed to fit."""
    text = output_text(result.output)
    if not text:
        return embed
    block = escape_code(text, _BLOCK_LIMIT)
    value = f"```\n{block}\n```"
    if output_attachment(result) is not None:
        value += _ATTACHED
    embed.add_field(name=OUTPUT_FIELD, value=clip(value, FIELD_LIMIT), inline=False)
    return fit(embed)
