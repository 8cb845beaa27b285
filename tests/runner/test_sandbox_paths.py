"""Which host folders a sandboxed job sees for the tools it runs."""

from __future__ import annotations

from pathlib import Path

from runner.host.sandbox import nsight_compute_paths


def test_the_toolkits_ncu_launcher_brings_the_nsight_compute_trees_it_searches(tmp_path: Path) -> None:
    toolkit = tmp_path / "cuda-13.0"
    (toolkit / "bin").mkdir(parents=True)
    launcher = toolkit / "bin" / "ncu"
    launcher.write_text("#!/bin/sh\n")
    (toolkit / "nsight-compute-2025.3.1").mkdir()
    packaged = tmp_path / "opt" / "nsight-compute"
    (packaged / "2025.3.1").mkdir(parents=True)
    (tmp_path / "opt" / "nsight-compute.txt").write_text("a file, not a tree")
    paths = nsight_compute_paths(str(launcher), system_globs=(str(tmp_path / "opt" / "nsight-compute*"),))
    assert paths == [str(toolkit / "bin"), str(toolkit / "nsight-compute-2025.3.1"), str(packaged)]


def test_a_linked_ncu_is_followed_to_its_install_tree(tmp_path: Path) -> None:
    tree = tmp_path / "nsight-compute" / "2025.3.1"
    tree.mkdir(parents=True)
    (tree / "ncu").write_text("")
    link = tmp_path / "bin" / "ncu"
    link.parent.mkdir()
    link.symlink_to(tree / "ncu")
    assert nsight_compute_paths(str(link), system_globs=()) == [str(tree)]
