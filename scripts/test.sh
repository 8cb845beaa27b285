#!/usr/bin/env bash
# Installs everything the tests need, then runs them (GPU tests skip themselves without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# shellcheck disable=SC1091
. .venv/bin/activate
ruff check .
python -m pytest "$@"
