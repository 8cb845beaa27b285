"""Shared configuration of the deployment tests (images, Kubernetes manifests)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    # Building the container images takes minutes: `-m "not slow"` leaves those tests out of a quick local run,
    # while the default suite (CI's) runs them.
    config.addinivalue_line("markers", "slow: builds container images and runs in them (minutes)")
