"""Contest times: every instant a contest keeps is in UTC, and a time without a zone is refused."""

from __future__ import annotations

from datetime import UTC, datetime

from core.errors import ContestError


def as_utc(when: datetime, what: str) -> datetime:
    if when.tzinfo is None or when.utcoffset() is None:
        raise ContestError(
            f"The {what} `{when.isoformat()}` has no time zone; give it in UTC, e.g. `2030-01-31T18:00Z`."
        )
    return when.astimezone(UTC)


def format_when(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
