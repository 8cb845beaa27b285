#!/usr/bin/env bash
# Runs scripts/test.sh N times in a row, each from a fresh clone in a 0700 directory with no ../shared beside it,
# with CPU burners running throughout: the suite must not depend on an idle machine or on the checkout's place.
# Usage: scripts/fresh-clone-check.sh [runs=3] [burners=2] [source repository=this checkout]
set -uo pipefail
runs=${1:-3}
burners=${2:-2}
source_repo=${3:-$(cd "$(dirname "$0")/.." && pwd)}
pids=()
for _ in $(seq "$burners"); do sh -c 'while :; do :; done' & pids+=($!); done
trap 'kill "${pids[@]}" 2>/dev/null' EXIT
echo "source $(git -C "$source_repo" rev-parse --short HEAD), $runs runs, $burners burners, $(nproc) cores"
failed=0
for i in $(seq "$runs"); do
  base=$(mktemp -d /tmp/fresh-clone.XXXXXX)  # mktemp makes it 0700
  git clone -q "$source_repo" "$base/repo"
  start=$(date +%s)
  (cd "$base/repo" && scripts/test.sh -q -p no:cacheprovider) > "$base/log" 2>&1
  rc=$?
  echo "run $i: rc=$rc, $(( $(date +%s) - start )) s, dir mode $(stat -c %a "$base"): $(grep -E '^[0-9]+ (passed|failed)|(passed|failed).* in ' "$base/log" | tail -1)"
  [ "$rc" -eq 0 ] || { failed=1; grep -E '^(FAILED|ERROR)' "$base/log" | head -20; }
  rm -rf "$base"
done
exit "$failed"
