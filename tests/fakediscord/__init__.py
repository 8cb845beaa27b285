"""A fake Discord (REST API v10 + Gateway v10) for end-to-end tests of the bot with the real discord.py client.

See docs/fake_discord.md. `FakeDiscord` is the server; `fixtures.py` has the `fake_discord` fixture and
`running_bot`; every REST body is validated against Discord's OpenAPI spec (`validation.py`).
"""

import warnings

with warnings.catch_warnings():
    # discord.py imports the stdlib `audioop` for voice, deprecated since Python 3.11 (PEP 594). The warning fires
    # once, at import, before any test's `filterwarnings` mark applies; so this one import is shielded from it.
    warnings.filterwarnings("ignore", message="'audioop' is deprecated", category=DeprecationWarning)
    import discord  # noqa: F401

from .interactions import UserFile
from .models import (
    FakeChannel,
    FakeGuild,
    FakeRole,
    FakeUser,
    InteractionRecord,
    RecordedMessage,
    StoredFile,
    Violation,
)
from .server import FakeDiscord

__all__ = [
    "FakeChannel",
    "FakeDiscord",
    "FakeGuild",
    "FakeRole",
    "FakeUser",
    "InteractionRecord",
    "RecordedMessage",
    "StoredFile",
    "UserFile",
    "Violation",
]
