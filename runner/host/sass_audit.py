"""Reads the machine code (SASS) of a built CUDA library for the precision audit: every matrix instruction and
every conversion into FP8, with the operand type it works in.

Verification compares outputs within a tolerance, so a float32 kernel that multiplies on the tensor cores in
float16 can pass it; the instructions cannot hide their types. What is read, by the mnemonic's own suffixes
(checked against nvcc 13's output for sm_90a, recorded in tests/fixtures/sass/):
- `HMMA.<shape>.<accumulator>[.BF16|.TF32]` (mma.sync and WMMA): float16 operands when no type is named;
- `HGMMA.<shape>.<accumulator>[.BF16|.TF32]` (Hopper's wgmma on 16- and 32-bit types), float16 by default;
- `QGMMA.<shape>.<accumulator>.E4M3|.E5M2…` (wgmma on FP8), `IMMA` (int8, int4), `DMMA` (float64);
- `F2FP….E4M3|E5M2…`: values rounded into FP8 or read from it. Hopper runs `mma.sync` on FP8 as conversions and
  float16 HMMA, so the conversions are what shows FP8 there.
`HFMA2.MMA` is a register move on the matrix pipe, not matrix math, and is not counted.

The same reading serves the cubins Triton compiles for a Python submission (`runner/host/triton_cubins.py`):
`cuobjdump -sass` reads a bare cubin as it reads a library. Code that is not in the library or the cubins (cuBLAS,
cuDNN) is not seen: `docs/precision.md` says so.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import shutil
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path

from contract.precision import MatrixUse, Operand

# `/*0160*/   @!P0 HMMA.16816.F32 R4, R4, R16, RZ ;` : the address, an optional predicate, the mnemonic.
_INSTRUCTION = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)")
_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
_FP8 = re.compile(r"\.(E4M3|E5M2)(?:\.|$)")
_MANGLED_PART = re.compile(r"(\d+)")


def operand_of(mnemonic: str) -> Operand | None:
    """The operand type of one SASS mnemonic, or None when it is not matrix math nor an FP8 conversion."""
    family, _, rest = mnemonic.partition(".")
    parts = set(rest.split(".")) if rest else set()
    if family in ("HMMA", "HGMMA"):
        if family == "HMMA" and "MMA" in parts:
            return None
        if "BF16" in parts:
            return "bf16"
        if "TF32" in parts:
            return "tf32"
        return "fp16"
    if family == "QGMMA":
        return "fp8"
    if family == "IMMA":
        return "int4" if parts & {"S4", "U4"} else "int8"
    if family == "DMMA":
        return "fp64"
    if family == "F2FP" and _FP8.search(mnemonic):
        return "fp8"
    return None


def kernel_name(symbol: str) -> str:
    """A readable name for a mangled kernel symbol (`_Z6matmulPKfS0_Pf` -> `matmul`, `_ZN2ns1kEv` -> `ns::k`);
    anything else as it is."""
    if not symbol.startswith("_Z"):
        return symbol
    body = symbol[3:] if symbol.startswith("_ZN") else symbol[2:]
    names: list[str] = []
    while body:
        match = _MANGLED_PART.match(body)
        if match is None:
            break
        length, start = int(match.group(1)), match.end()
        names.append(body[start : start + length])
        body = body[start + length :]
        if not symbol.startswith("_ZN"):
            break
    return "::".join(names) or symbol


def matrix_uses(sass: Iterable[str]) -> list[MatrixUse]:
    """Every matrix instruction form and FP8 conversion in `sass` (cuobjdump's lines), per kernel, in order of
    first appearance."""
    counts: Counter[tuple[str, str]] = Counter()
    operands: dict[str, Operand] = {}
    kernel = "?"
    for line in sass:
        function = _FUNCTION.match(line)
        if function is not None:
            kernel = kernel_name(function.group(1))
            continue
        match = _INSTRUCTION.match(line)
        if match is None:
            continue
        mnemonic = match.group(1)
        operand = operand_of(mnemonic)
        if operand is not None:
            counts[(kernel, mnemonic)] += 1
            operands[mnemonic] = operand
    return [
        MatrixUse(instruction=mnemonic, operand=operands[mnemonic], kernel=name, count=count)
        for (name, mnemonic), count in counts.items()
    ]


@cache
def cuobjdump_path() -> Path | None:
    """cuobjdump: on PATH, beside nvcc in the toolkit, or from the `nvidia-cuda-cuobjdump` wheel (which needs
    `nvidia-cuda-nvdisasm` beside it)."""
    found = shutil.which("cuobjdump")
    if found:
        return Path(found)
    nvcc = shutil.which("nvcc")
    if nvcc:
        beside = Path(nvcc).resolve().parent / "cuobjdump"
        if beside.is_file():
            return beside
    spec = importlib.util.find_spec("nvidia")
    roots = (spec.submodule_search_locations or ()) if spec is not None else ()
    for root in roots:
        for candidate in sorted(Path(root).glob("cu*/bin/cuobjdump"), reverse=True):
            return candidate
    return None


def nvdisasm_path(cuobjdump: Path) -> Path | None:
    """The nvdisasm that cuobjdump runs: beside it, or on PATH."""
    beside = cuobjdump.parent / "nvdisasm"
    if beside.is_file():
        return beside
    found = shutil.which("nvdisasm")
    return Path(found) if found else None


def sass_command(library: Path, out: Path) -> list[str] | None:
    """The shell command that writes the SASS of `library` to `out`, or None when this host has no cuobjdump."""
    tool = _cuobjdump_words()
    if tool is None:
        return None
    env, cuobjdump = tool
    return ["/bin/sh", "-c", f"{env}exec {cuobjdump} -sass {_quote(library)} > {_quote(out)}"]


# cuobjdump reads one file a run, and spends a third of a second starting (nvdisasm with it): a job's cubins are
# read this many at a time.
PARALLEL_CUBINS = 8


def cubins_sass_command(cubins: Sequence[Path]) -> list[str] | None:
    """The shell command that writes the SASS of each `x.cubin` to `x.sass` beside it (none where cuobjdump
    fails on it), or None when this host has no cuobjdump."""
    tool = _cuobjdump_words()
    if tool is None:
        return None
    env, cuobjdump = tool
    script = (
        "i=0; for f do "
        f'( {env}{cuobjdump} -sass "$f" > "${{f%.cubin}}.sass" 2>/dev/null || rm -f "${{f%.cubin}}.sass" ) & '
        f"i=$((i + 1)); [ $((i % {PARALLEL_CUBINS})) -ne 0 ] || wait; "
        "done; wait"
    )
    return ["/bin/sh", "-c", script, "sh", *(str(cubin) for cubin in cubins)]


def _cuobjdump_words() -> tuple[str, str] | None:
    """(`NVDISASM_PATH=… ` or "", the quoted cuobjdump), to start a shell command with."""
    cuobjdump = cuobjdump_path()
    if cuobjdump is None:
        return None
    nvdisasm = nvdisasm_path(cuobjdump)
    return (f"NVDISASM_PATH={_quote(nvdisasm)} " if nvdisasm is not None else ""), _quote(cuobjdump)


def _quote(path: Path) -> str:
    return shlex.quote(str(path))
