#!/usr/bin/env bash
# Creates .venv (once) and installs the project with every extra. torch is pinned to the CPU build so that a
# machine without a GPU does not download several GB of CUDA libraries; a GPU machine brings its own torch.
# A second run installs again only when pyproject.toml changed (or FORCE_INSTALL=1): scripts/test.sh runs this
# every time, and a reinstall costs a minute on a small CI machine.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "setup.sh: $PYTHON is not Python 3.11 or newer; run it as PYTHON=python3.11 scripts/setup.sh" >&2
    exit 2
  fi
  "$PYTHON" -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate
stamp=.venv/.kernel-arena-installed
wanted="$(sha256sum pyproject.toml | cut -d' ' -f1) $PWD torch=${TORCH_VERSION:-2.13.0}"
if [ "${FORCE_INSTALL:-0}" != 1 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ] && command -v ruff >/dev/null \
  && python -c 'import importlib.metadata as m, torch; m.version("kernel-arena")' 2>/dev/null; then
  exit 0
fi
python -m pip install -q --upgrade pip >/dev/null
python -c 'import torch' 2>/dev/null || python -m pip install -q "torch==${TORCH_VERSION:-2.13.0}"
python -m pip install -q -e '.[runner,bot,web,dev]'
echo "$wanted" > "$stamp"
