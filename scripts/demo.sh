#!/usr/bin/env bash
# The main job on a fresh machine: install, then one submission through the whole local pipeline.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# shellcheck disable=SC1091
. .venv/bin/activate
arena submit vector_add examples/vector_add.py --mode ranked "$@"
arena leaderboard vector_add
