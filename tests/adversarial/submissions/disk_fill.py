# Class: resource_abuse
# §6: hangs, crashes, illegal addresses, context poisoning, fork bombs, memory and disk exhaustion, output floods
# Attack: fills every writable place it can find (its working directory, HOME, TMPDIR, /tmp, /dev/shm) with 16 MiB
# files, up to 2 GiB in all, then fails with what it managed. The job's private areas are size-limited, so every
# place fills up long before the cap; if one did not, the message says "LIMIT NOT HIT", which must never appear.
import os

import torch

CHUNK = b"\0" * (16 << 20)
CAP_BYTES = 2 << 30


def _fill(directory: str, budget: int) -> tuple[int, str]:
    written = 0
    index = 0
    while written < budget:
        path = os.path.join(directory, f"fill-{index}.bin")
        try:
            with open(path, "wb") as fh:
                fh.write(CHUNK)
        except OSError as exc:
            return written, f"{exc.strerror}"
        written += len(CHUNK)
        index += 1
    return written, "LIMIT NOT HIT"


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    places = [os.getcwd(), os.path.expanduser("~"), os.environ.get("TMPDIR", "/tmp"), "/tmp", "/dev/shm"]
    report, total = [], 0
    for place in dict.fromkeys(places):
        written, outcome = _fill(place, CAP_BYTES - total)
        total += written
        report.append(f"{place}: {written >> 20} MiB ({outcome})")
        if total >= CAP_BYTES:
            report.append("LIMIT NOT HIT in total")
            break
    raise RuntimeError("disk fill stopped: " + "; ".join(report))
