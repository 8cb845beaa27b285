"""The distributed CUDA build's NCCL flags, from an install laid out as the wheel and the system lay it out."""

from __future__ import annotations

from pathlib import Path

from runner.distributed.cuda_build import NcclInstall, nccl_flags


def _install(root: Path, library: str) -> NcclInstall:
    (root / "include").mkdir(parents=True)
    (root / "include" / "nccl.h").write_text("")
    (root / "lib").mkdir()
    (root / "lib" / library).write_text("")
    return NcclInstall(root / "include", root / "lib")


def test_the_wheel_layout_links_the_soname_with_its_run_path(tmp_path: Path) -> None:
    nccl = _install(tmp_path, "libnccl.so.2")
    flags = nccl_flags(nccl)
    assert flags[:3] == [f"-I{nccl.include}", f"-L{nccl.lib}", "-l:libnccl.so.2"]
    assert f"-rpath={nccl.lib}" in flags


def test_a_system_layout_with_the_plain_name_links_by_lnccl(tmp_path: Path) -> None:
    nccl = _install(tmp_path, "libnccl.so")
    assert "-lnccl" in nccl_flags(nccl) and "-l:libnccl.so.2" not in nccl_flags(nccl)
