"""The store's errors as its callers need to tell them apart: an outage, which passes, and the rest.

Every layer that rides out a database that is briefly away (the dispatcher, the API, the bot's trackers) catches
the same errors, so they are named here, beside the pool, once.
"""

from __future__ import annotations

import asyncpg

# The store is out of reach (stopped, restarting, recovering, the network): wait and try again. Other errors are
# bugs or bad data, which no retry fixes.
STORE_OUTAGE_ERRORS: tuple[type[BaseException], ...] = (
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.exceptions.InsufficientResourcesError,
    asyncpg.exceptions.TransactionRollbackError,  # a deadlock or serialization failure: try again
    asyncpg.exceptions.ReadOnlySQLTransactionError,  # a failover that has not promoted the standby yet
    asyncpg.InterfaceError,
    # A connection that the server's shutdown left half-way through an error ("cannot switch to state 11;
    # another operation (2) is in progress"): seen when the LISTEN connection was made during a stop.
    asyncpg.exceptions.InternalClientError,
    OSError,
    TimeoutError,
)
# What the dispatch loop rides out before looking again: any store error, so that one bad row cannot stop it.
STORE_ERRORS: tuple[type[BaseException], ...] = (asyncpg.PostgresError, *STORE_OUTAGE_ERRORS)
