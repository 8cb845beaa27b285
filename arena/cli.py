"""The `arena` command line. Each command group lives in its own module under `arena.commands`."""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys

import arena.commands
from bot.core.errors import UserFacingError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arena", description="Kernel Arena: GPU kernel competitions.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug detail to stderr")
    sub = parser.add_subparsers(dest="command", required=True)
    for info in sorted(pkgutil.iter_modules(arena.commands.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"arena.commands.{info.name}")
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, stream=sys.stderr)
    try:
        return int(args.func(args) or 0)
    except UserFacingError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
