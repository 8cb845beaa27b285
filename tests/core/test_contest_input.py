"""What moderators type for a contest: times in UTC or from now, comma-separated lists, targets."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.contests.input import parse_list, parse_targets, parse_when
from core.errors import InvalidOptionError

NOW = datetime(2030, 1, 31, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("in 10m", NOW + timedelta(minutes=10)),
        ("in 2h", NOW + timedelta(hours=2)),
        ("IN 1d 6h", NOW + timedelta(days=1, hours=6)),
        ("in 90s", NOW + timedelta(seconds=90)),
        ("2030-01-31T18:00Z", datetime(2030, 1, 31, 18, 0, tzinfo=UTC)),
        ("2030-01-31 18:00+02:00", datetime(2030, 1, 31, 16, 0, tzinfo=UTC)),
    ],
)
def test_times_are_read_in_utc(typed: str, expected: datetime) -> None:
    when = parse_when(typed, NOW)
    assert when == expected and when.tzinfo == UTC


@pytest.mark.parametrize(
    ("typed", "says"),
    [
        ("2030-01-31T18:00", "has no time zone; add `Z` for UTC (`2030-01-31T18:00Z`)"),
        ("tomorrow", "is not a start I can read; write `2030-01-31T18:00Z` (UTC) or a time from now"),
        ("in 10 parsecs", "is not a start I can read"),
        ("in 400d", "is more than a year away"),
    ],
)
def test_times_that_cannot_be_read_say_what_to_type(typed: str, says: str) -> None:
    with pytest.raises(InvalidOptionError) as caught:
        parse_when(typed, NOW, what="start")
    assert says in caught.value.message


def test_lists_split_on_commas_and_spaces_lower_cased_each_once() -> None:
    assert parse_list(" Vector_Add, matmul  vector_add ", what="problem") == ("vector_add", "matmul")
    with pytest.raises(InvalidOptionError, match="Name at least one problem"):
        parse_list(" , ", what="problem")


def test_targets_are_every_gpu_type_with_every_dtype() -> None:
    assert parse_targets("h100, a100", "float32,float16") == (
        ("h100", "float32"), ("h100", "float16"), ("a100", "float32"), ("a100", "float16"),
    )  # fmt: skip
