"""The web front end stays thin and light: no SQL of its own, and its process loads neither torch nor Discord."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The codebase writes SQL keywords in capitals (an HTML <select> is not a query).
SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE)\s")


@pytest.mark.parametrize("path", sorted((ROOT / "web").glob("*.py")), ids=lambda p: p.name)
def test_the_web_front_end_holds_no_sql(path: Path) -> None:
    # Its queries live in core/store/, as the bot's and the CLI's do.
    assert not SQL.search(path.read_text(encoding="utf-8")), path.name


def test_the_web_process_renders_every_builtin_problem_without_torch_or_discord() -> None:
    code = (
        "import sys, web.__main__, web.app, problems.catalog as c\n"
        "from problems.registry import builtin_problems\n"
        "from problems.distributed.registry import distributed_problems\n"
        "for slug in [*builtin_problems(), *distributed_problems()]: c.describe(slug, None)\n"
        "print(sorted(m for m in ('torch', 'discord') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]"
