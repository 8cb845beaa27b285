#!/usr/bin/env bash
# Runs scripts/test.sh N times in a row, each from a fresh clone in a 0700 directory with no ../shared beside it,
# with CPU burners running throughout: the suite must not depend on an idle machine or on the checkout's place.
# Usage: scripts/fresh-clone-check.sh [runs=3] [burners=2] [source repository=this checkout] [log folder]
set -uo pipefail
runs=${1:-3}
burners=${2:-2}
source_repo=${3:-$(cd "$(dirname "$0")/.." && pwd)}
logs=${4:-$(mktemp -d /tmp/fresh-clone-logs.XXXXXX)}
mkdir -p "$logs"
pids=()
for _ in $(seq "$burners"); do sh -c 'while :; do :; done' & pids+=($!); done
trap 'kill "${pids[@]}" 2>/dev/null' EXIT
echo "source $(git -C "$source_repo" rev-parse --short HEAD), $runs runs, $burners burners, $(nproc) cores, logs in $logs"
failed=0
for i in $(seq "$runs"); do
  base=$(mktemp -d /tmp/fresh-clone.XXXXXX)  # mktemp makes it 0700
  git clone -q "$source_repo" "$base/repo"
  mode_before=$(stat -c %a "$base")
  start=$(date +%s)
  (cd "$base/repo" && scripts/test.sh -q -p no:cacheprovider --durations=30) > "$logs/run-$i.log" 2>&1
  rc=$?
  summary=$(grep -E '(passed|failed).* in ' "$logs/run-$i.log" | tail -1)
  echo "run $i: rc=$rc, $(( $(date +%s) - start )) s, clone's folder mode $mode_before (after: $(stat -c %a "$base")): $summary"
  [ "$rc" -eq 0 ] || { failed=1; grep -E '^(FAILED|ERROR)' "$logs/run-$i.log" | head -20; }
  rm -rf "$base"
done
exit "$failed"
