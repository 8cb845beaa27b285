"""argparse types of the CLI's options: each refuses a bad value with a message that says what to give."""

from __future__ import annotations

import argparse
import math
import urllib.parse
from collections.abc import Callable


def runner_url(text: str) -> str:
    """An argparse type: the runner's base URL, with its scheme (aiohttp cannot guess one)."""
    parts = urllib.parse.urlsplit(text)
    if "://" not in text:
        raise argparse.ArgumentTypeError(f"{text!r} has no scheme; write it as http://{text}")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(f"{text!r} is not a runner URL; write it as http://HOST:PORT")
    try:
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} has a port that is not a number from 0 to 65535") from None
    return text


def finite_number(low: float, high: float | None = None) -> Callable[[str], float]:
    """An argparse type: a finite number above `low` (and at most `high`); Infinity and NaN are refused here,
    before they reach a measurement loop that would never end or never converge."""

    def parse(text: str) -> float:
        bound = f"above {low:g}" + (f" and at most {high:g}" if high is not None else "")
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number; give one {bound}") from None
        if not math.isfinite(value) or value <= low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{text} is out of range; give a finite number {bound}")
        return value

    return parse


def whole_number(low: int) -> Callable[[str], int]:
    """An argparse type: an integer of at least `low`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{text} is too small; give at least {low}")
        return value

    return parse
