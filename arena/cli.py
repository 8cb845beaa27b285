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
        try:
            module = importlib.import_module(f"arena.commands.{info.name}")
        except ImportError as exc:
            # A runner-only install lacks the bot's packages: its commands still work, the others explain.
            _register_unavailable(sub, info.name, exc)
            continue
        module.register(sub)
    return parser


def _register_unavailable(sub: argparse._SubParsersAction, name: str, exc: ImportError) -> None:
    message = (
        f"`arena {name}` needs the package {exc.name or 'that is missing'}: "
        "install it with `pip install 'kernel-arena[bot]'`."
    )

    def unavailable(args: argparse.Namespace) -> int:
        raise UserFacingError(message)

    p = sub.add_parser(name, help=f"(unavailable: {exc.name} is not installed)", add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=unavailable)


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
