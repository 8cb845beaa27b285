"""How the services write their logs: one line per record, as text for people or as one JSON object for a log
shipper (`--json` on `arena api`, `bot`, `web` and `runner serve`). Imports the standard library only.

A JSON line has `time` (UTC, ISO 8601), `level`, `logger` and `message`, then `exception` where there is one and
every `extra=` field the call gave.
"""

from __future__ import annotations

import datetime
import json
import logging
import sys

TEXT_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"

# The attributes every LogRecord has; anything else on a record came from the call's `extra=`.
_RECORD_FIELDS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class JsonLineFormatter(logging.Formatter):
    """A record as one line of JSON; values JSON cannot hold are written as their text."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.datetime.fromtimestamp(record.created, datetime.UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        for key, value in vars(record).items():
            if key not in _RECORD_FIELDS and key not in line:
                line[key] = value
        return json.dumps(line, default=str)


def configure_logging(*, verbose: bool = False, json_lines: bool = False, level: int = logging.INFO) -> None:
    """Log to stderr for the whole process, replacing what was set before (the CLI sets a quieter default first)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLineFormatter() if json_lines else logging.Formatter(TEXT_FORMAT))
    logging.basicConfig(level=logging.DEBUG if verbose else level, handlers=[handler], force=True)
