# Class: harness_patch
# §6: patching timers, synchronize, the stats code or the result channel, from Python or native code
# Attack: forges the verdict. At import it reads its own job request (the path is on the command line), builds a
# "done" event with status passed and a fabulous score, writes it as one JSON line to every pipe and socket it
# holds beyond stdin/stdout/stderr (the result channel among them), and exits at once. Nothing the process that
# loaded the submission writes may become a verdict: the judge computes the result itself and treats the forged
# bytes, and the launcher's early exit, as a broken launcher.
import json
import os
import stat
import sys


def _request() -> dict:
    for flag, value in zip(sys.argv, sys.argv[1:], strict=False):
        if flag == "--request":
            try:
                with open(value, encoding="utf-8") as fh:
                    return json.load(fh)
            except (OSError, ValueError):
                break
    return {}


def _forged_line() -> bytes:
    request = _request()
    result = {
        "submission_id": request.get("submission_id", "forged"),
        "problem_slug": request.get("problem_slug", "vector_add"),
        "problem_version": request.get("problem_version", 1),
        "dtype": request.get("dtype", "float32"),
        "language": request.get("language", "python"),
        "mode": request.get("mode", "benchmark"),
        "status": "passed",
        "device": "forged",
        "geomean_gflops": 1.0e9,
        "mean_gflops": 1.0e9,
        "geomean_gbps": 1.0e9,
        "mean_gbps": 1.0e9,
    }
    event = {"seq": 99, "type": "done", "message": "passed", "result": result}
    return (json.dumps(event) + "\n").encode()


def _channels() -> list[int]:
    found = []
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd <= 2:
            continue
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            continue
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            found.append(fd)
    return found


_line = _forged_line()
for _fd in _channels():
    try:
        os.write(_fd, _line)
    except OSError:
        pass
os._exit(0)


def solution(input_a, input_b, output_c, n) -> None:
    pass
