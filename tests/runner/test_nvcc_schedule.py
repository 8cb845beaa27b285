"""nvcc's steps with the two front ends at once: the plan read from `nvcc --dryrun`, the script built from it, and
what it builds, against the real nvcc where there is one."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from runner.host.compile import nvcc_command
from runner.host.nvcc_schedule import module_id, parallel_script, read_plan, script

ENV = '#$ _NVVM_BRANCH_=nvvm\n#$ PATH=/cuda/nvvm/bin:/cuda/bin:/usr/bin\n#$ LIBRARIES=  "-L/a" "-L/b"\n'
HOST_PRE = '#$ gcc -std=c++17 -E -x c++ -include "cuda_runtime.h" "/job/s.cu" -o "/t/x-5_s.cpp4.ii"\n'
DEVICE_PRE = '#$ gcc -std=c++17 -D__CUDA_ARCH__=900 -E -x c++ "/job/s.cu" -o "/t/x-9_s.cpp1.ii"\n'
CUDAFE = (
    '#$ cudafe++ --c++17 --gen_c_file_name "/t/x-6_s.cudafe1.cpp" --gen_module_id_file '
    '--module_id_file_name "/t/x-4_s.module_id" "/t/x-5_s.cpp4.ii"\n'
)
CICC = '#$ "$CICC_PATH/cicc" --c++17 --module_id_file_name "/t/x-4_s.module_id" "/t/x-9_s.cpp1.ii" -o "/t/x-6_s.ptx"\n'
BACK = (
    '#$ ptxas -arch=sm_90a "/t/x-6_s.ptx" -o "/t/x-10_s.cubin"\n'
    '#$ fatbinary -64 "--image3=kind=elf,sm=90a,file=/t/x-10_s.cubin" --embedded-fatbin="/t/x-3_s.fatbin.c"\n'
    '#$ gcc -std=c++17 -c -x c++ "/t/x-6_s.cudafe1.cpp" -o "/t/x-11_s.o"\n'
    '#$ g++ -shared "/t/x-11_s.o" -o "/job/s.so"\n'
)


@pytest.mark.parametrize(
    "front",
    [HOST_PRE + DEVICE_PRE + CUDAFE + CICC, HOST_PRE + CUDAFE + DEVICE_PRE + CICC],
    ids=["preprocessors first", "cudafe between them"],
)
def test_the_plan_splits_nvccs_steps_into_the_two_front_ends_and_the_rest(front: str) -> None:
    plan = read_plan(ENV + "#$ rm /t/x-3_s.fatbin\n" + front + BACK)
    assert plan is not None
    assert [c.split()[0] for c in plan.host_chain] == ["gcc", "cudafe++"]
    assert [c.split()[0] for c in plan.device_chain] == ["gcc", '"$CICC_PATH/cicc"', "ptxas", "fatbinary"]
    assert [c.split()[0] for c in plan.rest] == ["gcc", "g++"]
    assert plan.module_id_file == "/t/x-4_s.module_id"
    assert "--gen_module_id_file" not in plan.host_chain[1], "the id is written before either front end runs"
    assert plan.assignments == ["_NVVM_BRANCH_=nvvm", "PATH=/cuda/nvvm/bin:/cuda/bin:/usr/bin"]


@pytest.mark.parametrize(
    "dryrun",
    [
        ENV + HOST_PRE + DEVICE_PRE + CICC + BACK,  # no cudafe++
        ENV + HOST_PRE + DEVICE_PRE + CUDAFE.replace("--gen_module_id_file ", "") + CICC + BACK,  # nobody writes the id
        ENV + HOST_PRE + DEVICE_PRE + CUDAFE + CICC.replace("x-4_s", "x-7_s") + BACK,  # two ids
        ENV + HOST_PRE + DEVICE_PRE + CUDAFE + CICC,  # nothing after the front ends
        "nvcc fatal : Unknown option '--dryrun'\n",
    ],
    ids=["no cudafe", "no id written", "two ids", "no link", "not a plan"],
)
def test_a_plan_of_another_shape_is_not_scheduled(dryrun: str) -> None:
    assert read_plan(dryrun) is None


def test_the_module_id_is_one_identifier_fixed_by_the_source_and_flags() -> None:
    first = module_id("a", ["-O3"])
    assert first == module_id("a", ["-O3"]) and first.replace("_", "").isalnum()
    assert first != module_id("b", ["-O3"]) and first != module_id("a", ["-O2"])


NVCC = shutil.which("nvcc")
KERNEL = (
    "__global__ void twice(const float* a, float* b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x;"
    " if (i < n) b[i] = 2 * a[i]; }\n"
    'extern "C" void solution(const float* a, float* b, int n) { twice<<<(n + 255) / 256, 256>>>(a, b, n); }\n'
)


def _build(tmp_path: Path, source: str, fallback: list[str] | None = None) -> tuple[subprocess.CompletedProcess, Path]:
    (tmp_path / "tmp").mkdir(exist_ok=True)
    (tmp_path / "solution.cu").write_text(source)
    output = tmp_path / "solution.so"
    argv = nvcc_command("sm_90a", str(tmp_path / "solution.cu"), str(output), source)
    env = {"PATH": os.environ["PATH"], "TMPDIR": str(tmp_path / "tmp"), "HOME": str(tmp_path), "LC_ALL": "C"}
    text = parallel_script(argv, source, env, str(tmp_path))
    assert text is not None, "this nvcc's plan is one the schedule knows"
    if fallback is not None:
        plan = read_plan(subprocess.run([*argv, "--dryrun"], capture_output=True, text=True, env=env).stderr)
        assert plan is not None
        text = script(plan, module_id(source, argv[1:]), fallback)
    done = subprocess.run(["/bin/sh", "-c", text], capture_output=True, text=True, env=env, cwd=tmp_path)
    return done, output


@pytest.mark.nvcc
def test_the_scheduled_steps_build_the_library_without_falling_back_to_nvcc(tmp_path: Path) -> None:
    done, output = _build(tmp_path, KERNEL, fallback=["sh", "-c", "echo fell back; exit 97"])
    assert done.returncode == 0 and "fell back" not in done.stdout, done.stdout + done.stderr
    assert output.is_file() and output.stat().st_size > 0
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(output)], capture_output=True, text=True).stdout
    assert " T solution" in symbols


@pytest.mark.nvcc
def test_a_compile_error_reads_as_nvcc_prints_it(tmp_path: Path) -> None:
    done, output = _build(tmp_path, KERNEL.replace("2 * a[i]", "2 * undeclared_thing"))
    assert done.returncode != 0 and not output.exists()
    assert "undeclared_thing" in done.stdout + done.stderr and "error" in done.stdout + done.stderr
