"""How this host's GPUs are linked, read from `nvidia-smi topo -m`: NVLink between every pair, PCIe only, or a mix.

A distributed problem's floor divides by the links' bandwidth, and a pool of multi-GPU runners serves boards of one
topology, so the runner reports it at registration and in its health. Nothing here needs a GPU to be tested: the
parser reads recorded text. Without nvidia-smi, or with fewer than two GPUs, there is no topology to report.
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess

from contract.wire import LinkTopology

log = logging.getLogger(__name__)

TOPO_TIMEOUT_S = 20.0
# Newer drivers underline the header with terminal escapes even when the output is not a terminal.
_ESCAPES = re.compile(r"\x1b\[[0-9;]*m")
_GPU = re.compile(r"^GPU(\d+)$")


def parse_topology(text: str) -> LinkTopology | None:
    """The GPU-to-GPU part of `nvidia-smi topo -m`; None when it lists fewer than two GPUs or cannot be read.
    Columns past the GPUs (NICs, CPU and NUMA affinity) and rows of NICs are ignored."""
    lines = [_ESCAPES.sub("", line).rstrip() for line in text.splitlines()]
    matrix = lines[: next((i for i, line in enumerate(lines) if line.strip().startswith("Legend")), len(lines))]
    # The header names the columns (GPU0 GPU1 ...); GPU0's own row begins the same way but has X, itself, next.
    header = next((cells for line in matrix if (cells := line.split())[:1] == ["GPU0"] and cells[1:2] != ["X"]), None)
    if header is None:
        return None
    columns = [int(m.group(1)) for name in header if (m := _GPU.match(name))]
    pairs: dict[str, str] = {}
    for line in matrix:
        cells = line.split()
        if not cells or (row := _GPU.match(cells[0])) is None or len(cells) < len(columns) + 1:
            continue
        i = int(row.group(1))
        for j, cell in zip(columns, cells[1 : len(columns) + 1], strict=True):
            if i < j:
                pairs[f"{i}-{j}"] = cell
    if len(columns) < 2 or not pairs:
        return None
    nvlink = [cell.startswith("NV") for cell in pairs.values()]
    links = "nvlink" if all(nvlink) else ("mixed" if any(nvlink) else "pcie")
    return LinkTopology(links=links, pairs=pairs, matrix="\n".join(matrix).strip()[:16384])


def query_topology() -> LinkTopology | None:
    """This host's topology, or None without nvidia-smi or a second GPU. Blocking: call it through a thread."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        out = subprocess.run([smi, "topo", "-m"], capture_output=True, text=True, timeout=TOPO_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("nvidia-smi topo -m failed; no topology reported: %s", exc)
        return None
    if out.returncode != 0:
        log.warning("nvidia-smi topo -m exited with %d; no topology reported", out.returncode)
        return None
    return parse_topology(out.stdout)
