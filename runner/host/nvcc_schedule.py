"""nvcc's own steps, with the host's front end and the device's compile run side by side.

nvcc runs its steps one after another. For a submission on an H200 host (`nvcc --time`,
bench/results/nvcc_phases_h200.txt):
- the host's preprocessor and front end (cudafe++), about 380 ms;
- the device's preprocessor, front end and assembler (cicc, ptxas, fatbinary), about 380 ms;
- the host compile of both, the device link and the link, about 350 ms.

The first two chains share one thing: the module id, which cudafe++ writes and cicc reads. Written first, by us,
the two chains can run at the same time, which takes about a third off the build.

`parallel_script` reads nvcc's own plan (`nvcc --dryrun`, run by the runner: it executes nothing) and returns a
/bin/sh script of nvcc's exact commands in that order, the two chains at once. When the plan is not the shape this
module knows (another nvcc release), there is no script, and the runner runs nvcc itself. The script falls back to
nvcc too: when any step fails it runs plain nvcc, so a compile error reads exactly as nvcc prints it, and honest
code that nvcc builds is never refused here. While the two front ends run together their memory adds up, under the
job's one memory limit (RUNNER_MAX_MEMORY_MB; 32 GiB a job on the H200 host measured).
"""

from __future__ import annotations

import hashlib
import logging
import re
import shlex
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

log = logging.getLogger(__name__)

DRYRUN_TIMEOUT_S = 30.0
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_GEN_MODULE_ID = "--gen_module_id_file"
_MODULE_ID_FILE = re.compile(r'--module_id_file_name\s+"([^"]+)"')


@dataclass(frozen=True)
class Plan:
    """nvcc's plan for one build: its environment, and its commands in the two chains and the rest."""

    assignments: list[str]
    host_chain: list[str]  # preprocess for the host, cudafe++
    device_chain: list[str]  # preprocess for the device, cicc, ptxas, fatbinary
    rest: list[str]  # the host compile, the device link, the link
    module_id_file: str


def _one_word(line: str) -> bool:
    try:
        return len(shlex.split(line)) == 1
    except ValueError:
        return False


def _program(command: str) -> str:
    first = command.split(" ", 1)[0].strip('"')
    return first.rsplit("/", 1)[-1]


_FRONT_ROLES = ("host preprocessor", "device preprocessor", "cudafe++", "cicc", "ptxas", "fatbinary")


def _role(command: str) -> str:
    """What a step of the front ends does; the program's name for the others."""
    program = _program(command)
    if program == "gcc" and " -E " in command:
        if '.cpp4.ii"' in command:
            return "host preprocessor"
        if '.cpp1.ii"' in command:
            return "device preprocessor"
    return program


def read_plan(dryrun: str) -> Plan | None:
    """The plan in `nvcc --dryrun`'s output (its stderr), or None when it is not the shape known here."""
    lines = [line[3:] for line in dryrun.splitlines() if line.startswith("#$ ")]
    # Only the assignments of one word: the others (`LIBRARIES=  "-L…" "-L…"`) are nvcc's notes of what it has
    # already spelled out in the commands, and a shell would run their second word.
    assignments = [line for line in lines if _ASSIGNMENT.match(line) and _one_word(line)]
    commands = [line for line in lines if not _ASSIGNMENT.match(line) and not line.startswith("rm ")]
    if len(commands) < 7:
        return None
    # The front ends come first, their order varying from run to run (nvcc runs the two preprocessors at once).
    front = {_role(c): c for c in commands[:6]}
    if sorted(front) != sorted(_FRONT_ROLES):
        return None
    host_pre, device_pre, cudafe, cicc, ptxas, fatbinary = (front[role] for role in _FRONT_ROLES)
    written = _MODULE_ID_FILE.search(cudafe)
    read = _MODULE_ID_FILE.search(cicc)
    if written is None or read is None or written.group(1) != read.group(1) or _GEN_MODULE_ID not in cudafe:
        return None
    if _GEN_MODULE_ID in cicc or any(_GEN_MODULE_ID in c for c in commands[6:]):
        return None
    return Plan(
        assignments=assignments,
        host_chain=[host_pre, cudafe.replace(f" {_GEN_MODULE_ID} ", " ", 1)],
        device_chain=[device_pre, cicc, ptxas, fatbinary],
        rest=commands[6:],
        module_id_file=written.group(1),
    )


def module_id(source: str, flags: Sequence[str]) -> str:
    """An id for the build's one translation unit, as nvcc shapes its own: unique to the source and flags."""
    digest = hashlib.sha256("\0".join([source, *flags]).encode()).hexdigest()
    return f"_{digest[:8]}_11_solution_cu_{digest[8:16]}"


def script(plan: Plan, module_id_text: str, nvcc_argv: Sequence[str]) -> str:
    """The /bin/sh script that runs `plan` with its two chains at once, and plain nvcc if any step fails."""
    fallback = " ".join(shlex.quote(arg) for arg in nvcc_argv)
    return "\n".join(
        [
            "set -a",
            *plan.assignments,
            "set +a",
            "steps() {",
            f"  printf '%s' {shlex.quote(module_id_text)} > {shlex.quote(plan.module_id_file)} || return 1",
            "  ( " + " && ".join(plan.host_chain) + " ) &",
            "  host=$!",
            "  " + " && ".join(plan.device_chain),
            "  device=$?",
            "  wait $host || return 1",
            "  [ $device -eq 0 ] || return 1",
            "  " + " && ".join(plan.rest),
            "}",
            f"steps > /dev/null 2>&1 || exec {fallback}",
            "",
        ]
    )


def parallel_script(
    nvcc_argv: Sequence[str], source: str, env: dict[str, str], cwd: str, timeout_s: float = DRYRUN_TIMEOUT_S
) -> str | None:
    """The script for building with `nvcc_argv` (in `env`, from `cwd`: the sandbox's), or None to run nvcc
    itself. nvcc's --dryrun only prints its plan."""
    try:
        proc = subprocess.run(
            [*nvcc_argv, "--dryrun"], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout_s, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        log.warning("nvcc --dryrun failed; building with nvcc alone", exc_info=True)
        return None
    plan = read_plan(proc.stderr) if proc.returncode == 0 else None
    if plan is None:
        log.warning("nvcc's plan is not the shape known here; building with nvcc alone")
        return None
    return script(plan, module_id(source, nvcc_argv[1:]), nvcc_argv)
