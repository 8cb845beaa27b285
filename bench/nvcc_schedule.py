"""nvcc alone against nvcc's steps with the host front end and the device compile at once (nvcc_schedule.py).

    python bench/nvcc_schedule.py [SOURCE] [--builds N] [--out FILE]

Interleaved builds of SOURCE (default examples/matmul_naive.cu) with the runner's fixed flags, each in a fresh
directory and with a unique comment (no cache of any kind), outside the sandbox; the first of each is left out as
warm-up. The scheduled build's time includes its `nvcc --dryrun`. A scheduled build that fell back to plain nvcc
fails the bench.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from runner.host.compile import nvcc_command  # noqa: E402
from runner.host.nvcc_schedule import parallel_script  # noqa: E402


def _build(source: str, index: int, scheduled: bool) -> float:
    work = Path(tempfile.mkdtemp())
    try:
        (work / "tmp").mkdir()
        text = source + f"// build {index}\n"
        (work / "solution.cu").write_text(text)
        env = {"PATH": os.environ["PATH"], "TMPDIR": str(work / "tmp"), "HOME": str(work)}
        argv = nvcc_command("sm_90a", str(work / "solution.cu"), str(work / "solution.so"), text)
        start = time.perf_counter()
        if scheduled:
            script = parallel_script(argv, text, env, str(work))
            if script is None:
                raise SystemExit("this nvcc's plan is not one the schedule knows")
            # A fallback to plain nvcc would be timed as the schedule: fail instead.
            subprocess.run(["/bin/sh", "-c", script.replace("|| exec", "|| exit 97 #")], check=True, env=env, cwd=work)
        else:
            subprocess.run(argv, check=True, env=env, cwd=work)
        seconds = time.perf_counter() - start
        if not (work / "solution.so").is_file():
            raise SystemExit("no library was built")
        return seconds
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", nargs="?", type=Path, default=ROOT / "examples" / "matmul_naive.cu")
    parser.add_argument("--builds", type=int, default=7)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    source = args.source.read_text()
    times: dict[str, list[float]] = {"nvcc": [], "scheduled (dryrun included)": []}
    for index in range(args.builds):
        times["nvcc"].append(_build(source, index, scheduled=False))
        times["scheduled (dryrun included)"].append(_build(source, index, scheduled=True))
    lines = [f"# {args.source.name}, {args.builds} interleaved builds each, the first left out (ms)"]
    for name, values in times.items():
        kept = values[1:]
        listed = " ".join(f"{v * 1000:.0f}" for v in kept)
        lines.append(f"{name:28s} {listed}  median {statistics.median(kept) * 1000:.0f}")
    report = "\n".join(lines) + "\n"
    print(report, end="")
    if args.out is not None:
        args.out.write_text(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
