"""The shape of a CLI command that works on the store: open it (embedded unless DATABASE_URL is set), run, and
turn a store that cannot be reached or read into one line that says so. `arena quota` and `arena contest …` use it."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable

import asyncpg

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
