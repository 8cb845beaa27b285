"""Migration V008 on a store rated by the old method: the old values are archived under their method's label, and
every rated contest is rated again by core.rating, in the order the contests ended, with the players who sat a
contest out aged. The contests and their old ratings are written at the V007 schema, as a store of that time
holds them; the rest of the migrations then run on the real embedded PostgreSQL."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from core.contests import freeze_if_due
from core.contests.ratings import rate_frozen_contest, rate_pending
from core.rating import METHOD, Rating, Standing, age, rate_contest
from core.store.migrate import discover, migrate

DAY0 = datetime(2029, 1, 1, 12, 0, tzinfo=UTC)
NOW = DAY0 + timedelta(days=60)
# (slug, day it ended, standings). They are inserted in this order, so ids do not follow the ends: the re-rating
# must go by the end. `solo` ordered nobody: it is no rating period.
CONTESTS = [
    ("week2", 8, [("bob", 1), ("cy", 2), ("dee", 3)]),
    ("week1", 1, [("ada", 1), ("bob", 2), ("cy", 3)]),
    ("solo", 20, [("eve", 1)]),
    ("week3", 15, [("ada", 1), ("dee", 1), ("cy", 3), ("bob", 4)]),
    ("week4", 18, [("cy", 1), ("bob", 2)]),
]
USERS = ["ada", "bob", "cy", "dee", "eve"]


async def _store_rated_by_the_old_method(conn: asyncpg.Connection) -> list[asyncpg.Record]:
    """Users, frozen contests with their standings, and Glicko-2 history rows, at schema V007; the history rows."""
    await migrate(conn, [m for m in discover() if m.version <= 7])
    for name in USERS:
        await conn.execute("INSERT INTO users (external_id, display_name) VALUES ($1, $2)", f"discord:{name}", name)
    for slug, day, standings in CONTESTS:
        ends = DAY0 + timedelta(days=day)
        contest_id = await conn.fetchval(
            """INSERT INTO contests (slug, title, starts_at, ends_at, frozen_at, rated_at)
            VALUES ($1, $1, $2, $3, $4, $4) RETURNING id""",
            slug,
            ends - timedelta(hours=2),
            ends,
            ends + timedelta(minutes=5),
        )
        for name, place in standings:
            user_id = await conn.fetchval("SELECT id FROM users WHERE display_name = $1", name)
            await conn.execute(
                "INSERT INTO contest_standings (contest_id, user_id, place, total) VALUES ($1, $2, $3, $3)",
                contest_id,
                user_id,
                place,
            )
            if len(standings) < 2:
                continue
            # Whatever the old method gave; what matters is that these exact values survive.
            old = (1500 + 7 * contest_id - 11 * place, 300 - 3 * contest_id, 0.06 + 0.001 * place)
            await conn.execute(
                """INSERT INTO rating_history (user_id, contest_id, place, rating_before, rd_before,
                volatility_before, rating_after, rd_after, volatility_after) VALUES ($1, $2, $3, 1500, 350, 0.06,
                $4, $5, $6)""",
                user_id,
                contest_id,
                place,
                *old,
            )
            await conn.execute(
                """INSERT INTO ratings (user_id, rating, rd, volatility, contests, last_contest_id)
                VALUES ($1, $2, $3, $4, 1, $5)
                ON CONFLICT (user_id) DO UPDATE SET rating = EXCLUDED.rating, contests = ratings.contests + 1""",
                user_id,
                *old,
                contest_id,
            )
    return await conn.fetch("SELECT * FROM rating_history ORDER BY user_id, contest_id")


def _expected() -> tuple[dict[str, Rating], dict[str, int]]:
    """The ratings core.rating gives the contests in the order they ended, and each player's periods sat out since
    their last contest."""
    ratings: dict[str, Rating] = {}
    absent: dict[str, int] = {}
    for _, _, standings in sorted(CONTESTS, key=lambda c: c[1]):
        after = rate_contest([Standing(name, place) for name, place in standings], ratings)
        if not after:
            continue
        for name in ratings.keys() - after.keys():
            ratings[name] = age(ratings[name])
            absent[name] = absent.get(name, 0) + 1
        ratings.update(after)
        absent.update(dict.fromkeys(after, 0))
    return ratings, absent


async def _stored(conn: asyncpg.Connection) -> dict[str, asyncpg.Record]:
    rows = await conn.fetch(
        """SELECT u.display_name, r.rating, r.rd, r.volatility, r.contests, r.periods_absent
        FROM ratings r JOIN users u ON u.id = r.user_id"""
    )
    return {r["display_name"]: r for r in rows}


async def test_v008_archives_the_old_ratings_and_the_contests_are_rated_again_in_order(empty_dsn: str):
    conn = await asyncpg.connect(empty_dsn)
    try:
        old_rows = await _store_rated_by_the_old_method(conn)
        assert len(old_rows) == 12
        await migrate(conn)

        archived = await conn.fetch("SELECT * FROM rating_archive ORDER BY user_id, contest_id")
        assert {r["method"] for r in archived} == {"glicko2-all-pairs"}
        columns = ["user_id", "contest_id", "place", "rating_after", "rd_after", "volatility_after"]
        assert [[r[c] for c in columns] for r in archived] == [[r[c] for c in columns] for r in old_rows]
        assert [r["rated_at"] for r in archived] == [r["created_at"] for r in old_rows]
        assert await conn.fetchval("SELECT count(*) FROM rating_history") == 0
        assert await conn.fetchval("SELECT count(*) FROM ratings") == 0
        assert await conn.fetchval("SELECT count(*) FROM contests WHERE rated_at IS NOT NULL") == 0

        async with conn.transaction():
            done = await rate_pending(conn, NOW)
        ids = {r["slug"]: r["id"] for r in await conn.fetch("SELECT id, slug FROM contests")}
        # Every contest is rated, in the order they ended, the one that ordered nobody with no changes.
        assert list(done) == [ids["week1"], ids["week2"], ids["week3"], ids["week4"], ids["solo"]]
        assert done[ids["solo"]] == []
        assert await conn.fetchval("SELECT count(*) FROM contests WHERE rated_at IS NULL") == 0

        expected, absent = _expected()
        stored = await _stored(conn)
        assert set(stored) == set(expected) == {"ada", "bob", "cy", "dee"}
        for name, rating in expected.items():
            row = stored[name]
            assert row["rating"] == pytest.approx(rating.rating, abs=1e-9), name
            assert row["rd"] == pytest.approx(rating.rd, abs=1e-9), name
            assert row["periods_absent"] == absent[name], name
        # ada sat week2 out: aged once there, then rated again in week3; ada and dee sat week4 out.
        assert absent == {"ada": 1, "bob": 0, "cy": 0, "dee": 1}
        ada = await conn.fetch(
            """SELECT h.rd_before, h.method, c.slug FROM rating_history h JOIN contests c ON c.id = h.contest_id
            JOIN users u ON u.id = h.user_id WHERE u.display_name = 'ada' ORDER BY c.ends_at"""
        )
        assert [r["slug"] for r in ada] == ["week1", "week3"] and {r["method"] for r in ada} == {METHOD}
        after_week1 = done[ids["week1"]][0]
        assert after_week1.place == 1 and ada[1]["rd_before"] == pytest.approx(age(Rating(rd=after_week1.rd_after)).rd)
        assert stored["ada"]["contests"] == 2 and stored["cy"]["contests"] == 4

        # Done once: a second run finds nothing, and the old values stay archived beside the new ones.
        async with conn.transaction():
            assert await rate_pending(conn, NOW + timedelta(days=1)) == {}
        assert await _stored(conn) == stored
        assert await conn.fetchval("SELECT count(*) FROM rating_archive") == 12
        assert await conn.fetchval("SELECT count(*) FROM rating_history") == 12
    finally:
        await conn.close()


async def _migrated_pool(dsn: str) -> asyncpg.Pool:
    """A pool over a store rated by the old method and then migrated: V008 has set its ratings aside."""
    conn = await asyncpg.connect(dsn)
    try:
        await _store_rated_by_the_old_method(conn)
        await migrate(conn)
    finally:
        await conn.close()
    return await asyncpg.create_pool(dsn, min_size=1, max_size=2)


async def test_after_v008_rating_one_contest_first_rates_every_contest_before_it(empty_dsn: str):
    pool = await _migrated_pool(empty_dsn)
    try:
        changes = await rate_frozen_contest(pool, "week3", now=NOW)
        assert sorted(c.place for c in changes) == [1, 1, 3, 4]
        async with pool.acquire() as conn:
            expected, _ = _expected()
            stored = await _stored(conn)
            assert {n: round(r["rating"], 6) for n, r in stored.items()} == {
                n: round(r.rating, 6) for n, r in expected.items()
            }
            assert await conn.fetchval("SELECT count(*) FROM contests WHERE rated_at IS NULL") == 0
        assert await rate_frozen_contest(pool, "week1", now=NOW) == []
    finally:
        await pool.close()


async def test_arena_db_migrate_rates_the_contests_again_right_after_v008(empty_dsn: str):
    conn = await asyncpg.connect(empty_dsn)
    try:
        await _store_rated_by_the_old_method(conn)
    finally:
        await conn.close()
    env = {**os.environ, "DATABASE_URL": empty_dsn}
    command = [sys.executable, "-m", "arena", "db", "migrate"]
    first = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert first.returncode == 0, first.stderr
    assert "applied V008 rerate" in first.stdout
    assert f"rated {len(CONTESTS)} frozen contests, in the order they ended ({METHOD})" in first.stdout
    conn = await asyncpg.connect(empty_dsn)
    try:
        expected, _ = _expected()
        stored = await _stored(conn)
        assert {n: round(r["rd"], 6) for n, r in stored.items()} == {n: round(r.rd, 6) for n, r in expected.items()}
    finally:
        await conn.close()
    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert again.returncode == 0 and "up to date" in again.stdout and "rated" not in again.stdout


async def test_the_freezers_pass_rates_the_contests_a_migration_at_start_left_unrated(empty_dsn: str):
    # A bot migrates when it starts (ARENA_MIGRATE_ON_START) and never runs `arena db migrate`: its freezer's first
    # pass, with no contest due, must still rate what V008 set aside, or the ratings stay empty until a contest ends.
    pool = await _migrated_pool(empty_dsn)
    try:
        report = await freeze_if_due(pool, NOW, podium_check=False)
        assert report.frozen == [] and report.waiting == []
        async with pool.acquire() as conn:
            assert await conn.fetchval("SELECT count(*) FROM contests WHERE rated_at IS NULL") == 0
            expected, _ = _expected()
            stored = await _stored(conn)
            assert {n: round(r["rating"], 6) for n, r in stored.items()} == {
                n: round(r.rating, 6) for n, r in expected.items()
            }
        # The next pass has nothing left to rate and changes nothing.
        await freeze_if_due(pool, NOW + timedelta(hours=1), podium_check=False)
        async with pool.acquire() as conn:
            assert await _stored(conn) == stored
    finally:
        await pool.close()
