"""The Postgres store: the pool, migrations, the embedded server, and all SQL, one module per aggregate.

Every query function takes a `Conn` (a Pool or a Connection) first, so callers compose transactions, and
returns frozen dataclasses: nothing above this package sees an asyncpg Record.
"""
