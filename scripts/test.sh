#!/usr/bin/env bash
# Installs everything the tests need, then runs them (GPU tests skip themselves without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# shellcheck disable=SC1091
. .venv/bin/activate
ruff check .
# Two worker processes by default (ARENA_TEST_WORKERS; 0 runs the tests in this one): the suite took 28-32 minutes in
# one process on a 2-core machine, 18 in two.
python -m pytest -n "${ARENA_TEST_WORKERS:-2}" "$@"
