"""Runs the adversarial regression suite (tests/adversarial, DESIGN.md §6) against the real runner on this machine.

    python scripts/adversarial.py                       # every entry this machine can run
    python scripts/adversarial.py --device cpu          # the CPU entries only (what CI runs)
    python scripts/adversarial.py --only py_nan_clock --only cu_racy_kernel --output adversarial.md

Prints a markdown table (name | class | language | expected | got | OK/MISMATCH) and exits 1 on any mismatch.
Entries needing a GPU or nvcc that this machine lacks are listed as skipped. The runner process (this one)
carries a sentinel secret in its environment from the moment it starts, so the probes that read
environments, /proc or other jobs' files have something real to find.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.adversarial import suite  # noqa: E402
from tests.adversarial.suite import Entry  # noqa: E402

HEADER = ("name", "class", "language", "expected", "got", "verdict")


@dataclass(frozen=True)
class Row:
    entry: Entry
    got: str
    status: str  # OK, MISMATCH or SKIPPED

    def cells(self) -> tuple[str, ...]:
        expected = " / ".join(sorted(self.entry.expected))
        return (self.entry.name, self.entry.cheat_class, self.entry.language, expected, self.got, self.status)


def _gpu_available() -> bool:
    if shutil.which("nvidia-smi") is None:
        return False
    try:
        listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return listing.returncode == 0 and "GPU" in listing.stdout


def _skip_reason(entry: Entry, has_gpu: bool, has_nvcc: bool) -> str | None:
    if entry.device == "gpu" and not has_gpu:
        return "skipped: no GPU here"
    if entry.needs_nvcc and not has_nvcc:
        return "skipped: no nvcc here"
    return None


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def format_table(rows: list[Row]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(_cell(c) for c in row.cells()) + " |" for row in rows]
    return "\n".join(lines) + "\n"


async def run_suite(entries: list[Entry]) -> list[Row]:
    has_gpu, has_nvcc = _gpu_available(), shutil.which("nvcc") is not None
    rows: list[Row] = []
    async with suite.open_suite_runner() as runner:
        for entry in entries:
            reason = _skip_reason(entry, has_gpu, has_nvcc)
            if reason is not None:
                rows.append(Row(entry, reason, "SKIPPED"))
                continue
            if entry.control is not None and entry.control not in runner.results:
                control = suite.BY_NAME[entry.control]
                rows.append(await _run_one(runner, control))
            rows.append(await _run_one(runner, entry))
            sys.stderr.write(f"{rows[-1].status:>8}  {entry.name}: {rows[-1].got}\n")
    return rows


async def _run_one(runner: suite.SuiteRunner, entry: Entry) -> Row:
    result = await runner.run(entry)
    ok, verdict = await runner.judge(entry, result)
    return Row(entry, verdict, "OK" if ok else "MISMATCH")


def _with_sentinel_in_environment() -> None:
    """Re-execute this script with the sentinel secret (and a runner secret) in its initial environment, so it
    shows in /proc/<pid>/environ of the runner process too, not only in os.environ."""
    if suite.SENTINEL_ENV in os.environ:
        return
    value = suite.sentinel()
    env = {**os.environ, suite.SENTINEL_ENV: value}
    env.setdefault("RUNNER_SECRET", value)
    os.execve(sys.executable, [sys.executable, *sys.argv], env)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=("cpu", "gpu", "all"), default="all", help="which entries to run")
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="run only this entry (repeatable)")
    parser.add_argument("--output", type=Path, help="also write the markdown table to this file")
    args = parser.parse_args(argv)
    try:
        entries = suite.entries_for(args.device, args.only)
    except KeyError as exc:
        parser.error(str(exc))
    _with_sentinel_in_environment()
    rows = asyncio.run(run_suite(entries))
    table = format_table(rows)
    sys.stdout.write(table)
    mismatches = [row for row in rows if row.status == "MISMATCH"]
    skipped = [row for row in rows if row.status == "SKIPPED"]
    passed = len(rows) - len(mismatches) - len(skipped)
    summary = f"\n{passed} OK, {len(mismatches)} mismatches, {len(skipped)} skipped\n"
    sys.stdout.write(summary)
    if args.output is not None:
        args.output.write_text(table + summary, encoding="utf-8")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
