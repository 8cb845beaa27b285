"""The dispatcher's LISTEN connection: a NOTIFY of a new job wakes the loop, and a connection that died with the
server is made again."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable

import asyncpg

from core.settings import DispatchSettings
from core.store import jobs
from core.store.outage import STORE_ERRORS

log = logging.getLogger(__name__)


def _alive(conn: asyncpg.Connection) -> bool:
    """Whether a pooled connection is still open. One the server dropped went back to the pool by itself, and
    its proxy refuses every call, this one included."""
    try:
        return not conn.is_closed()
    except asyncpg.InterfaceError:
        return False


class QueueListener:
    """Holds the connection that LISTENs for new jobs. `wake` is called on every NOTIFY, and when the server drops
    the connection."""

    def __init__(self, pool: asyncpg.Pool, settings: DispatchSettings, wake: Callable[[], None]) -> None:
        self._pool = pool
        self._settings = settings
        self._wake = wake
        self._listener: asyncpg.Connection | None = None

    @property
    def listening(self) -> bool:
        """Whether a LISTEN connection is held (it may still have died without a word: `check`)."""
        return self._listener is not None

    async def listen(self) -> None:
        """Hold a connection that LISTENs for new jobs; make it again when the old one died with the server."""
        conn = self._listener
        if conn is not None and _alive(conn):
            return
        if conn is not None:
            log.warning("dispatcher %s: the LISTEN connection was lost; connecting again", self._settings.owner)
            await self.unlisten()
        # Bounded: with every pooled connection busy, the loop must go on dispatching (and polling) meanwhile.
        conn = await self._pool.acquire(timeout=self._settings.store_retry_s * 5)
        try:
            await conn.add_listener(jobs.QUEUE_CHANNEL, self._notified)
            # Wakes the loop when the server drops the connection, so that it connects again at once instead
            # of sleeping out `poll_s` deaf to new jobs.
            conn.add_termination_listener(self._listener_lost)
        except BaseException:
            await self._drop(conn)
            raise
        self._listener = conn

    def _listener_lost(self, *_: object) -> None:
        self._wake()

    async def unlisten(self) -> None:
        conn, self._listener = self._listener, None
        if conn is None:
            return
        if _alive(conn):
            with contextlib.suppress(*STORE_ERRORS):
                conn.remove_termination_listener(self._listener_lost)
                await conn.remove_listener(jobs.QUEUE_CHANNEL, self._notified)
        await self._drop(conn)

    async def _drop(self, conn: asyncpg.Connection) -> None:
        """Give the connection back to the pool; one that died went back by itself when it closed."""
        try:
            await self._pool.release(conn, timeout=self._settings.store_retry_s * 5)
        except STORE_ERRORS:
            # A connection that cannot be reset cleanly is of no use to anyone.
            with contextlib.suppress(asyncpg.InterfaceError):
                conn.terminate()

    async def check(self) -> None:
        """Check that the LISTEN connection still answers: a connection cut off without a word (a dead network
        path) would otherwise look alive and hear nothing. One that does not answer is closed, and the error
        raised."""
        conn = self._listener
        if conn is not None:
            try:
                await conn.execute("SELECT 1", timeout=self._settings.store_retry_s * 5)
            except STORE_ERRORS:
                with contextlib.suppress(asyncpg.InterfaceError):
                    conn.terminate()
                raise

    def _notified(self, *_: object) -> None:
        self._wake()
