"""Mutant checks: each test named here must fail once the code it guards is broken on purpose.

    python bench/mutants.py                     # every mutant, output to stdout
    python bench/mutants.py --out bench/results/mutant_teardown.txt
    python bench/mutants.py --burners 4         # the same with 4 busy cores: the outcome must not change

For each mutant the tree is copied (the files git knows, tracked or not ignored) into a temporary folder, one
exact piece of source is replaced there, and the mutant's tests run in that copy with this interpreter. The
untouched copy runs first, as the control: its tests must pass, or a mutant's failure would prove nothing. A
mutant whose tests pass is a test that cannot fail, and the script exits 1. A mutation whose source text is no
longer in the tree stops the script (exit 2): update the mutant beside the change that moved the code.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutant:
    name: str
    why: str  # what the mutant breaks, in the words a reviewer would use
    path: str  # relative to the repository root
    original: str  # exact source text, found once in `path`
    mutated: str
    tests: tuple[str, ...]  # pytest node ids that must fail on the mutant


TEARDOWN_WAIT = "await asyncio.wait({asyncio.ensure_future(self.after)})"
TEARDOWN_TESTS = (
    "tests/runner/test_teardown_later.py::test_the_next_job_goes_on_only_after_the_previous_teardown",
    "tests/runner/test_teardown_later.py::test_cancelling_a_job_that_waits_leaves_the_previous_teardown_running",
)

NAMES_IN_SQL = "tests/store/test_names_in_sql.py"
ARCHITECTURE = "tests/test_architecture.py"

MUTANTS = (
    Mutant(
        name="teardown-never-waits",
        why="a job goes on at once, whether or not the slot's previous teardown has ended",
        path="runner/job/run.py",
        original=TEARDOWN_WAIT,
        mutated="pass",
        tests=TEARDOWN_TESTS,
    ),
    Mutant(
        name="teardown-starts-but-never-waits",
        why="a job schedules the previous teardown's wait and goes on without it",
        path="runner/job/run.py",
        original=TEARDOWN_WAIT,
        mutated="asyncio.ensure_future(self.after)",
        tests=TEARDOWN_TESTS[:1],
    ),
    Mutant(
        name="names-method-without-migration",
        why="a timing method added to the one list, with no migration to let the store keep it",
        path="contract/names.py",
        original='Method = Literal["arena", "seed", "cpu"]',
        mutated='Method = Literal["arena", "seed", "cpu", "graph"]',
        tests=(NAMES_IN_SQL + "::test_each_named_column_lists_exactly_the_one_list",),
    ),
    Mutant(
        name="names-migration-without-list",
        why="a migration that replaces the submissions' mode CHECK without `profile`",
        path="core/store/migrations/V003__profile_mode.sql",
        original="ADD CONSTRAINT submissions_mode_check CHECK (mode IN ('test', 'benchmark', 'ranked', 'profile')),",
        mutated="ADD CONSTRAINT submissions_mode_check CHECK (mode IN ('test', 'benchmark', 'ranked')),",
        tests=(NAMES_IN_SQL + "::test_each_named_column_lists_exactly_the_one_list",),
    ),
    Mutant(
        name="names-copied-list",
        why="the core spells the timing methods out again instead of importing them",
        path="core/leaderboard.py",
        original="from contract.names import LANGUAGES, METHODS\n",
        mutated='from contract.names import LANGUAGES\n\nMETHODS = ("arena", "seed", "cpu")\n',
        tests=(ARCHITECTURE + "::test_the_name_lists_are_spelled_out_only_in_runner_names",),
    ),
    Mutant(
        name="problems-import-the-runner",
        why="a module of problems/ imports the runner's wire models",
        path="problems/base.py",
        original="import ctypes\n",
        mutated="import ctypes\n\nimport contract.wire  # noqa: F401\n",
        tests=(ARCHITECTURE + "::test_problems_import_nothing_of_the_runner_or_the_service",),
    ),
)


class MutationMissingError(Exception):
    def __init__(self, mutant: Mutant, count: int) -> None:
        super().__init__(
            f"mutant {mutant.name}: its source text occurs {count} times in {mutant.path} (expected once): "
            f"update MUTANTS in bench/mutants.py to the code as it is now"
        )


def tree_files() -> list[str]:
    """The files a fresh clone with local changes would hold: tracked, or untracked and not ignored."""
    listing = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    return [name for name in listing.split("\0") if name and (ROOT / name).is_file()]


def copy_tree(destination: Path) -> None:
    for name in tree_files():
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)


def apply(mutant: Mutant, tree: Path) -> None:
    path = tree / mutant.path
    text = path.read_text(encoding="utf-8")
    count = text.count(mutant.original)
    if count != 1:
        raise MutationMissingError(mutant, count)
    path.write_text(text.replace(mutant.original, mutant.mutated), encoding="utf-8")


def run_tests(tree: Path, tests: tuple[str, ...]) -> tuple[int, str, float]:
    """pytest in the copy: `python -m pytest` puts the copy first on sys.path, so its modules are the ones loaded."""
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
        cwd=tree,
        capture_output=True,
        text=True,
    )
    lines = (done.stdout + done.stderr).strip().splitlines()
    # The last line counts the outcomes; each failure's first `E` line says which assertion caught the mutant.
    reasons = [line for line in lines if line.startswith("E ") and "Error" in line]
    if len(reasons) > 3:  # a parametrized test fails once per parameter: three say enough
        reasons = [*reasons[:3], f"E       ... and {len(reasons) - 3} more"]
    return done.returncode, "\n".join([*lines[-1:], *reasons]), time.monotonic() - start


def check(mutant: Mutant | None, tests: tuple[str, ...]) -> tuple[bool, str]:
    """Run `tests` in a fresh copy of the tree, mutated by `mutant` (None: the control). True when the outcome is
    the expected one: pass for the control, fail for a mutant."""
    with tempfile.TemporaryDirectory(prefix="arena-mutant-") as folder:
        tree = Path(folder)
        copy_tree(tree)
        if mutant is not None:
            apply(mutant, tree)
        code, summary, seconds = run_tests(tree, tests)
    name = mutant.name if mutant is not None else "control (no mutation)"
    expected = code == 0 if mutant is None else code not in (0, 5)  # 5: pytest collected nothing
    verdict = ("ok" if expected else "WRONG") + (": tests pass" if code == 0 else ": tests fail")
    first, *reasons = summary.splitlines()
    return expected, "\n".join([f"{name:<34} {verdict:<18} exit {code}, {seconds:.1f} s  ({first})", *reasons])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, help="also write the report to this file")
    parser.add_argument("--burners", type=int, default=0, help="processes that keep one core busy each meanwhile")
    args = parser.parse_args(argv)
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.burners)]
    try:
        return check_all(args.out, args.burners)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


def check_all(out: Path | None, burners: int) -> int:
    lines: list[str] = []

    def say(line: str) -> None:
        lines.append(line)
        print(line, flush=True)

    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    say(f"mutant checks, {time.strftime('%Y-%m-%d %H:%M %Z')}, python {sys.version.split()[0]}")
    say(f"host: {os.cpu_count()} cores, {burners} CPU burners, load average {load} (the tests time nothing)")
    every_test = tuple(dict.fromkeys(test for mutant in MUTANTS for test in mutant.tests))
    all_expected = True
    try:
        for mutant, tests in [(None, every_test), *((m, m.tests) for m in MUTANTS)]:
            if mutant is not None:
                say(f"{mutant.name}: {mutant.why} ({mutant.path}: {mutant.original!r} -> {mutant.mutated!r})")
            expected, line = check(mutant, tests)
            all_expected &= expected
            for part in line.splitlines():
                say("    " + part)
    except MutationMissingError as exc:
        print(exc, file=sys.stderr)
        return 2
    say("every mutant was caught" if all_expected else "SOME OUTCOME WAS NOT THE EXPECTED ONE: see above")
    if out is not None:
        out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0 if all_expected else 1


if __name__ == "__main__":
    sys.exit(main())
