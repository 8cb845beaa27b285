"""The store's CHECK constraints name the same dtypes, languages, modes, timing methods, score metrics and statuses
as `contract.names`, the one list the code uses; the jobs' states too.

The migrations are read as SQL (`tests/store/sql_checks.py`), each constraint in its latest definition after every
later ALTER. A name added to the list without a migration (or a migration without the list) fails here, before
the first stored result would. The reading itself is checked against PostgreSQL's catalogue after migrating.
"""

from __future__ import annotations

import asyncpg
import pytest

from contract import names
from core.store.migrate import discover
from tests.store.sql_checks import Check, latest_checks, listed_values, quoted_values

# Which list each stored column's CHECK must spell: (table, column) -> the list.
NAMED_COLUMNS: dict[tuple[str, str], tuple[str, ...]] = {
    ("problem_versions", "dtypes"): names.DTYPES,
    ("submissions", "dtype"): names.DTYPES,
    ("contest_targets", "dtype"): names.DTYPES,
    ("submission_batches", "dtype"): names.DTYPES,
    ("submissions", "language"): names.LANGUAGES,
    ("leaderboard_entries", "language"): names.LANGUAGE_FILTERS,
    ("submissions", "mode"): names.MODES,
    ("rate_limits", "mode"): names.MODES,
    ("submission_batches", "mode"): names.MODES,
    ("submissions", "method"): names.METHODS,
    ("case_results", "method"): names.METHODS,
    ("leaderboard_entries", "method"): names.METHODS,
    ("problem_versions", "score_metric"): names.SCORE_METRICS,
    ("submissions", "score_metric"): names.SCORE_METRICS,
    ("submissions", "status"): names.STORED_STATUSES,
    ("jobs", "state"): names.JOB_STATES,
}
# Constraints that name some of a column's list on purpose, and why: they must name no value outside it.
PARTIAL_LISTS: dict[str, str] = {
    "jobs_check": "the states that hold a lease (dispatched, running), not every state of a job",
}
# Columns whose values share a word with a list above but are another vocabulary, and why.
OTHER_VOCABULARIES: dict[tuple[str, str], str] = {
    ("case_results", "kind"): "a stored case is a test or a benchmark case: its phase, not the submission's mode",
    ("podium_checks", "verdict"): "how a podium's second run compared with its first (agreed, failed), not a status",
}
EVERY_NAME = {name for listed in NAMED_COLUMNS.values() for name in listed}


def _checks() -> dict[tuple[str, str], Check]:
    return latest_checks(migration.sql for migration in discover())


def _listings() -> list[tuple[Check, str, set[str]]]:
    """(constraint, column, values) for every value list of every CHECK the migrations leave."""
    return [
        (check, column, values)
        for check in _checks().values()
        for column, values in listed_values(check.expression).items()
    ]


@pytest.mark.parametrize("key", list(NAMED_COLUMNS), ids=lambda key: ".".join(key))
def test_each_named_column_lists_exactly_the_one_list(key: tuple[str, str]) -> None:
    table, column = key
    found = [(check, values) for check, col, values in _listings() if check.table == table and col == column]
    assert found, f"no CHECK on {table}.{column} lists its values any more: update NAMED_COLUMNS in this test"
    for check, values in found:
        expected = set(NAMED_COLUMNS[key])
        if check.name in PARTIAL_LISTS:
            assert values <= expected, f"{check.name} on {table}.{column} lists {sorted(values - expected)}, not names"
            continue
        assert values == expected, (
            f"{check.name} on {table}.{column} lists {sorted(values)}, contract.names lists {sorted(expected)}: "
            f"add a migration that replaces the constraint (DROP CONSTRAINT {check.name}, ADD CONSTRAINT "
            f"{check.name} CHECK ...), or change contract.names"
        )


def test_no_other_check_lists_these_names() -> None:
    unknown = [
        f"{check.table}.{column} ({check.name}: {sorted(values)})"
        for check, column, values in _listings()
        if values & EVERY_NAME and (check.table, column) not in NAMED_COLUMNS | OTHER_VOCABULARIES
    ]
    assert not unknown, f"CHECKs list names of contract.names on columns this test does not know: {unknown}"


def test_the_latest_definition_wins() -> None:
    # V001 allowed three modes; V003 dropped and re-added the constraint with `profile`, and V006 again for
    # rate_limits with the contests' buckets: what counts is what the last migration left.
    checks = _checks()
    assert "profile" in listed_values(checks[("submissions", "submissions_mode_check")].expression)["mode"]
    assert "contest:" in checks[("rate_limits", "rate_limits_mode_check")].expression
    first_only = latest_checks([discover()[0].sql])
    assert "profile" not in listed_values(first_only[("submissions", "submissions_mode_check")].expression)["mode"]


async def test_the_reading_matches_the_migrated_database(pool: asyncpg.Pool) -> None:
    rows = await pool.fetch(
        """SELECT c.conrelid::regclass::text AS table_name, c.conname, pg_get_constraintdef(c.oid) AS definition
           FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid JOIN pg_namespace n ON n.oid = r.relnamespace
           WHERE c.contype = 'c' AND n.nspname = current_schema()"""
    )
    in_database = {(row["table_name"], row["conname"]): row["definition"] for row in rows}
    read = _checks()
    assert set(read) == set(in_database), (
        f"read from the SQL only: {sorted(set(read) - set(in_database))}; "
        f"in the database only: {sorted(set(in_database) - set(read))}: teach tests/store/sql_checks.py the statement"
    )
    for key, check in read.items():
        assert quoted_values(check.expression) == quoted_values(in_database[key]), (key, in_database[key])
