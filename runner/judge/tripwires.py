"""Static tripwires: things in a submission's source worth a reviewer's look. Notes, never verdicts.

Nothing here decides a verdict (DESIGN.md §6: tripwires are extras, not the boundary); an honest kernel may
well create a stream or import `threading`. The judge attaches the notes to the result, so that a moderator
looking at a surprising score sees at once what the source reaches for.
"""

from __future__ import annotations

import ast
import re

# Modules and attributes that reach into the process rather than compute: introspection, hooks, threads.
_PYTHON_MODULES: dict[str, str] = {
    "gc": "walks the interpreter's objects (gc)",
    "ctypes": "calls native code directly (ctypes)",
    "inspect": "inspects frames or callers (inspect)",
    "threading": "starts host threads (threading)",
    "multiprocessing": "starts processes (multiprocessing)",
    "subprocess": "starts processes (subprocess)",
    "socket": "opens sockets (socket)",
    "runner": "imports the runner's own modules",
    "torch.overrides": "installs torch function modes (torch.overrides)",
    "torch.utils._python_dispatch": "installs torch dispatch modes",
    "torch.library": "overrides torch operators (torch.library)",
}
_PYTHON_ATTRIBUTES: dict[str, str] = {
    "sys.modules": "reaches other modules through sys.modules",
    "sys._getframe": "inspects frames or callers (sys._getframe)",
    "sys.settrace": "installs a trace hook",
    "sys.setprofile": "installs a profile hook",
    "os.environ": "reads the environment",
    "builtins": "replaces built-ins",
}
_CUDA_PATTERNS: dict[str, str] = {
    r"cudaStreamNonBlocking": "creates a non-blocking stream",
    r"std::thread|pthread_create|std::async": "starts host threads",
    r"\bdlopen\b|\bdlsym\b|dl_iterate_phdr": "looks up symbols at run time (dlopen/dlsym)",
    r"\bmprotect\b": "changes memory protection (mprotect)",
    r"__attribute__\s*\(\(\s*constructor": "runs code when the library loads (constructor)",
    r"cudaDeviceReset": "resets the device",
    r"\.incbin": "embeds a file at compile time (.incbin)",
    r"cudaEvent(ElapsedTime|Record)|cuEvent(ElapsedTime|Record)": "uses CUDA events itself",
}


def python_notes(source: str) -> list[str]:
    """Notes on a Python submission; a source that does not parse gets none (the load reports it)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found: dict[str, None] = {}
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Attribute):
            names = [_dotted(node)]
        elif isinstance(node, ast.Name) and node.id == "__builtins__":
            names = ["builtins"]
        for name in names:
            for key, note in (*_PYTHON_MODULES.items(), *_PYTHON_ATTRIBUTES.items()):
                if name == key or name.startswith(key + "."):
                    found[note] = None
    return list(found)


def cuda_notes(source: str) -> list[str]:
    return [note for pattern, note in _CUDA_PATTERNS.items() if re.search(pattern, source)]


def source_notes(language: str, source: str) -> list[str]:
    return cuda_notes(source) if language == "cuda" else python_notes(source)


def _dotted(node: ast.Attribute) -> str:
    parts = [node.attr]
    value: ast.expr = node.value
    while isinstance(value, ast.Attribute):
        parts.append(value.attr)
        value = value.value
    if isinstance(value, ast.Name):
        parts.append(value.id)
    return ".".join(reversed(parts))
