"""Service accounts: users that are neither a chat member nor this machine's local user, for an operator's CI job
or an agent. The store keys one `service:<name>`; it has its own quota, bans and board rows, shown as its name.

An operator makes its personal tokens from the CLI (`arena token create --user NAME`), so that nobody needs a
Discord login to call the API as a machine.
"""

from __future__ import annotations

import re
from typing import Final

from core.errors import InvalidOptionError

PLATFORM: Final = "service"
NAME_PATTERN: Final = re.compile(r"[a-z0-9][a-z0-9._-]{0,39}")


def service_external_id(name: str) -> str:
    """The store's key for the service account `name`; raises InvalidOptionError for a name it cannot be."""
    if NAME_PATTERN.fullmatch(name) is None:
        raise InvalidOptionError(
            f"{name!r} cannot name a service account: use 1 to 40 lowercase letters, digits, '.', '_' or '-', "
            "starting with a letter or digit (such as ci-bot)."
        )
    return f"{PLATFORM}:{name}"
