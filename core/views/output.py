"""What a solution printed, as people read it after the result: one block per phase and stream, each headed by
where it was printed, and a line for the bytes cut. The CLI and the bot show the same text."""

from __future__ import annotations

import re

from contract.wire import OUTPUT_KEEP_BYTES, PhaseOutput

PHASE_LABELS = {
    "load": "while it was imported",
    "test": "during the correctness tests",
    "benchmark": "during the timed runs",
}

# Control characters other than newline and tab: a terminal would obey an escape sequence the solution printed.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def readable(text: str) -> str:
    return _CONTROL.sub("\ufffd", text)


def output_sections(output: list[PhaseOutput]) -> list[tuple[str, str]]:
    """(heading, text) per stream that printed something, in the order of the phases."""
    sections: list[tuple[str, str]] = []
    for phase in output:
        where = PHASE_LABELS.get(phase.phase, f"during {phase.phase}")
        for stream, text, cut in (
            ("stdout", phase.stdout, phase.stdout_cut_bytes),
            ("stderr", phase.stderr, phase.stderr_cut_bytes),
        ):
            if not text and not cut:
                continue
            body = readable(text)
            if cut:
                body += (
                    f"{'' if body.endswith(chr(10)) or not body else chr(10)}"
                    f"… {cut:,} more bytes cut (the first {OUTPUT_KEEP_BYTES // 1024} KiB are kept)"
                )
            sections.append((f"{stream} {where}", body.rstrip("\n")))
    return sections


def output_text(output: list[PhaseOutput]) -> str:
    """All the sections as one text: `--- stdout during the correctness tests ---` above each."""
    return "\n".join(f"--- {heading} ---\n{body}" for heading, body in output_sections(output))
