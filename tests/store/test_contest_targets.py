"""A contest's targets against a real store: an unknown GPU type and a dtype its problems do not take are refused on
creation and on a change, and the warning before the start that a GPU type has no runner is claimed once, only
within the lead, and again after the targets change. Time is injected; nothing sleeps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from core.contests import (
    START_WARNING_LEAD,
    ContestDraft,
    GpuCatalog,
    claim_start_warnings,
    create_contest,
    edit_contest,
)
from core.errors import ContestError, InvalidOptionError
from runner.gpus import GPU_MODELS
from tests.store.store_helpers import GPUS, MATMUL, MOD, VECTOR_ADD, add_problems

START = datetime(2030, 3, 1, 12, 0, tzinfo=UTC)
END = START + timedelta(hours=2)
CREATED = START - timedelta(days=1)
# The bot's runners serve the CPU and the H100; nothing serves the H200.
SERVED = GpuCatalog.of(GPU_MODELS, served=["cpu", "h100"])


def draft(slug: str, *targets: tuple[str, str], problems: tuple[str, ...] = ("vector_add",)) -> ContestDraft:
    return ContestDraft(slug, slug.title(), START, END, problems, targets)


async def test_an_unknown_gpu_type_is_refused_on_creation_and_on_a_change(pool: asyncpg.Pool):
    await add_problems(pool, VECTOR_ADD)
    with pytest.raises(InvalidOptionError, match=r"`h1000` is not a GPU type the arena knows.*Did you mean `h100`"):
        await create_contest(pool, MOD, draft("cup", ("h1000", "float32")), now=CREATED, gpus=GPUS)
    assert await pool.fetchval("SELECT count(*) FROM contests") == 0
    await create_contest(pool, MOD, draft("cup", ("h100", "float32")), now=CREATED, gpus=GPUS)
    with pytest.raises(InvalidOptionError, match="`h1000` is not a GPU type"):
        await edit_contest(pool, MOD, "cup", now=CREATED, targets=[("h1000", "float32")], gpus=GPUS)
    targets = await pool.fetch("SELECT gpu_type, dtype FROM contest_targets")
    assert [tuple(t) for t in targets] == [("h100", "float32")]


async def test_a_dtype_the_contests_problems_do_not_take_is_refused(pool: asyncpg.Pool):
    await add_problems(pool, VECTOR_ADD, MATMUL)  # matmul takes float32 and float16, not bfloat16
    with pytest.raises(ContestError, match="`matmul` does not take bfloat16"):
        await create_contest(
            pool, MOD, draft("cup", ("h100", "bfloat16"), problems=("matmul",)), now=CREATED, gpus=GPUS
        )
    await create_contest(pool, MOD, draft("cup", ("h100", "float32"), problems=("matmul",)), now=CREATED, gpus=GPUS)
    with pytest.raises(ContestError, match="`matmul` does not take bfloat16"):
        await edit_contest(pool, MOD, "cup", now=CREATED, targets=[("h100", "bfloat16")], gpus=GPUS)


async def test_the_warning_before_the_start_comes_once_within_the_lead_for_a_gpu_no_runner_serves(pool: asyncpg.Pool):
    await add_problems(pool, VECTOR_ADD)
    await create_contest(pool, MOD, draft("unserved", ("h100", "float32"), ("h200", "float32")), now=CREATED, gpus=GPUS)
    await create_contest(pool, MOD, draft("served", ("h100", "float32")), now=CREATED, gpus=GPUS)
    soon = START - START_WARNING_LEAD + timedelta(minutes=1)

    assert await claim_start_warnings(pool, START - START_WARNING_LEAD - timedelta(minutes=1), SERVED) == []
    (warning,) = await claim_start_warnings(pool, soon, SERVED)
    assert warning.view.contest.slug == "unserved" and warning.unserved == ["h200"]
    assert "No runner serves `h200`" in warning.text
    # Claimed in the store: a second bot, or this one after a restart, does not post it again.
    assert await claim_start_warnings(pool, soon + timedelta(seconds=10), SERVED) == []
    claimed = await pool.fetchval("SELECT start_warning_at FROM contests WHERE slug = 'unserved'")
    assert claimed == soon
    # A caller that does not know its runners claims nothing; neither is anything claimed once the contest started.
    assert await claim_start_warnings(pool, soon, GPUS) == []
    assert await claim_start_warnings(pool, START, GpuCatalog.of(GPU_MODELS, served=["cpu"])) == []


async def test_a_change_of_targets_is_checked_again_before_the_start(pool: asyncpg.Pool):
    await add_problems(pool, VECTOR_ADD)
    await create_contest(pool, MOD, draft("cup", ("h200", "float32")), now=CREATED, gpus=GPUS)
    soon = START - timedelta(minutes=30)
    (first,) = await claim_start_warnings(pool, soon, SERVED)
    assert first.unserved == ["h200"]
    await edit_contest(pool, MOD, "cup", now=soon, targets=[("h100", "float32")], gpus=GPUS)
    assert await claim_start_warnings(pool, soon + timedelta(minutes=1), SERVED) == []
    await edit_contest(pool, MOD, "cup", now=soon, targets=[("cpu", "float32"), ("h200", "float32")], gpus=GPUS)
    (again,) = await claim_start_warnings(pool, soon + timedelta(minutes=2), SERVED)
    assert again.unserved == ["h200"] and [t.gpu_type for t in again.view.targets] == ["cpu", "h200"]
