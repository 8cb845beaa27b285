"""The fake Discord's own tests use its fixtures like any other test directory would."""

from tests.fakediscord.fixtures import fake_discord  # noqa: F401  (a fixture, found by name)
