"""Package boundaries (DESIGN §1, STYLE §2.1): the core knows neither Discord nor HTTP; the bot never loads torch;
problem modules stored in the database are read, never executed, by the bot."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from problems.catalog import CatalogError, info_from_source, starter
from tests.bot.harness import DATA, ROOT

FORBIDDEN_IN_CORE = {"discord", "aiohttp", "torch"}


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("path", sorted((ROOT / "core").rglob("*.py")), ids=lambda p: p.name)
def test_the_core_imports_neither_discord_nor_http(path: Path) -> None:
    assert not _imports(path) & FORBIDDEN_IN_CORE


def test_cogs_hold_no_sql_and_no_http() -> None:
    for path in (ROOT / "bot" / "cogs").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "core.store" not in text and "aiohttp" not in text and "SELECT" not in text, path.name


def test_the_bot_process_never_imports_torch() -> None:
    code = (
        "import sys, bot.client, bot.__main__, core.browse, problems.catalog as c; "
        "c.builtin_info('matmul'); c.starter('matmul', None, 'triton', 'float16'); "
        "c.builtin_info('all-to-all'); c.starter('all-gather', None, 'python', 'float32'); "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False"


def test_a_stored_problem_module_is_described_without_running_it() -> None:
    source = (DATA / "vector_sub.py").read_text() + "\nraise SystemExit('executed!')\n"
    info = info_from_source(source)
    assert (info.slug, info.title, info.dtypes, info.difficulty) == (
        "vector_sub",
        "Vector subtraction",
        ("float32",),
        "easy",
    )
    assert (
        info.c_signature
        == 'extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n)'
    )
    name, text = starter("vector_sub", source, "cuda", "float32")
    assert name == "vector_sub.cu" and "output_c" in text
    with pytest.raises(CatalogError, match="does not take float16"):
        starter("vector_sub", source, "python", "float16")


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("x = 1\n", "exactly one `Problem` subclass"),
        ("class P(Problem):\n    slug = 'p'\n", "sets no `title`, `description`"),
        ("class P(Problem):\n    slug = make()\n", "`slug` must be a literal"),
        ("class P(Problem):\n    slug='p'\n    title='t'\n    description='d'\n", "no `parameters` tuple"),
        ("def broken(:\n", "does not parse"),
    ],
)
def test_unreadable_problem_modules_say_what_to_fix(source: str, message: str) -> None:
    with pytest.raises(CatalogError, match=message.replace("(", r"\(")):
        info_from_source(source)
