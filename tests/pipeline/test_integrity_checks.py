"""Each check the judge makes on timed calls, proven to fire on the CPU with a solution that computes correctly.

The adversarial suite (tests/adversarial) attacks the runner the way a competitor would; these tests pin
down one check each, so that a regression names the check that stopped working.
"""

from __future__ import annotations

from runner.judge.host_load import BUSY_STALL_FRACTION, CpuPressure
from tests.pipeline.test_local_pipeline import host_busy, run

CORRECT = "    torch.add(a, b, out=c)\n"


async def test_a_thread_left_running_after_the_call_is_an_integrity_error():
    source = (
        "import threading, time, torch\n\n"
        "def solution(a, b, c, n):\n"
        + CORRECT
        + "    threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
    )
    result, _ = await run("vector_add", "threads.py", source)
    assert result.error is not None and result.error.code == "integrity", result.error
    assert "thread" in result.error.message
    assert "starts host threads (threading)" in result.notes  # the static tripwire, beside the verdict


async def test_a_torch_mode_left_active_after_the_call_is_an_integrity_error():
    source = (
        "import torch\n"
        "from torch.overrides import TorchFunctionMode\n\n"
        "class Quiet(TorchFunctionMode):\n"
        "    def __torch_function__(self, func, types, args=(), kwargs=None):\n"
        "        return func(*args, **(kwargs or {}))\n\n"
        "def solution(a, b, c, n):\n" + CORRECT + "    Quiet().__enter__()\n"
    )
    result, _ = await run("vector_add", "mode.py", source)
    assert result.error is not None and result.error.code == "integrity", result.error
    assert "mode" in result.error.message


async def test_an_output_finished_after_the_call_returned_is_an_integrity_error():
    # The result is written by a thread a moment after `solution` returns and joined by the next call: the
    # output is right when the judge verifies it, but the snapshot taken at the stop was not.
    source = (
        "import threading, time, torch\n\n"
        "_last = []\n\n"
        "def _late(a, b, c):\n"
        "    time.sleep(0.002)\n"
        "    torch.add(a, b, out=c)\n\n"
        "def solution(a, b, c, n):\n"
        "    while _last:\n"
        "        _last.pop().join()\n"
        "    worker = threading.Thread(target=_late, args=(a, b, c))\n"
        "    worker.start()\n"
        "    _last.append(worker)\n"
    )
    result, _ = await run("vector_add", "late.py", source)
    assert result.status != "passed"
    assert result.error is not None and result.error.code in {"integrity", "wrong_answer"}, result.error


async def test_times_rewritten_on_their_way_to_the_judge_disagree_with_its_clock():
    # The solution reaches the launcher's reply function through gc and divides every reported time by 100.
    source = (
        "import gc, torch\n\n"
        "def _shrink(reply):\n"
        "    for reading in reply.get('readings', []):\n"
        "        reading['elapsed_s'] /= 100\n"
        "        reading['host_span_s'] /= 100\n"
        "    return reply\n\n"
        "def _patch():\n"
        "    for obj in gc.get_objects():\n"
        "        if type(obj).__name__ == 'Launcher' and not getattr(obj, '_patched', False):\n"
        "            send = obj._send\n"
        "            obj._send = lambda message, fds=(): send(_shrink(message), fds)\n"
        "            obj._patched = True\n\n"
        "def solution(a, b, c, n):\n"
        "    _patch()\n" + CORRECT
    )
    pressure = CpuPressure()
    pressure.start()
    result, _ = await run("vector_add", "rewrite.py", source, retry_host_busy=False)
    assert result.status != "passed" and result.error is not None
    if host_busy(result):
        # On a host whose CPUs are oversubscribed the judge cannot tell the rewrite from its own pauses, and asks
        # for a rerun instead (never a pass). It may say so only when the host really was busy.
        busy = pressure.busy_fraction()
        assert busy is not None and busy > BUSY_STALL_FRACTION / 2, (busy, result.error)
    else:
        assert result.error.code == "integrity", result.error
        assert "clock" in result.error.message


async def test_an_honest_solution_reports_a_wall_clock_estimate_for_every_case():
    source = "import torch\n\ndef solution(a, b, c, n):\n" + CORRECT
    result, _ = await run("vector_add", "honest.py", source)
    assert result.status == "passed", result.error
    assert all(t.wall_clock_us is not None for t in result.timings)
