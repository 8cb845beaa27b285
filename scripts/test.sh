#!/usr/bin/env bash
# Installs everything the tests need, then runs them (GPU tests skip themselves without a GPU).
#
#   scripts/test.sh            the whole suite, as CI runs it
#   scripts/test.sh --quick    all but the `slow` tier (real daemons, browsers, image builds, fault injection:
#                              tests/tiers.py lists them), for an answer in minutes before a commit
#
# Any other arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
marker=()
if [ "${1:-}" = "--quick" ]; then
  shift
  marker=(-m "not slow")
fi
scripts/setup.sh
# shellcheck disable=SC1091
. .venv/bin/activate
ruff check .
# One process by default. ARENA_TEST_WORKERS=2 runs two (pytest-xdist, add --dist loadfile): on a 2-core machine it
# saves 3 % (38:55 against 40:09, bench/results/ci_time_breakdown.txt), since the suite is bound by CPU, and the
# judged runs of one worker then time their cases beside the other's load.
python -m pytest -n "${ARENA_TEST_WORKERS:-0}" "${marker[@]}" "$@"
