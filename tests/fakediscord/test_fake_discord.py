"""The fake Discord against the real discord.py client: a tiny bot connects, syncs and answers users."""

from __future__ import annotations

import hashlib
import io
import json
import zlib
from collections.abc import AsyncIterator

import aiohttp
import discord
import pytest
from discord import app_commands
from discord.ext import commands

from bot.discord_base import configure_discord_base_url, current_discord_endpoints, set_discord_endpoints
from tests.fakediscord import FakeDiscord, UserFile
from tests.fakediscord.fixtures import running_bot
from tests.fakediscord.payloads import (
    application_payload,
    attachment_payload,
    channel_payload,
    guild_payload,
    member_payload,
    private_user_payload,
    role_payload,
)

PROBLEMS = ["vector_add", "matmul", "softmax", "layernorm", "matrix_transpose"]


class CounterView(discord.ui.View):
    def __init__(self) -> None:
        super().__init__(timeout=60)
        self.count = 0

    @discord.ui.button(label="+1", style=discord.ButtonStyle.primary, custom_id="counter:add")
    async def add(self, interaction: discord.Interaction, button: discord.ui.Button[CounterView]) -> None:
        self.count += 1
        if self.count >= 2:
            button.disabled = True
        await interaction.response.edit_message(content=f"Count: {self.count}", view=self)

    @discord.ui.select(custom_id="counter:set", options=[discord.SelectOption(label=v) for v in ("0", "10")])
    async def set_to(self, interaction: discord.Interaction, select: discord.ui.Select[CounterView]) -> None:
        self.count = int(select.values[0])
        await interaction.response.edit_message(content=f"Count: {self.count}", view=self)


