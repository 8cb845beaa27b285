"""Worker entry point: evaluates one job and writes NDJSON events to a dedicated pipe.

Run as `python -m runner.worker --request FILE --workdir DIR --events-fd N`. Results travel only on the
events pipe, never on stdout, so nothing a submission prints can forge them.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from runner.api import JobEvent, JobRequest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="runner.worker")
    parser.add_argument("--request", type=Path, required=True)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--events-fd", type=int, required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    request = JobRequest.model_validate_json(args.request.read_text(encoding="utf-8"))
    pipe = os.fdopen(args.events_fd, "w", buffering=1, encoding="utf-8")

    def send(event: JobEvent) -> None:
        pipe.write(event.model_dump_json() + "\n")
        pipe.flush()

    from runner.evaluate import evaluate

    evaluate(request, args.workdir, send)
    pipe.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
