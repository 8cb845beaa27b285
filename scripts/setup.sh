#!/usr/bin/env bash
# Creates .venv (once) and installs the project with every extra. On a machine without an NVIDIA GPU, torch comes
# from PyTorch's CPU wheel index, so that it does not download several GB of CUDA libraries (the default index
# serves the CUDA build on Linux); a GPU machine brings its own torch, or gets the default index's CUDA build.
# A second run installs again only when pyproject.toml changed (or FORCE_INSTALL=1): scripts/test.sh runs this
# every time, and a reinstall costs a minute on a small CI machine.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
TORCH_CPU_INDEX=${TORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}
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

# Whether PyTorch's CPU index answers within 5 s (a machine without a route to it fails at once, on DNS).
cpu_index_reachable() {
  python - "$TORCH_CPU_INDEX" <<'PY' 2>/dev/null
import sys
import urllib.request

with urllib.request.urlopen(sys.argv[1] + "/torch/", timeout=5) as answer:
    sys.exit(0 if answer.status == 200 else 1)
PY
}

install_torch() {
  local wanted_torch="torch==${TORCH_VERSION:-2.13.0}"
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
    python -m pip install -q "$wanted_torch"
  elif cpu_index_reachable; then
    # An extra index, not a replacement: torch's dependencies still come from the default index, and pip takes
    # the CPU build (2.13.0+cpu sorts above 2.13.0).
    python -m pip install -q --extra-index-url "$TORCH_CPU_INDEX" "$wanted_torch"
  else
    echo "setup.sh: no NVIDIA GPU, but $TORCH_CPU_INDEX cannot be reached: torch comes from the default index" >&2
    python -m pip install -q "$wanted_torch"
  fi
}

python -m pip install -q --upgrade pip >/dev/null
python -c 'import torch' 2>/dev/null || install_torch
python -m pip install -q -e '.[runner,bot,web,agents,dev]'
echo "$wanted" > "$stamp"
