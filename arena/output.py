"""What every `arena` command prints: a table or lines for people, or with `--json` one JSON document for scripts
and agents, so that nothing that reads the CLI has to scrape a table.

A command adds the flag with `add_json_flag` and prints through `emit`. Errors with `--json` are `arena.cli`'s
job: `{"error": {"code", "message"}}` on stdout, with the API's codes (`core.errors.UserFacingError.code`).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import decimal
import enum
import json
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

JSON_HELP = "print one JSON document (errors too, as {\"error\": {\"code\", \"message\"}})"
DAEMON_JSON_HELP = "log one JSON object per line on stderr, and print errors as JSON on stdout"


def add_json_flag(parser: argparse.ArgumentParser, help: str = JSON_HELP) -> None:
    parser.add_argument("--json", action="store_true", help=help)


def jsonable(value: Any) -> Any:
    """`value` as JSON's types: dataclasses and pydantic models as objects, datetimes in ISO 8601 (UTC where
    zoned), enums by value, tuples and sets as arrays, paths and UUIDs as strings, decimals as numbers."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=str) if isinstance(value, set | frozenset) else value
        return [jsonable(v) for v in items]
    if isinstance(value, datetime.datetime):
        return (value.astimezone(datetime.UTC) if value.tzinfo else value).isoformat()
    if isinstance(value, datetime.date | datetime.timedelta):
        return value.total_seconds() if isinstance(value, datetime.timedelta) else value.isoformat()
    if isinstance(value, enum.Enum):
        return jsonable(value.value)
    if isinstance(value, Path | uuid.UUID):
        return str(value)
    if isinstance(value, decimal.Decimal):
        return float(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"{type(value).__name__} has no JSON form; give the command a plain value to print")


def print_json(data: object) -> None:
    print(json.dumps(jsonable(data), indent=2))


def emit(args: argparse.Namespace, data: object, text: str | Callable[[], str]) -> None:
    """Print `data` as JSON with `--json`, else `text` (a callable is rendered only when it is wanted)."""
    if getattr(args, "json", False):
        print_json(data)
    else:
        print(text() if callable(text) else text)
