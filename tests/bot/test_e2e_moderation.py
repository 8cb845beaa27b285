"""Moderators at work: adding a problem through the runner's self-test, the runners' status, invalidations."""

from __future__ import annotations

from core.store import jobs
from problems.distributed.registry import distributed_problems
from problems.registry import builtin_problems
from tests.bot.harness import DATA, GREEN, JOB_TIMEOUT_S, Arena
from tests.store.store_helpers import wait_for_state


async def test_a_moderator_adds_a_problem_and_a_user_submits_to_it(arena: Arena) -> None:
    fake = arena.fake
    module = (DATA / "vector_sub.py").read_bytes()
    added = await fake.invoke_slash(arena.moderator, "mod problem-add", attachments=[("vector_sub.py", module)])
    report = await fake.wait_for_original(added, lambda m: bool(m.embeds), timeout=JOB_TIMEOUT_S)
    embed = report.embeds[0]
    assert report.ephemeral and embed["color"] == GREEN
    assert embed["title"] == "Admission self-test of `vector_sub`: ✅ passed"
    checks = "\n".join(f["value"] for f in embed["fields"])
    assert "✅ reference → pass" in checks and "✅ zeros → fail" in checks and "❌" not in checks
    assert [b["custom_id"] for b in report.buttons()] == ["confirm:yes", "confirm:no"]

    mark = fake.checkpoint()
    await fake.press_button(arena.moderator, report, "confirm:yes")
    published = await fake.wait_for_message(lambda m: m.id == report.id and "Published" in str(m.embeds), after=mark)
    assert published.embeds[0]["title"] == "Published `vector_sub` v1" and not published.buttons()

    shown = await fake.invoke_slash(fake.add_member("grace"), "problem", {"slug": "vector_sub"})
    described = (await fake.wait_for_original(shown, lambda m: bool(m.embeds))).embeds[0]
    assert "Subtract two vectors" in described["description"]
    assert any("const float* input_a" in f["value"] for f in described["fields"])

    heidi = fake.add_member("heidi")
    choices = await fake.autocomplete(heidi, "submit", "problem", "sub")
    assert [c["value"] for c in choices] == ["vector_sub"]
    interaction = await arena.submit_example(heidi, "vector_sub", "vector_sub_solution.py", mode="ranked")
    final = await arena.final(interaction)
    assert final.embeds[0]["color"] == GREEN and "vector_sub" in final.embeds[0]["title"]
    assert "n=1000" in final.embeds[0]["description"]

    invalidated = await fake.invoke_slash(arena.moderator, "mod invalidate", {"id": 1, "reason": "test"})
    await fake.wait_for_original(invalidated, lambda m: "off the boards" in str(m.embeds))
    board = await fake.invoke_slash(heidi, "leaderboard", {"problem": "vector_sub"})
    assert "Nobody is on this board" in str((await fake.wait_for_original(board, lambda m: bool(m.embeds))).embeds)

    rerun = await fake.invoke_slash(arena.moderator, "mod rerun", {"id": 1})
    await fake.wait_for_original(rerun, lambda m: "queued again as job 2" in str(m.embeds))
    assert await wait_for_state(arena.bot.pool, 2, set(jobs.FINAL_STATES), timeout_s=JOB_TIMEOUT_S) == "done"


async def test_a_problem_whose_verification_accepts_anything_is_not_admitted(arena: Arena) -> None:
    fake = arena.fake
    module = (DATA / "vector_sub_broken.py").read_bytes()
    added = await fake.invoke_slash(arena.moderator, "mod problem-add", attachments=[("broken.py", module)])
    report = await fake.wait_for_original(added, lambda m: bool(m.embeds), timeout=JOB_TIMEOUT_S)
    assert "❌ failed" in report.embeds[0]["title"]
    assert "❌ zeros → fail" in "\n".join(f["value"] for f in report.embeds[0]["fields"])
    assert not report.buttons()
    # The built-in ones only, the distributed ones among them.
    assert await arena.count("problems") == len(builtin_problems()) + len(distributed_problems())


async def test_runners_shows_the_local_runner_and_the_queue(arena: Arena) -> None:
    fake = arena.fake
    asked = await fake.invoke_slash(arena.moderator, "mod runners")
    embed = (await fake.wait_for_original(asked, lambda m: bool(m.embeds))).embeds[0]
    assert embed["title"] == "Runners"
    assert embed["fields"][0]["name"] == "local-cpu"
    assert "GPU type `cpu` · local · 2 slot(s)" in embed["fields"][0]["value"]
    assert "Jobs in the store: empty" in embed["description"]


async def test_the_audit_log_lists_moderator_actions_newest_first_and_by_target(arena: Arena) -> None:
    fake = arena.fake
    ivan = fake.add_member("ivan")
    banned = await fake.invoke_slash(arena.moderator, "mod ban", {"user": ivan, "reason": "shared an exploit"})
    await fake.wait_for_original(banned, lambda m: "is banned" in str(m.embeds))
    lifted = await fake.invoke_slash(arena.moderator, "mod unban", {"user": ivan})
    await fake.wait_for_original(lifted, lambda m: "may submit again" in str(m.embeds))
    closed = await fake.invoke_slash(arena.moderator, "mod problem-disable", {"slug": "vector_add", "reason": "typo"})
    await fake.wait_for_original(closed, lambda m: bool(m.embeds))

    shown = await fake.invoke_slash(arena.moderator, "mod audit")
    reply = await fake.wait_for_original(shown, lambda m: bool(m.embeds))
    lines = reply.embeds[0]["description"].splitlines()
    assert reply.ephemeral and reply.embeds[0]["title"] == "Audit log"
    assert [line.split(" · ")[1].split("**")[2].split()[0] for line in lines] == ["problem_disable", "unban", "ban"]
    assert "**Mod** problem_disable `problem:vector_add` · typo" in lines[0]
    assert lines[2].endswith("· shared an exploit")

    one = await fake.invoke_slash(arena.moderator, "mod audit", {"target": "problem:vector_add", "count": 5})
    only = (await fake.wait_for_original(one, lambda m: bool(m.embeds))).embeds[0]
    assert only["title"] == "Audit log on `problem:vector_add`" and len(only["description"].splitlines()) == 1

    bad = await fake.invoke_slash(arena.moderator, "mod audit", {"target": "everything"})
    assert "is not an audit target" in await arena.error_of(bad)
    refused = await fake.invoke_slash(ivan, "mod audit")
    assert "moderator" in (await arena.error_of(refused)).lower()
