"""A profile's message in Discord: the embed stays within Discord's limits, the chart is a PNG where Nsight Compute
measured the call, and the profile's files come along as far as one message holds them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import discord
import pytest
from discord import app_commands
from discord.ext import commands

from bot.cogs.submit import SubmitCog
from bot.tracker import LiveMessage
from bot.ui.embeds import SubmissionHeader, render_notice
from bot.ui.profile import ATTACHMENT_BUDGET, KERNEL_FIELDS, MAX_ARTIFACT_FILES
from bot.ui.results import ResultMessage, result_message
from contract.wire import KernelProfile, ProfileArtifact, StallReason
from core.charts import render_profile_roofline_png
from runner.gpus import GPU_SPECS
from tests.bot.harness import GREEN, is_final
from tests.bot.test_embeds import assert_fits
from tests.fakediscord import FakeDiscord
from tests.fakediscord.fixtures import running_bot
from tests.profile_fixture import NCU, artifact, profile_report, profile_result

H100 = GPU_SPECS["NVIDIA H100 80GB HBM3"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
HEADER = SubmissionHeader(
    submission_id=42, slug="matrix-multiplication", user_name="ada", file_name="matmul_naive.cu", language="cuda",
    dtype="float32", mode="profile", gpu_type="h100",
)  # fmt: skip
LONG = "x" * 300


def _message(**changes: object) -> ResultMessage:
    return result_message(HEADER, profile_result(**changes), H100)


def test_the_recorded_profile_gets_its_chart_and_every_file_decoded() -> None:
    message = _message()
    assert message.file_names() == ["roofline.png", "profile.txt", "profile.ncu-rep", "solution.ptx", "solution.sass"]
    files = dict(message.files)
    assert files["roofline.png"].startswith(PNG_MAGIC)
    assert files["profile.ncu-rep"] == (NCU / "matmul_naive_h100.ncu-rep").read_bytes()
    assert files["solution.sass"] == (NCU / "matmul_naive_sm90.sass").read_bytes()
    embed = message.embed
    assert_fits(embed)
    assert embed.image.url == "attachment://roofline.png"
    assert embed.title == "🔬 Submission #42 · matrix-multiplication · float32"
    assert [f.name for f in embed.fields] == ["#1 `matmul_kernel`"]
    assert embed.fields[0].value.splitlines()[0] == "time 47.60 ms · SM throughput 43.0 % · mem throughput 64.6 %"
    description = embed.description or ""
    assert description.startswith("✅ All 4 test cases passed, then one case ran once under the profiler.")
    assert "**FLOP** 137.44 GFLOP counted, formula 137.44 GFLOP (1.00×)" in description
    assert "**top stall** long_scoreboard (91 % of stalls): waiting on global or local memory loads" in description
    assert "left out" not in description


def test_files_beyond_what_one_message_holds_are_left_out_and_named() -> None:
    huge = artifact("profile.ncu-rep", bytes(ATTACHMENT_BUDGET))
    report = profile_report()
    others = [a for a in report.artifacts if a.name != "profile.ncu-rep"]
    broken = ProfileArtifact(name="solution.ptx", data_b64="%%% not base64 %%%")
    message = _message(profile=report.model_copy(update={"artifacts": [huge, *others[:1], broken, *others[2:]]}))
    assert message.file_names() == ["roofline.png", "profile.txt", "solution.sass"]
    assert sum(len(data) for _, data in message.files) < ATTACHMENT_BUDGET
    description = message.embed.description or ""
    assert "**files** profile.txt, solution.sass" in description
    assert "**left out** profile.ncu-rep (8.00 MB), solution.ptx (not valid base64)" in description
    assert "`arena submit --mode profile --profile-dir DIR` saves every file." in description


def test_no_more_files_than_discord_takes_in_one_message() -> None:
    many = [artifact(f"extra{i}.txt", b"x") for i in range(12)]
    message = _message(profile=profile_report(artifacts=many))
    assert message.file_names() == ["roofline.png", *(f"extra{i}.txt" for i in range(MAX_ARTIFACT_FILES))]
    # With the source file /submission adds and a long error log, the message still holds 10 files at most.
    assert len(message.files) + 2 <= 10
    assert "extra11.txt (1 B)" in (message.embed.description or "")


def test_a_file_name_from_the_runner_is_never_a_path() -> None:
    stray = artifact("../../etc/profile.txt", b"report")
    message = _message(profile=profile_report(artifacts=[stray]))
    assert message.file_names() == ["roofline.png", "profile.txt"]


def test_the_worst_case_profile_still_fits_discords_limits() -> None:
    stalls = [StallReason(name=f"{LONG}_{i}", cycles_per_issue=1.0, share=0.25) for i in range(4)]
    kernels = [
        KernelProfile(name=f"{LONG}{i}", launches=10**6, duration_us=1e9 + i, stalls=stalls, flops=10**18)
        for i in range(8)
    ]
    notes = [LONG] * 40
    report = profile_report(kernels=kernels, kernel_count=10**7, notes=notes, case_name=LONG, tool=LONG)
    message = _message(profile=report, notes=notes)
    embed = message.embed
    assert_fits(embed)
    kernel_fields = [f for f in embed.fields if f.name.startswith("#")]
    assert len(kernel_fields) <= KERNEL_FIELDS


def test_tensor_core_work_is_flagged_in_the_embed() -> None:
    (kernel,) = profile_report().kernels
    tensor = kernel.model_copy(update={"tensor_instructions": 4096})
    description = _message(profile=profile_report(kernels=[tensor])).embed.description or ""
    assert "**tensor cores** 4,096 tensor-core instructions ran: their FLOPs are not counted" in description


def test_the_chart_is_a_png_with_or_without_the_devices_roof_and_for_a_copy_without_flops() -> None:
    assert render_profile_roofline_png(profile_result(), H100).startswith(PNG_MAGIC)
    assert render_profile_roofline_png(profile_result(), None).startswith(PNG_MAGIC)
    (kernel,) = profile_report().kernels
    copy = profile_report(kernels=[kernel.model_copy(update={"flops": 0})], formula_flops=0)
    assert render_profile_roofline_png(profile_result(profile=copy), H100).startswith(PNG_MAGIC)


def test_a_call_without_kernels_gets_no_chart_and_says_why() -> None:
    message = _message(profile=profile_report(kernels=[], kernel_count=0))
    assert "roofline.png" not in message.file_names() and message.embed.image.url is None
    assert "The profiler saw no kernel launch" in (message.embed.description or "")


# -- through the fake Discord, whose REST API checks every request against Discord's OpenAPI spec ----------------


def _bot(guild_id: int) -> commands.Bot:
    """A bot with the real /submit (to sync its choices) and a command that answers as /submit does, then shows a
    profile as the tracker does: a follow-up with a notice, edited into the result with its files."""
    bot = commands.Bot(
        command_prefix=commands.when_mentioned, intents=discord.Intents.default(), guild_ready_timeout=0.05
    )

    @app_commands.command(description="Show the recorded profile")
    async def profile(interaction: discord.Interaction) -> None:
        await interaction.response.defer(thinking=True)
        await interaction.edit_original_response(embed=render_notice("Got it.", title="receipt"))
        live = LiveMessage(interaction, window_s=600.0)
        await live.show(render_notice("profiling…", title=HEADER.title))
        message = await asyncio.to_thread(result_message, HEADER, profile_result(), H100)
        await live.show(message.embed, message.files)

    guild = discord.Object(guild_id)

    async def setup_hook() -> None:
        bot.tree.add_command(profile, guild=guild)
        await bot.add_cog(SubmitCog(bot), guild=guild)  # type: ignore[arg-type]
        await bot.tree.sync(guild=guild)

    bot.setup_hook = setup_hook  # type: ignore[method-assign]
    return bot


@pytest.fixture
async def profile_bot(fake_discord: FakeDiscord) -> AsyncIterator[commands.Bot]:
    async with running_bot(fake_discord, _bot(int(fake_discord.guild.id))) as bot:
        yield bot


async def test_the_profile_message_is_one_discord_accepts_with_its_files(
    fake_discord: FakeDiscord, profile_bot: commands.Bot
) -> None:
    interaction = await fake_discord.invoke_slash(fake_discord.add_member("ada"), "profile")
    final = await fake_discord.wait_for_followup(interaction, is_final)
    embed = final.embeds[0]
    assert embed["color"] == GREEN and embed["fields"][0]["name"] == "#1 `matmul_kernel`"
    assert [f.filename for f in final.files] == [
        "roofline.png", "profile.txt", "profile.ncu-rep", "solution.ptx", "solution.sass",
    ]  # fmt: skip
    assert final.file("roofline.png").startswith(PNG_MAGIC)
    assert final.file("profile.txt") == (NCU / "matmul_naive_h100.details.txt").read_bytes()
    assert embed["image"]["url"] == final.files[0].url  # attachment://roofline.png, resolved


async def test_submit_offers_profile_mode_saying_it_is_never_ranked(
    fake_discord: FakeDiscord, profile_bot: commands.Bot
) -> None:
    (submit,) = [c for c in fake_discord.commands() if c["name"] == "submit"]
    (mode,) = [o for o in submit["options"] if o["name"] == "mode"]
    choices = {c["value"]: c["name"] for c in mode["choices"]}
    assert list(choices) == ["test", "benchmark", "ranked", "profile"]
    assert "Nsight Compute" in choices["profile"] and "never ranked" in choices["profile"]
