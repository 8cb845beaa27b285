#!/usr/bin/env bash
# Runs the GPU side of the project on a machine with a CUDA GPU: installs carried wheels (if any), runs the
# `gpu` and `nvcc` tests of the runner-side packages (GPU_TESTS overrides; the bot and store tests need
# asyncpg, which GPU machines lack; GPU_MARK overrides the marker filter, "" runs every test there; GPU_TESTS=none
# runs none), the examples through the CLI (GPU_EXAMPLES=0 skips them), the benchmarks named in GPU_BENCH, and
# the commands in GPU_RUN (separated by ";", each logged to $OUT/run-N.txt). Logs go to $OUT (default: ./gpu-logs).
#
# The honest GPU corpus runs at the service's measurement settings (MeasureConfig()), in tests/honest and in the
# bench. With 4 CPU burners a third of the corpus took 116 to 140 s on an H100 (the whole 391 s), so one call runs
# a shard, with room for the set-up:
#   GPU_TESTS=none GPU_EXAMPLES=0 GPU_RUN='python3 bench/false_rejections.py --device gpu --burners 4
#     --measure production --shard 1/3 --out $OUT/fr_1of3.md' scripts/gpu-check.sh
# and the same with --shard 2/3 and 3/3; `python3 bench/false_rejections.py --device gpu --merge fr_1of3.md
# fr_2of3.md fr_3of3.md --out MERGED.md` joins them. ARENA_HONEST_MEASURE=quick times the pytest entries with
# the quick settings, for a short pass over the whole GPU suite.
set -uo pipefail
OUT=${OUT:-$PWD/gpu-logs}
mkdir -p "$OUT"
if compgen -G ".whl/*.whl" >/dev/null; then
  # Into the interpreter's own environment: sandboxed workers start with a clean environment, no PYTHONPATH.
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir .whl/*.whl || exit 1
fi
python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 \
  || export PYTHONPATH=$PWD
export PYTHONUNBUFFERED=1
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv
  python3 -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__, torch.cuda.get_device_name())'
  nvcc --version | tail -1
  ncu --version 2>/dev/null | tail -1
  grep -i profiling /proc/driver/nvidia/params 2>/dev/null
  echo "user $(id -u)"
} 2>&1 | tee "$OUT/env.txt"
# Tests that keep what they showed (a message, its files) write it here.
export ARENA_EVIDENCE_DIR=${ARENA_EVIDENCE_DIR:-$OUT/evidence}

arena() { python3 -m arena "$@"; }
status=0
[ "${GPU_TESTS:-}" = none ] || python3 -m pytest -p no:cacheprovider -m "${GPU_MARK-gpu or nvcc}" ${GPU_TESTS:-tests/gpu tests/pipeline tests/starters tests/runner tests/measure tests/adversarial tests/honest} -q -rs --durations=10 2>&1 | tee "$OUT/gpu-tests.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
[ "${GPU_EXAMPLES:-1}" = 0 ] || {
  echo "\$ arena submit matmul examples/matmul_naive.cu --no-store"; arena submit matmul examples/matmul_naive.cu --no-store
  echo; echo "\$ arena submit matmul examples/matmul_triton.py --no-store"; arena submit matmul examples/matmul_triton.py --no-store
  echo; echo "\$ arena submit vector_add examples/vector_add.cu --no-store"; arena submit vector_add examples/vector_add.cu --no-store
  echo; echo "\$ arena submit matmul examples/matmul_naive.cu --mode profile --profile-dir \$OUT/profile"
  arena submit matmul examples/matmul_naive.cu --mode profile --profile-dir "$OUT/profile"
  echo; echo "\$ arena submit matmul examples/matmul_naive.cu --no-store --mode profile --json > \$OUT/profile.json"
  arena submit matmul examples/matmul_naive.cu --no-store --mode profile --json > "$OUT/profile.json"; echo "exit $?"
} 2>&1 | tee "$OUT/examples.txt"
for bench in ${GPU_BENCH:-}; do
  python3 "$bench" 2>&1 | tee "$OUT/$(basename "$bench" .py).txt"
done
n=0
IFS=';' read -ra commands <<< "${GPU_RUN:-}"
for command in "${commands[@]}"; do
  [ -n "${command// }" ] || continue
  n=$((n + 1))
  { echo "\$ $command"; bash -c "$command"; } 2>&1 | tee "$OUT/run-$n.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done
# Folders of files (a profile's, a test's evidence) travel better as one archive.
folders=$(find "$OUT" -mindepth 1 -maxdepth 1 -type d -printf '%f\n')
if [ -n "$folders" ]; then
  tar -czf "$OUT/folders.tar.gz" -C "$OUT" $folders && (cd "$OUT" && rm -rf $folders)
fi
exit $status