class FeedbackModal(discord.ui.Modal, title="Feedback"):
    text: discord.ui.TextInput[FeedbackModal] = discord.ui.TextInput(label="Your feedback", custom_id="feedback:text")

    async def on_submit(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message(f"thanks for: {self.text.value}", ephemeral=True)


def build_bot(guild_id: int) -> commands.Bot:
    """A bot with one command per pattern the real bot uses, synced to the test guild at startup."""
    bot = commands.Bot(
        command_prefix=commands.when_mentioned, intents=discord.Intents.default(), guild_ready_timeout=0.05
    )

    @app_commands.command(description="Say it back")
    @app_commands.describe(text="what to say")
    async def echo(interaction: discord.Interaction, text: str) -> None:
        await interaction.response.send_message(text)

    @app_commands.command(description="Think, then report with an embed and a file")
    async def report(interaction: discord.Interaction) -> None:
        await interaction.response.defer(thinking=True)
        embed = discord.Embed(title="Report", description="all good", colour=0x2ECC71)
        embed.add_field(name="median", value="1.5 µs")
        embed.set_image(url="attachment://plot.png")
        files = [discord.File(io.BytesIO(b"\x89PNG fake"), "plot.png"), discord.File(io.BytesIO(b"log\n"), "run.log")]
        await interaction.edit_original_response(embed=embed, attachments=files)

    @app_commands.command(description="A counter with a button")
    async def counter(interaction: discord.Interaction) -> None:
        await interaction.response.send_message("Count: 0", view=CounterView())

    @app_commands.command(description="Pick a problem")
    @app_commands.describe(problem="a problem's slug")
    async def pick(interaction: discord.Interaction, problem: str) -> None:
        await interaction.response.send_message(f"picked {problem}", ephemeral=True)

    @pick.autocomplete("problem")
    async def pick_problem(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        return [app_commands.Choice(name=p, value=p) for p in PROBLEMS if current in p][:25]

    @app_commands.command(description="Hash an uploaded file")
    @app_commands.describe(file="any file", note="a note")
    async def upload(interaction: discord.Interaction, file: discord.Attachment, note: str | None = None) -> None:
        data = await file.read()
        digest = hashlib.sha256(data).hexdigest()[:12]
        await interaction.response.send_message(f"{file.filename} {file.size} {digest} {note}")

    @app_commands.command(description="Post to the channel")
    async def announce(interaction: discord.Interaction) -> None:
        assert isinstance(interaction.channel, discord.TextChannel)
        await interaction.channel.send("Leaderboard updated", embed=discord.Embed(title="Top 3"))
        await interaction.user.send("you are first")
        await interaction.response.send_message("posted", ephemeral=True)

    @app_commands.command(description="Send feedback through a form")
    async def feedback(interaction: discord.Interaction) -> None:
        await interaction.response.send_modal(FeedbackModal())

    arena = app_commands.Group(name="arena", description="Arena commands")

    @arena.command(description="Status, privately")
    async def status(interaction: discord.Interaction, verbose: bool = False) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        await interaction.followup.send(f"queue empty (verbose={verbose})")
        await interaction.followup.send("second follow-up")

    for command in (echo, report, counter, pick, upload, announce, feedback, arena):
        bot.tree.add_command(command, guild=discord.Object(guild_id))

    async def setup_hook() -> None:
        await bot.tree.sync(guild=discord.Object(guild_id))

    bot.setup_hook = setup_hook  # type: ignore[method-assign]
    return bot


def command_names(bot: commands.Bot, guild_id: str) -> set[str]:
    return {c.name for c in bot.tree.get_commands(guild=discord.Object(int(guild_id)))}


@pytest.fixture
async def arena_bot(fake_discord: FakeDiscord) -> AsyncIterator[commands.Bot]:
    bot = build_bot(int(fake_discord.guild.id))
    async with running_bot(fake_discord, bot):
        yield bot


async def test_bot_connects_syncs_and_sees_the_guild(fake_discord: FakeDiscord, arena_bot: commands.Bot) -> None:
    assert arena_bot.user is not None and str(arena_bot.user.id) == fake_discord.bot_user.id
    assert arena_bot.application_id == int(fake_discord.application_id)
    guild = arena_bot.get_guild(int(fake_discord.guild.id))
    assert guild is not None and guild.name == fake_discord.guild.name
    assert {c.name for c in guild.text_channels} == {"general", "submissions"}
    assert {c["name"] for c in fake_discord.commands()} == command_names(arena_bot, fake_discord.guild.id)
    assert all(c["id"] and c["guild_id"] == fake_discord.guild.id for c in fake_discord.commands())


async def test_echo_replies_with_the_text(fake_discord: FakeDiscord, arena_bot: commands.Bot) -> None:
    alice = fake_discord.add_member("alice")
    interaction = await fake_discord.invoke_slash(alice, "echo", {"text": "hello arena"})
    reply = await fake_discord.wait_for_original(interaction)
    assert reply.content == "hello arena"
    assert reply.payload["type"] == 20 and reply.payload["interaction_metadata"]["user"]["id"] == alice.id
    assert fake_discord.interaction_responses[interaction.id] == [
        {"type": 4, "data": {"content": "hello arena", "tts": False}}
    ]


async def test_defer_then_edit_adds_an_embed_and_files(fake_discord: FakeDiscord, arena_bot: commands.Bot) -> None:
    interaction = await fake_discord.invoke_slash(fake_discord.add_member("bob"), "report")
    assert (await fake_discord.wait_for_response(interaction))["type"] == 5
    message = await fake_discord.wait_for_original(interaction, lambda m: bool(m.embeds))
    assert [v["flags"] & 128 for v in message.history] == [128, 0]  # "thinking", then the edit
    embed = message.embeds[0]
    assert embed["title"] == "Report" and embed["fields"] == [{"name": "median", "value": "1.5 µs", "inline": True}]
    assert message.file("plot.png") == b"\x89PNG fake" and message.file("run.log") == b"log\n"
    assert embed["image"]["url"] == message.files[0].url  # attachment://plot.png, resolved
    async with aiohttp.ClientSession() as session, session.get(message.files[1].url) as response:
        assert await response.read() == b"log\n"


async def test_button_press_edits_the_message(fake_discord: FakeDiscord, arena_bot: commands.Bot) -> None:
    carol = fake_discord.add_member("carol")
    interaction = await fake_discord.invoke_slash(carol, "counter")
    message = await fake_discord.wait_for_original(interaction)
    assert [b["custom_id"] for b in message.buttons()] == ["counter:add"]
    for expected in ("Count: 1", "Count: 2"):
        mark = fake_discord.checkpoint()
        press = await fake_discord.press_button(carol, message, "counter:add")
        assert (await fake_discord.wait_for_response(press))["type"] == 7
        edited = await fake_discord.wait_for_message(lambda m: m.id == message.id, after=mark)
        assert edited.content == expected
    assert message.buttons()[0]["disabled"] is True and message.edits == 2
    with pytest.raises(ValueError, match="disabled"):
        await fake_discord.press_button(carol, message, "counter:add")
    chosen = await fake_discord.select(carol, message, "counter:set", ["10"])
    await fake_discord.wait_for_response(chosen)
    assert message.content == "Count: 10"


async def test_modal_submission_reaches_the_bot(fake_discord: FakeDiscord, arena_bot: commands.Bot) -> None:
    lena = fake_discord.add_member("lena")
    interaction = await fake_discord.invoke_slash(lena, "feedback")
    assert (await fake_discord.wait_for_response(interaction))["type"] == 9
    with pytest.raises(ValueError, match="required"):
        await fake_discord.submit_modal(lena, interaction, {})
    submitted = await fake_discord.submit_modal(lena, interaction, {"feedback:text": "faster GPUs"})
    assert (await fake_discord.wait_for_original(submitted)).content == "thanks for: faster GPUs"


async def test_autocomplete_offers_matching_choices(fake_discord: FakeDiscord, arena_bot: commands.Bot) -> None:
    dave = fake_discord.add_member("dave")
    choices = await fake_discord.autocomplete(dave, "pick", "problem", "ma")
    assert [c["value"] for c in choices] == ["matmul", "softmax", "matrix_transpose"]
    interaction = await fake_discord.invoke_slash(dave, "pick", {"problem": "matmul"})
    reply = await fake_discord.wait_for_original(interaction)
    assert reply.content == "picked matmul" and reply.ephemeral


async def test_attachment_option_is_served_by_the_fake_cdn(fake_discord: FakeDiscord, arena_bot: commands.Bot) -> None:
    source = b"def solution(a, b, c, n):\n    c.copy_(a + b)\n"
    digest = hashlib.sha256(source).hexdigest()[:12]
    erin = fake_discord.add_member("erin")
    interaction = await fake_discord.invoke_slash(erin, "upload", attachments=[("solution.py", source)])
    reply = await fake_discord.wait_for_original(interaction)
    assert reply.content == f"solution.py {len(source)} {digest} None"
    data = interaction.payload["data"]
    attachment = next(iter(data["resolved"]["attachments"].values()))
    assert attachment["content_type"] == "text/x-python" and attachment["ephemeral"] is True
    again = await fake_discord.invoke_slash(erin, "upload", {"file": UserFile("a.cu", b"x"), "note": "hi"})
    assert (await fake_discord.wait_for_original(again)).content.endswith(" hi")


async def test_subcommand_deferred_followups(fake_discord: FakeDiscord, arena_bot: commands.Bot) -> None:
    interaction = await fake_discord.invoke_slash(fake_discord.add_member("frank"), "arena status", {"verbose": True})
    original = await fake_discord.wait_for_original(interaction)
    # The first follow-up replaces the "thinking" placeholder, which stays ephemeral as chosen at defer time.
    assert original.content == "queue empty (verbose=True)" and original.ephemeral
    second = await fake_discord.wait_for_followup(interaction)
    assert second.content == "second follow-up" and not second.ephemeral
    assert interaction.payload["data"]["options"] == [
        {"name": "status", "type": 1, "options": [{"name": "verbose", "type": 5, "value": True}]}
    ]


async def test_channel_messages_are_recorded(fake_discord: FakeDiscord, arena_bot: commands.Bot) -> None:
    gina = fake_discord.add_member("gina")
    interaction = await fake_discord.invoke_slash(gina, "announce", channel="submissions")
    posted = await fake_discord.wait_for_message(lambda m: m.source == "channel")
    assert posted.channel_id == fake_discord.channel("submissions").id and posted.content == "Leaderboard updated"
    direct = await fake_discord.wait_for_message(lambda m: m.channel_id == fake_discord.dm_channel_id(gina))
    assert direct.content == "you are first"
    assert [(e["title"], e["type"]) for e in posted.embeds] == [("Top 3", "rich")]
    assert (await fake_discord.wait_for_original(interaction)).ephemeral


async def test_options_are_checked_against_the_synced_command(
    fake_discord: FakeDiscord, arena_bot: commands.Bot
) -> None:
    hank = fake_discord.add_member("hank")
    with pytest.raises(ValueError, match="no option"):
        await fake_discord.invoke_slash(hank, "echo", {"txt": "typo"})
    with pytest.raises(ValueError, match="required"):
        await fake_discord.invoke_slash(hank, "echo")
    with pytest.raises(ValueError, match="does not fit"):
        await fake_discord.invoke_slash(hank, "echo", {"text": 5})
    with pytest.raises(LookupError, match="has not synced"):
        await fake_discord.invoke_slash(hank, "nope")


async def test_invalid_payloads_are_rejected_and_recorded(fake_discord: FakeDiscord, arena_bot: commands.Bot) -> None:
    channel = arena_bot.get_channel(int(fake_discord.channel("general").id))
    assert isinstance(channel, discord.TextChannel)
    with pytest.raises(discord.HTTPException) as too_long:
        await channel.send(embed=discord.Embed(title="x" * 257))
    assert too_long.value.status == 400 and too_long.value.code == 50035
    route = discord.http.Route("POST", "/channels/{channel_id}/messages", channel_id=channel.id)
    with pytest.raises(discord.HTTPException):
        await arena_bot.http.request(route, json={"content": ["not", "a", "string"]})
    with pytest.raises(discord.NotFound):
        await arena_bot.http.request(discord.http.Route("GET", "/channels/{channel_id}/nonsense", channel_id=1))
    kinds = [(v.kind, v.operation_id) for v in fake_discord.violations]
    assert kinds == [
        ("request-schema", "create_message"),
        ("request-schema", "create_message"),
        ("unknown-route", None),
    ]
    assert "embeds.0.title: Must be 256 or fewer in length." in fake_discord.violations[0].message
    assert "content" in fake_discord.violations[1].message
    fake_discord.violations.clear()
    assert not fake_discord.messages


async def test_a_second_acknowledgement_is_a_violation(fake_discord: FakeDiscord, arena_bot: commands.Bot) -> None:
    interaction = await fake_discord.invoke_slash(fake_discord.add_member("ivy"), "echo", {"text": "once"})
    await fake_discord.wait_for_original(interaction)
    url = f"{fake_discord.base_url}/api/v10/interactions/{interaction.id}/{interaction.token}/callback"
    async with aiohttp.ClientSession() as session, session.post(url, json={"type": 4, "data": {"content": "2"}}) as r:
        assert r.status == 400 and (await r.json())["code"] == 40060
    assert [v.kind for v in fake_discord.violations] == ["protocol"]
    fake_discord.violations.clear()


async def test_reconnect_resumes_the_session(fake_discord: FakeDiscord, arena_bot: commands.Bot) -> None:
    await fake_discord.request_reconnect()
    interaction = await fake_discord.invoke_slash(fake_discord.add_member("jack"), "echo", {"text": "still here"})
    assert (await fake_discord.wait_for_original(interaction)).content == "still here"


async def test_wrong_token_fails_login(fake_discord: FakeDiscord) -> None:
    client = discord.Client(intents=discord.Intents.none())
    with pytest.raises(discord.LoginFailure):
        await client.login("not-the-token")
    await client.close()


async def test_gateway_speaks_zlib_stream_when_asked(fake_discord: FakeDiscord) -> None:
    url = f"{fake_discord.gateway_url}?v=10&encoding=json&compress=zlib-stream"
    inflate = zlib.decompressobj()
    async with aiohttp.ClientSession() as session, session.ws_connect(url, timeout=aiohttp.ClientWSTimeout(30)) as ws:
        hello = json.loads(inflate.decompress(await ws.receive_bytes(timeout=30)))
        assert hello["op"] == 10 and hello["d"]["heartbeat_interval"] > 0
        await ws.send_json({"op": 1, "d": None})
        assert json.loads(inflate.decompress(await ws.receive_bytes(timeout=30))) == {"op": 11}


async def test_fake_payloads_conform_to_the_spec(fake_discord: FakeDiscord) -> None:
    spec, guild = fake_discord.spec, fake_discord.guild
    user = fake_discord.add_member("kim", roles=(fake_discord.add_role("Judge"),))
    stored = fake_discord.state.store_file("a.txt", b"abc")
    state = fake_discord.state
    checks = {
        "UserPIIResponse": private_user_payload(fake_discord.bot_user),
        "GuildMemberResponse": member_payload(guild, user),
        "GuildRoleResponse": role_payload(guild.roles[-1]),
        "GuildChannelResponse": channel_payload(guild.channels[0]),
        "PrivateChannelResponse": channel_payload(state.dm_channel(user)),
        "GuildWithCountsResponse": guild_payload(guild, with_counts=True),
        "PrivateApplicationResponse": application_payload(
            state.application_id, state.bot_user, state.owner, state.application_flags
        ),
        "AttachmentResponse": attachment_payload(stored, ephemeral=True),
    }
    errors = {name: spec.validate_component(name, payload) for name, payload in checks.items()}
    assert errors == {name: [] for name in checks}


async def test_configure_discord_base_url_sets_and_restores_endpoints() -> None:
    before = current_discord_endpoints()
    try:
        endpoints = configure_discord_base_url("https://example.test/discord/")
        assert endpoints.rest_base == "https://example.test/discord/api/v10"
        assert endpoints.gateway == "wss://example.test/discord/"
        assert discord.http.Route("GET", "/users/@me").url == "https://example.test/discord/api/v10/users/@me"
        assert configure_discord_base_url(None).rest_base == "https://discord.com/api/v10"
        with pytest.raises(ValueError, match="ARENA_DISCORD_API_BASE"):
            configure_discord_base_url("ftp://example.test")
    finally:
        set_discord_endpoints(before)
