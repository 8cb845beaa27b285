"""Checks an uploaded solution file before anything is stored or run, once, into one typed value (`Upload`)."""

from __future__ import annotations

import codecs
import re
import unicodedata
from dataclasses import dataclass
from pathlib import PurePath

from contract.names import Language
from contract.wire import MAX_SOURCE_BYTES
from core.errors import BadUploadError

ALLOWED_SUFFIXES = {".cu": "cuda", ".py": "python"}
_TRITON_IMPORT = re.compile(r"^\s*(import\s+triton|from\s+triton[\s.])", re.MULTILINE)


@dataclass(frozen=True)
class Upload:
    """A checked upload: its base name, its language, and its source text."""

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


def check_declared(file_name: str, size: int, max_bytes: int = MAX_SOURCE_BYTES) -> str:
    """What can be checked before an upload is read (a Discord attachment's declared size, a multipart part's name):
    its name, extension and size. The file's base name; BadUploadError says what to fix."""
    name = PurePath(file_name).name
    if not name or any(unicodedata.category(c) in ("Cc", "Cs") for c in name):
        raise BadUploadError("The file's name is empty or holds control characters. Rename it, e.g. `solution.cu`.")
    if PurePath(name).suffix.lower() not in ALLOWED_SUFFIXES:
        raise BadUploadError(
            f"`{name}` is not a .cu or .py file. Attach a CUDA source (.cu) or a PyTorch/Triton module (.py)."
        )
    if size > max_bytes:
        shown, limit = sizes_that_differ(size, max_bytes)
        raise BadUploadError(f"`{name}` is {shown}; the limit is {limit}. Trim the file and retry.")
    return name


def check_upload(file_name: str, data: bytes, max_bytes: int = MAX_SOURCE_BYTES) -> Upload:
    """The upload checked (name, extension, size, encoding) and decoded, with its language: the one value every
    front end hands the core. Each submission's file goes through here once, where it came in."""
    name = check_declared(file_name, len(data), max_bytes)
    return Upload(name, *_decoded(name, data))


def _decoded(name: str, data: bytes) -> tuple[Language, str]:
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
    return language_of(name, source), source
