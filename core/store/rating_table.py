"""The global rating table: every rated user with their current rating, for the public ratings page.

The ratings themselves are written by the contest freeze (core/store/contests.py); this only reads them.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.store.pool import Conn


@dataclass(frozen=True)
class RatedUser:
    user_id: int
    display_name: str
    rating: float
    rd: float
    volatility: float
    contests: int


async def rated_users(conn: Conn) -> list[RatedUser]:
    """Every user with a rating who is not banned (a ban takes them off the boards, and so off this table), in
    user id order; the caller orders them by its own rule."""
    rows = await conn.fetch(
        """SELECT r.user_id, u.display_name, r.rating, r.rd, r.volatility, r.contests
        FROM ratings r JOIN users u ON u.id = r.user_id
        WHERE NOT EXISTS (SELECT 1 FROM bans b WHERE b.user_id = r.user_id AND b.lifted_at IS NULL)
        ORDER BY r.user_id"""
    )
    return [RatedUser(**r) for r in rows]
