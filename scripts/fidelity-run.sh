#!/usr/bin/env bash
# On a GPU machine: the timing-fidelity bench (needs ncu), writing logs to $OUT.
set -uo pipefail
OUT=${OUT:-$PWD/gpu-logs}
mkdir -p "$OUT"
compgen -G ".whl/*.whl" >/dev/null && python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv
for script in ${FIDELITY_SCRIPTS:-bench/timing_fidelity.py}; do
  python3 "$script" ${FIDELITY_ARGS:-} 2>&1 | tee "$OUT/$(basename "$script" .py).log"
done
