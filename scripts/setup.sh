#!/usr/bin/env bash
# Creates .venv (once) and installs the project with every extra. torch is pinned to the CPU build so that a
# machine without a GPU does not download several GB of CUDA libraries; a GPU machine brings its own torch.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate
python -m pip install -q --upgrade pip >/dev/null
python -c 'import torch' 2>/dev/null || python -m pip install -q "torch==${TORCH_VERSION:-2.13.0}"
python -m pip install -q -e '.[runner,bot,dev]'
