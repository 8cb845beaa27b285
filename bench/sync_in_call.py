"""What a synchronise inside the call costs, as the runner times it: honest solutions that wait for the GPU
inside `solution` (tests/honest) against the same work without the wait, case by case.

    python bench/sync_in_call.py            # on a GPU runner machine; writes nothing, prints the table

Each pair runs through `arena submit --no-store --json` (the real judge and launcher). A waiting call is timed
with the host's part of the wait included and flagged `host_waits`; the table shows what that part costs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HONEST = ROOT / "tests" / "honest" / "submissions"
CONTROLS = ROOT / "tests" / "adversarial" / "submissions"
PAIRS = (
    ("vector_add", ROOT / "examples" / "vector_add.cu", HONEST / "cu_device_sync.cu"),
    ("vector_add", ROOT / "examples" / "vector_add.cu", HONEST / "cu_stream_sync.cu"),
    ("vector_add", CONTROLS / "control_vector_add.py", HONEST / "py_cuda_synchronize.py"),
    ("matrix-multiplication", CONTROLS / "control_matmul.py", HONEST / "py_matmul_item.py"),
)


def timings(slug: str, path: Path) -> dict[str, tuple[float, bool]]:
    command = [sys.executable, "-m", "arena", "submit", slug, str(path), "--no-store", "--json", "--device", "gpu"]
    out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False).stdout
    result = json.loads(out)
    if result["status"] != "passed":
        raise SystemExit(f"{path.name}: {result['status']} {result.get('error')}")
    return {t["name"]: (t["runtime_median_us"], t.get("host_waits", False)) for t in result["timings"]}


def main() -> int:
    print("| problem | case | without the wait | file with the wait | with the wait (µs) | host_waits |")
    print("|---|---|---|---|---|---|")
    for slug, plain, waiting in PAIRS:
        base, synced = timings(slug, plain), timings(slug, waiting)
        for case, (median, _) in base.items():
            other, flagged = synced[case]
            print(f"| {slug} | {case} | {median:.2f} µs ({plain.name}) | {waiting.name} | {other:.2f} | {flagged} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
