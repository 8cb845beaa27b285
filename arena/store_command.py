"""The shape of a CLI command that works on the store: open it (embedded unless DATABASE_URL is set), run, and
turn a store that cannot be reached or read into one line that says so. `arena quota` and `arena contest …` use it."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable

import asyncpg

from arena.output import print_json
from core.errors import USER_FACING, KernelArenaError, UserFacingError
from core.settings import Settings
from core.store.pool import open_store

StoreCommand = Callable[[asyncpg.Pool, Settings, argparse.Namespace], Awaitable[int]]


def store_command(command: StoreCommand) -> Callable[[argparse.Namespace], int]:
    """An argparse handler that runs `command` with the store's pool and the settings from the environment."""

    async def in_store(settings: Settings, args: argparse.Namespace) -> int:
        async with open_store(settings.store) as store:
            return await command(store.pool, settings, args)

    def run(args: argparse.Namespace) -> int:
        try:
            return asyncio.run(in_store(Settings(), args))
        except USER_FACING:
            raise
        except (KernelArenaError, OSError, asyncpg.PostgresError) as exc:
            raise UserFacingError(f"The store cannot be used: {exc}") from exc

    return run


def json_store_command(command: StoreCommand) -> Callable[[argparse.Namespace], int]:
    """`store_command`, with `--json` errors: `{"error": {"code", "message"}}` on stdout and exit 2, as a script
    reading the output expects, instead of the one-line message on stderr."""
    run = store_command(command)

    def handler(args: argparse.Namespace) -> int:
        if not args.json:
            return run(args)
        try:
            return run(args)
        except UserFacingError as exc:
            print_json({"error": {"code": exc.code, "message": exc.message}})
            return 2

    return handler
