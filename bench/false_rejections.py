"""How often the runner rejects honest code: the honest corpus (tests/honest) run through the real runner, with
CPU burners loading the host, and every verdict counted.

    python bench/false_rejections.py --device cpu --burners 2 --repeat 2
    python bench/false_rejections.py --device gpu --burners 4 --shard 1/2
    python bench/false_rejections.py --device gpu --burners 4 --shard 2/2

Jobs are timed with the service's own settings (`--measure production`, `MeasureConfig()`, the default) or the
adversarial suite's quick ones (`--measure quick`), which every run before this option recorded. `--shard K/N`
runs every N-th entry from the K-th, so that N calls of a bounded length cover the corpus: on an H100 with 4
burners a third of the 53 GPU entries took 116 to 140 s at the production settings
(bench/results/false_rejections_h100_production.md), the whole 391 s, too close to a 10-minute call with the
set-up around it. `--merge` joins the shards' reports into one, and says which entries none of them ran:

    python bench/false_rejections.py --device gpu --merge SHARD1.md SHARD2.md --out MERGED.md

A rejection is any final status other than "passed" (integrity, implausible_time, wrong_answer, timeout, ...).
A `host_busy` answer (the runner's host too loaded for a check to tell load from hidden work) is never a verdict:
it is tried again, as the dispatcher does, up to `--retries` times, and counted apart. The goal is 0
rejections. The table is printed and written as Markdown (`--out`, default bench/results/
false_rejections_<device>.md).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import platform
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.adversarial import suite  # noqa: E402
from tests.honest.corpus import DESCRIPTIONS, honest_for  # noqa: E402
from tests.honest.test_honest import HONEST_LIMITS, MEASURES  # noqa: E402


def shard(text: str) -> tuple[int, int]:
    """`K/N` (1 ≤ K ≤ N) as (K, N), for argparse."""
    k, sep, n = text.partition("/")
    if not (sep and k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise argparse.ArgumentTypeError(f"{text!r}: expected K/N with 1 <= K <= N, e.g. 1/2")
    return int(k), int(n)


def entries_of_shard(entries: list[suite.Entry], k: int, n: int) -> list[suite.Entry]:
    """Every n-th entry from the k-th: interleaved, so that each shard gets its share of the slow CUDA entries."""
    return entries[k - 1 :: n]


def start_burners(count: int) -> list[subprocess.Popen[bytes]]:
    """Processes that keep one core each busy, at normal priority, for as long as they live."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def describe_machine(device: str) -> str:
    cpu = f"{platform.machine()}, {os.cpu_count()} cores"
    if device != "gpu":
        return f"CPU only ({cpu})"
    import torch

    return f"{torch.cuda.get_device_name()} ({cpu})"


async def run_corpus(args: argparse.Namespace) -> tuple[list[tuple[str, list[str]]], float]:
    entries = entries_of_shard(honest_for(args.device, args.entries), *args.shard)
    if args.mode != "benchmark":
        # Ranked runs add the hidden shapes and the precision audit: the checks a benchmark run does not make.
        entries = [dataclasses.replace(entry, mode=args.mode) for entry in entries]
    rows: list[tuple[str, list[str]]] = []
    start = time.monotonic()
    async with suite.open_suite_runner(
        limits=HONEST_LIMITS, measure=MEASURES[args.measure], sandbox_limits={}
    ) as runner:
        for entry in entries:
            outcomes: list[str] = []
            for _ in range(args.repeat):
                outcome = await _one_run(runner, entry, args.retries)
                outcomes.append(outcome)
                print(f"{entry.name}: {outcome}", flush=True)
            rows.append((entry.name, outcomes))
    return rows, time.monotonic() - start


async def _one_run(runner: suite.SuiteRunner, entry: suite.Entry, retries: int) -> str:
    busy = 0
    while True:
        result = await runner.run(entry)
        code = result.error.code if result.error is not None else None
        if code == "host_busy" and busy < retries:
            busy += 1
            continue
        prefix = f"host_busy x{busy}, then " if busy else ""
        if result.status == "passed":
            return prefix + "passed"
        message = (result.error.message if result.error is not None else "")[:300]
        return prefix + f"{result.status}/{code}: {message}"


