"""Error types of the core. A UserFacingError's message is safe to show as-is and says what to fix."""

from __future__ import annotations


class KernelArenaError(Exception):
    """Base of every error the core raises on purpose."""


class UserFacingError(KernelArenaError):
    """Bad input from a competitor or moderator; the message tells them what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadUploadError(UserFacingError):
    """The attached file cannot be a submission (extension, size, encoding)."""


class UnknownProblemError(UserFacingError):
    """No enabled problem has this slug."""
