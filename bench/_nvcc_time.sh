#!/usr/bin/env bash
# Temporary: what nvcc costs by itself, with the runner's flags.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir .whl/*.whl >/dev/null 2>&1
python3 - <<'PY'
import subprocess, tempfile, time
from runner.host.compile import compile_flags
flags = compile_flags("sm_90a")
print("flags:", " ".join(flags))
d = tempfile.mkdtemp()
for label, extra in [("runner flags", []), ("runner flags", []), ("runner flags", []), ("-Xcompiler -O0", ["-Xcompiler", "-O0"]), ("no -lineinfo", None)]:
    f = [x for x in flags if x != "-lineinfo"] if extra is None else flags + extra
    t = time.perf_counter(); subprocess.run(["nvcc", *f, "-o", f"{d}/a.so", "examples/matmul_naive.cu"], check=True)
    print(f"{label}: {time.perf_counter() - t:.3f} s")
subprocess.run(["nvcc", *flags, "-time", f"{d}/t.csv", "-o", f"{d}/a.so", "examples/matmul_naive.cu"], check=True)
for line in open(f"{d}/t.csv"):
    parts = [p.strip() for p in line.split(",")]
    print(parts[1], parts[-2], parts[-1])
PY
