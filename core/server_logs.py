"""What the HTTP services (`arena api`, `arena web`) log of a request that aiohttp's parser refused.

aiohttp answers a request it cannot parse (a request line over its 8 KiB, malformed headers) with a bare 400 and
logs it at ERROR with a traceback, as if the service had failed. It is the client's fault, so it becomes one line
at WARNING: who sent it and why it was refused.
"""

from __future__ import annotations

import logging

SERVER_LOGGER = "aiohttp.server"
# aiohttp's parser errors, by name: the core does not import aiohttp (tests/store/test_store_boundaries.py).
PARSER_ERROR = ("aiohttp.http_exceptions", "BadHttpMessage")


def _parser_error(error: BaseException | None) -> bool:
    return error is not None and any((c.__module__, c.__name__) == PARSER_ERROR for c in type(error).__mro__)


class MalformedRequestFilter(logging.Filter):
    """Rewrites aiohttp's record of a parser refusal as one WARNING line, without the traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if _parser_error(error):
            sender = record.args[0] if isinstance(record.args, tuple) and record.args else "an unknown address"
            record.levelno, record.levelname = logging.WARNING, logging.getLevelName(logging.WARNING)
            reason = getattr(error, "message", str(error))
            record.msg, record.args = "refused a malformed request from %s: %s", (sender, reason)
            record.exc_info, record.exc_text = None, None
        return True


def quiet_malformed_requests() -> None:
    """Install the filter on aiohttp's server logger, once."""
    logger = logging.getLogger(SERVER_LOGGER)
    if not any(isinstance(f, MalformedRequestFilter) for f in logger.filters):
        logger.addFilter(MalformedRequestFilter())
