"""Checks an uploaded solution file before anything is stored or run."""

from __future__ import annotations

import codecs
import re
import unicodedata
from dataclasses import dataclass
from pathlib import PurePath

from core.errors import BadUploadError
from runner.api import MAX_SOURCE_BYTES, Language

ALLOWED_SUFFIXES = {".cu": "cuda", ".py": "python"}
_TRITON_IMPORT = re.compile(r"^\s*(import\s+triton|from\s+triton[\s.])", re.MULTILINE)


@dataclass(frozen=True)
class Upload:
    file_name: str
    language: Language
    source: str


def language_of(file_name: str, source: str) -> Language:
    """`cuda` for .cu; for .py, `triton` when the module imports triton, else `python`."""
    suffix = PurePath(file_name).suffix.lower()
    if ALLOWED_SUFFIXES.get(suffix) == "cuda":
        return "cuda"
    return "triton" if _TRITON_IMPORT.search(source) else "python"


def sizes_that_differ(size: int, limit: int) -> tuple[str, str]:
    """`size` and `limit` in KiB where that shows them apart, else in exact bytes: 256 KiB + 1 byte must not
    read "is 256 KiB; the limit is 256 KiB"."""
    in_kib = f"{size / 1024:,.0f} KiB", f"{limit / 1024:,.0f} KiB"
    if in_kib[0] != in_kib[1]:
        return in_kib
    return f"{size:,} bytes", f"{limit:,} bytes"


def check_upload(file_name: str, data: bytes, max_bytes: int = MAX_SOURCE_BYTES) -> Upload:
    """Validate extension, size and encoding; return the decoded source and its language."""
    name = PurePath(file_name).name
    if not name or any(unicodedata.category(c) in ("Cc", "Cs") for c in name):
        raise BadUploadError("The file's name is empty or holds control characters. Rename it, e.g. `solution.cu`.")
    suffix = PurePath(name).suffix.lower()
    if suffix not in ALLOWED_SUFFIXES:
        raise BadUploadError(
            f"`{name}` is not a .cu or .py file. Attach a CUDA source (.cu) or a PyTorch/Triton module (.py)."
        )
    if len(data) > max_bytes:
        size, limit = sizes_that_differ(len(data), max_bytes)
        raise BadUploadError(f"`{name}` is {size}; the limit is {limit}. Trim the file and retry.")
    # A leading byte-order mark (Windows editors write one) is dropped: left in, Python reads it as part of the
    # first line (a syntax error) and nvcc as a stray character. Nothing else in the file changes.
    bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        source = data[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadUploadError(
            f"`{name}` is not UTF-8 text (byte {bom + exc.start} is invalid). Save it as UTF-8 and retry."
        ) from exc
    if not source.strip():
        raise BadUploadError(f"`{name}` is empty. Attach the file with your `solution`.")
    if "\x00" in source:
        raise BadUploadError(f"`{name}` contains NUL bytes; attach the source text, not a binary.")
    return Upload(name, language_of(name, source), source)
