"""The core and the store stay light: importing them loads neither Discord, nor torch, nor aiohttp."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import core

FORBIDDEN = ("discord", "torch", "aiohttp")


def test_core_and_store_modules_import_no_discord_torch_or_aiohttp():
    # Every module of every feature package (core.submit, core.fleet, core.store, ...), not only the packages.
    modules = [m.name for m in pkgutil.walk_packages(core.__path__, "core.")]
    assert {"core.dispatch", "core.store.leaderboard", "core.submit.service", "core.fleet.view"} <= set(modules)
    code = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(out.stdout) == []
