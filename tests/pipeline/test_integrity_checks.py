"""Each check the judge makes on timed calls, proven to fire on the CPU with a solution that computes correctly.

The adversarial suite (tests/adversarial) attacks the runner the way a competitor would; these tests pin
down one check each, so that a regression names the check that stopped working.
"""

from __future__ import annotations

from contract.names import HOST_BOUND_LINE
from tests.pipeline.test_local_pipeline import run

CORRECT = "    torch.add(a, b, out=c)\n"
HONEST = "import torch\n\ndef solution(a, b, c, n):\n" + CORRECT


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


async def test_times_rewritten_on_their_way_to_the_judge_fail_the_calibration():
    # The solution reaches the launcher's reply function through gc and divides every reported time by 100: the
    # readings of the known work in the calibration calls shrink too, which no honest timer does.
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
    result, _ = await run("vector_add", "rewrite.py", source)
    assert result.error is not None and result.error.code == "integrity", result.error
    assert "calibration" in result.error.message


async def test_solution_readings_cut_short_are_timed_at_the_judge_clock():
    # Only the solution's own readings are divided by 100 (the harness's CPU sampler wrapped, calibration calls
    # left alone): no proof of anything, but the judge's clock sees what the calls cost. The case is timed by it,
    # and the rewrite buys nothing.
    source = (
        "import gc, torch\n\n"
        "_done = []\n\n"
        "def _patch():\n"
        "    if _done:\n"
        "        return\n"
        "    _done.append(True)\n"
        "    for obj in gc.get_objects():\n"
        "        if type(obj).__name__ == 'Harness' and 'time_cpu' not in vars(obj):\n"
        "            real = obj.time_cpu\n"
        "            def time_cpu(target, run, known_units=0, real=real):\n"
        "                reading = real(target, run, known_units)\n"
        "                if run:\n"
        "                    reading['elapsed_s'] /= 100\n"
        "                return reading\n"
        "            obj.time_cpu = time_cpu\n\n"
        "def solution(a, b, c, n):\n"
        "    _patch()\n" + CORRECT
    )
    honest, _ = await run("vector_add", "honest.py", HONEST)
    result, _ = await run("vector_add", "rewrite.py", source)
    assert honest.status == "passed" and result.status == "passed", result.error
    bound = [t for t in result.timings if t.judge_clock]
    assert bound and all(t.host_bound for t in bound), result.timings
    assert HOST_BOUND_LINE in " ".join(result.notes)
    for cheat, fair in zip(result.timings, honest.timings, strict=True):
        if cheat.judge_clock:
            # A CPU case moves by tens of per cent between two runs: the bound is loose, but far from 1/100.
            assert cheat.runtime_median_us > fair.runtime_median_us / 4, (cheat, fair)
            assert cheat.runtime_median_us >= cheat.wall_clock_us


async def test_host_threads_joined_inside_the_call_pass_with_their_host_time():
    # Four threads each add a quarter of the vector and are joined before the call returns: honest host-bound code.
    source = (
        "import threading, torch\n\n"
        "def solution(a, b, c, n):\n"
        "    step = (n + 3) // 4\n"
        "    def part(i):\n"
        "        lo, hi = i * step, min(n, (i + 1) * step)\n"
        "        torch.add(a[lo:hi], b[lo:hi], out=c[lo:hi])\n"
        "    threads = [threading.Thread(target=part, args=(i,)) for i in range(4)]\n"
        "    for t in threads:\n"
        "        t.start()\n"
        "    for t in threads:\n"
        "        t.join()\n"
    )
    result, _ = await run("vector_add", "threads4.py", source)
    assert result.status == "passed", result.error
    for timing in result.timings:
        assert timing.wall_clock_us is not None
        # Whichever clock timed it, the reported time is never far below what the judge's own clock saw.
        assert timing.runtime_median_us > timing.wall_clock_us / 2, timing


async def test_an_honest_solution_reports_a_wall_clock_estimate_for_every_case():
    result, _ = await run("vector_add", "honest.py", HONEST)
    assert result.status == "passed", result.error
    assert all(t.wall_clock_us is not None for t in result.timings)