def render(rows: list[tuple[str, list[str]]], args: argparse.Namespace, machine: str, seconds: float) -> str:
    runs = [o for _, outcomes in rows for o in outcomes]
    finals = Counter(o.split(":")[0].split("then ")[-1] for o in runs)
    rejected = sum(n for verdict, n in finals.items() if verdict != "passed")
    busy = sum("host_busy" in o for o in runs)
    settings = MEASURES[args.measure]
    measure = (
        f"method {settings.method}, median's relative SE under {settings.target_rse:g}, "
        f"{settings.min_samples} to {settings.max_samples} samples, at most {settings.max_seconds:g} s per case"
    )
    k, n = args.shard
    total = len(honest_for(args.device, args.entries))
    entries = f"all {total}" if n == 1 else f"shard {k}/{n}, {len(rows)} of {total}"
    lines = [
        f"# False rejections: the honest corpus on {args.device.upper()}",
        "",
        f"Machine: {machine}. CPU burners: {args.burners}. Runs per entry: {args.repeat}. Mode: {args.mode}. "
        f"Measuring: {args.measure} ({measure}). Entries: {entries}. "
        f"Recorded {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} in {seconds:.0f} s with "
        f"`python bench/false_rejections.py {' '.join(sys.argv[1:])}`.",
        "",
        f"**{rejected} of {len(runs)} honest runs rejected** ({len(rows)} entries); {busy} answered host_busy "
        "at least once and were tried again.",
        "",
        "| entry | pattern | runs | passed | other outcomes |",
        "|---|---|---|---|---|",
    ]
    for name, outcomes in rows:
        passed = sum(o.endswith("passed") for o in outcomes)
        other = "; ".join(sorted({o for o in outcomes if not o.endswith("passed")})) or ""
        lines.append(f"| {name} | {DESCRIPTIONS[name]} | {len(outcomes)} | {passed} | {other.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


_ROW = re.compile(r"^\| (honest_\S+) \| (.*) \| (\d+) \| (\d+) \| (.*) \|$")
_BUSY = re.compile(r"(\d+) answered host_busy")


def merge(paths: list[Path], device: str) -> str:
    """One report from the reports of several shards (this script's own Markdown)."""
    rows: dict[str, tuple[str, int, int, str]] = {}
    recorded, busy = [], 0
    for path in paths:
        text = path.read_text(encoding="utf-8")
        recorded += [f"- `{path.name}`: {line}" for line in text.splitlines() if line.startswith("Machine:")]
        busy += sum(int(n) for n in _BUSY.findall(text))
        for line in text.splitlines():
            if match := _ROW.match(line):
                name, pattern, runs, passed, other = match.groups()
                rows[name] = (pattern, int(runs), int(passed), other.strip())
    runs = sum(r[1] for r in rows.values())
    rejected = sum(r[1] - r[2] for r in rows.values())
    missing = [e.name for e in honest_for(device) if e.name not in rows]
    lines = [
        f"# False rejections: the honest corpus on {device.upper()}, {len(paths)} shards merged",
        "",
        "Each shard as it was recorded:",
        *recorded,
        "",
        f"**{rejected} of {runs} honest runs rejected** ({len(rows)} entries); {busy} answered host_busy at least "
        "once and were tried again."
        + (f" Not run by any shard: {', '.join(missing)}." if missing else " Every entry of the corpus ran."),
        "",
        "| entry | pattern | runs | passed | other outcomes |",
        "|---|---|---|---|---|",
        *(f"| {name} | {r[0]} | {r[1]} | {r[2]} | {r[3]} |" for name, r in rows.items()),
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    parser.add_argument("--burners", type=int, default=2, help="CPU burner processes during the runs")
    parser.add_argument("--repeat", type=int, default=1, help="runs per entry")
    parser.add_argument("--retries", type=int, default=2, help="re-runs after a host_busy answer")
    parser.add_argument(
        "--measure",
        choices=tuple(MEASURES),
        default="production",
        help="production: the service's MeasureConfig() (default); quick: the adversarial suite's settings",
    )
    parser.add_argument(
        "--mode",
        choices=("benchmark", "ranked"),
        default="benchmark",
        help="the mode every entry runs in; ranked adds the hidden shapes and the precision audit",
    )
    parser.add_argument("--shard", type=shard, default=(1, 1), help="K/N: run every N-th entry from the K-th")
    parser.add_argument("--entries", nargs="*", default=[], help="only these entries")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--merge", type=Path, nargs="+", help="join these shards' reports instead of running")
    args = parser.parse_args()
    out = args.out or ROOT / "bench" / "results" / f"false_rejections_{args.device}.md"
    if args.merge:
        report = merge(args.merge, args.device)
        print(report)
        out.write_text(report, encoding="utf-8")
        return 0 if "**0 of" in report and "Not run by any shard" not in report else 1
    machine = describe_machine(args.device)
    burners = start_burners(args.burners)
    try:
        rows, seconds = asyncio.run(run_corpus(args))
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    report = render(rows, args, machine, seconds)
    print(report)
    out.write_text(report, encoding="utf-8")
    return 0 if "**0 of" in report else 1


if __name__ == "__main__":
    sys.exit(main())
