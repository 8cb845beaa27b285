"""Rank slots without a daemon: the setting, the plan (CPU only for now), the routing of a job to the one-device path
or a rank slot with its refusals in words, the wire's default of one rank, and the link topology read from text in
the format `nvidia-smi topo -m` prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ConfigDict, ValidationError, create_model

from contract.wire import JobRequest, SubmissionResult
from runner.daemon.routing import UnroutableJobError, route_job
from runner.daemon.slots import DeviceError, cpu_slot, rank_slots
from runner.host.devices import Slot
from runner.host.topology import parse_topology
from runner.settings import RunnerSettings
from tests.runner.conftest import job_request

TOPOLOGY = Path(__file__).resolve().parents[1] / "fixtures" / "topology"


def request(slug: str = "all-reduce", world_size: int = 2, **fields: object) -> JobRequest:
    return job_request("def solution(*args): pass\n", problem_slug=slug, world_size=world_size, **fields)


def test_rank_slots_are_read_as_a_json_list_and_each_needs_two_ranks_or_more(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNNER_RANK_SLOTS", "[2, 4]")
    assert RunnerSettings().rank_slots == [2, 4]
    with pytest.raises(ValidationError, match=r"RUNNER_RANK_SLOTS holds \[1\]: each slot needs 2 to 64 ranks"):
        RunnerSettings(rank_slots=[1, 2])


def test_rank_slots_follow_the_one_device_slot_and_are_refused_beside_gpus() -> None:
    planned = rank_slots([2, 4], [cpu_slot()])
    assert [(s.index, s.ranks, s.is_gpu) for s in planned] == [(1, 2, False), (2, 4, False)]
    assert planned[0].name.endswith("x2 ranks") and planned[0].env == {"CUDA_VISIBLE_DEVICES": ""}
    assert rank_slots([], [cpu_slot()]) == []
    gpu = Slot(0, "NVIDIA H100 80GB HBM3", True, {"CUDA_VISIBLE_DEVICES": "GPU-1"}, (9, 0))
    with pytest.raises(DeviceError, match="RUNNER_RANK_SLOTS runs ranks on the CPU only for now"):
        rank_slots([2], [gpu])


def test_a_job_without_world_size_is_the_one_device_path_as_before() -> None:
    old_wire = job_request("x").model_dump(exclude={"world_size"})
    parsed = JobRequest.model_validate_json(json.dumps(old_wire))
    assert parsed.world_size == 1
    assert route_job(parsed, [], "r") == 1
    assert route_job(parsed, rank_slots([2], [cpu_slot()]), "r") == 1
    stored = SubmissionResult.model_validate(
        {"submission_id": "1", "problem_slug": "vector_add", "problem_version": 1, "dtype": "float32",
         "language": "python", "mode": "test", "status": "passed", "device": "cpu"}
    )  # fmt: skip
    assert stored.world_size == 1


def test_a_distributed_job_goes_to_the_slot_of_its_world_size() -> None:
    slots = rank_slots([2, 4], [cpu_slot()])
    assert route_job(request(world_size=2), slots, "r") == 2
    assert route_job(request("all-to-all-moe-dispatch", world_size=4), slots, "r") == 4


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"language": "cuda", "file_name": "s.cu"}, "distributed solutions run as Python for now"),
        ({"mode": "profile"}, "mode profile does not run distributed problems yet"),
        ({"device_kind": "gpu"}, "rank slots run on the CPU (gloo), and the job asks for GPUs"),
        ({"problem_version": 7}, "the job is for version 7"),
        ({"world_size": 8}, "Runner r has no slot of 8 ranks (its rank slots have 2, 4 ranks"),
    ],
)
def test_what_a_rank_slot_cannot_run_is_refused_saying_what_to_change(fields: dict[str, object], words: str) -> None:
    job = request(**{"world_size": 2, **fields})  # type: ignore[arg-type]
    with pytest.raises(UnroutableJobError) as refused:
        route_job(job, rank_slots([2, 4], [cpu_slot()]), "r")
    assert words in str(refused.value)


def test_a_runner_without_rank_slots_says_it_has_none() -> None:
    with pytest.raises(UnroutableJobError, match=r"Runner r has no slot of 2 ranks \(it has none; RUNNER_RANK_SLOTS"):
        route_job(request(), [], "r")


def test_a_problem_sent_as_source_runs_on_one_device_only() -> None:
    job = request("all-reduce", world_size=2, problem_source="class P: pass\n")
    with pytest.raises(UnroutableJobError, match="runs on one device, and the job asks for world_size 2"):
        route_job(job, rank_slots([2], [cpu_slot()]), "r")


def test_an_nvswitch_topology_is_nvlink_between_every_pair_and_its_nics_are_left_out() -> None:
    topology = parse_topology((TOPOLOGY / "nvlink_4gpu.txt").read_text(encoding="utf-8"))
    assert topology is not None and topology.links == "nvlink"
    assert topology.pairs == {f"{i}-{j}": "NV18" for i in range(4) for j in range(i + 1, 4)}
    assert "Legend" not in topology.matrix and topology.matrix.startswith("GPU0")


def test_a_pcie_topology_with_terminal_escapes_is_pcie() -> None:
    topology = parse_topology((TOPOLOGY / "pcie_2gpu.txt").read_text(encoding="utf-8"))
    assert topology is not None and topology.links == "pcie" and topology.pairs == {"0-1": "SYS"}
    assert "\x1b" not in topology.matrix


def test_a_mixed_topology_and_texts_with_no_pair_of_gpus() -> None:
    mixed = "\tGPU0\tGPU1\tGPU2\nGPU0\t X \tNV4\tPHB\nGPU1\tNV4\t X \tPHB\nGPU2\tPHB\tPHB\t X \n"
    topology = parse_topology(mixed)
    assert topology is not None and topology.links == "mixed"
    assert topology.pairs == {"0-1": "NV4", "0-2": "PHB", "1-2": "PHB"}
    assert parse_topology("\tGPU0\tCPU Affinity\nGPU0\t X \t0-7\n") is None
    assert parse_topology("") is None
    assert parse_topology("Failed to initialize NVML: Driver/library version mismatch\n") is None


def test_a_one_device_job_is_sent_without_world_size_so_older_daemons_take_it() -> None:
    one = json.loads(job_request("x").model_dump_json())
    assert "world_size" not in one
    # An older daemon's JobRequest: today's fields less world_size, unknown fields forbidden.
    older = create_model(
        "OlderJobRequest",
        __config__=ConfigDict(extra="forbid"),
        **{name: (f.annotation, f) for name, f in JobRequest.model_fields.items() if name != "world_size"},
    )
    older.model_validate(one)
    distributed = json.loads(request(world_size=2).model_dump_json())
    assert distributed["world_size"] == 2
    with pytest.raises(ValidationError, match="world_size"):
        older.model_validate(distributed)
    assert JobRequest.model_validate(one).world_size == 1
    assert JobRequest.model_validate(distributed).world_size == 2
    schema = JobRequest.model_json_schema(mode="serialization")
    assert schema["properties"]["world_size"]["default"] == 1
