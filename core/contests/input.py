"""What a moderator types for a contest, read into what the rest of `core.contests` takes: times, lists, targets.

Front ends (the bot's `/mod contest …`, a CLI) pass the text as typed and get a `datetime` in UTC, a tuple of slugs
or a tuple of (GPU type, dtype) targets, or an `InvalidOptionError` that says what to type instead.

Times are either an ISO-8601 instant with a zone (`2030-01-31T18:00Z`, `2030-01-31 18:00+02:00`) or a time from
now (`in 10m`, `in 2h`, `in 1d 6h`, `in 90s`). A time without a zone is refused, as the core refuses it: a
moderator's local time and UTC differ by hours, and a contest that starts at the wrong hour cannot be undone.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from core.errors import InvalidOptionError
from core.problems import shown

_RELATIVE = re.compile(r"in\s+((?:\d+\s*[smhdw]\s*)+)", re.IGNORECASE)
_PART = re.compile(r"(\d+)\s*([smhdw])", re.IGNORECASE)
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
MAX_AHEAD = timedelta(days=366)
EXAMPLES = "`2030-01-31T18:00Z` (UTC) or a time from now such as `in 10m`, `in 2h` or `in 1d 6h`"


def parse_when(text: str, now: datetime, *, what: str = "time") -> datetime:
    """The instant `text` names, in UTC; `now` anchors the relative forms."""
    typed = text.strip()
    relative = _RELATIVE.fullmatch(typed)
    if relative is not None:
        seconds = sum(int(n) * _UNIT_S[unit.lower()] for n, unit in _PART.findall(relative.group(1)))
        if timedelta(seconds=seconds) > MAX_AHEAD:
            raise InvalidOptionError(f"The {what} `{shown(typed)}` is more than a year away; choose a nearer one.")
        return now.astimezone(UTC) + timedelta(seconds=seconds)
    iso = typed[:-1] + "+00:00" if typed[-1:] in ("Z", "z") else typed
    try:
        when = datetime.fromisoformat(iso)
    except ValueError:
        raise InvalidOptionError(f"`{shown(typed)}` is not a {what} I can read; write {EXAMPLES}.") from None
    if when.tzinfo is None or when.utcoffset() is None:
        raise InvalidOptionError(
            f"The {what} `{shown(typed)}` has no time zone; add `Z` for UTC (`{shown(typed)}Z`) or write a time "
            "from now such as `in 2h`."
        )
    return when.astimezone(UTC)


def parse_list(text: str, *, what: str) -> tuple[str, ...]:
    """`a, b c` as ('a', 'b', 'c'): items separated by commas or spaces, lower-cased, each once."""
    items = [item.lower() for item in re.split(r"[,\s]+", text.strip()) if item]
    if not items:
        raise InvalidOptionError(f"Name at least one {what} (separate several with commas).")
    return tuple(dict.fromkeys(items))


def parse_targets(gpu_types: str, dtypes: str) -> tuple[tuple[str, str], ...]:
    """Every (GPU type, dtype) pair of the two lists: `h100, a100` × `float32` makes two targets."""
    gpus = parse_list(gpu_types, what="GPU type")
    types = parse_list(dtypes, what="dtype")
    return tuple((gpu, dtype) for gpu in gpus for dtype in types)
