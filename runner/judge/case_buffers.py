"""The judge's buffers for one test case: inputs, outputs and snapshots in one shared arena, expected
outputs in the judge's private memory.

Every draw writes fresh values into a set's inputs, computes the reference from them into private memory,
and poisons the set's outputs and snapshots (NaN in float buffers, all-ones bits in integer ones). The
launcher sees the arena, never `expected`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from problems.base import DType, Problem, TestCase
from problems.verification import poison
from runner.ipc.shared_buffers import SharedArena, align

if TYPE_CHECKING:
    import torch

# Seeds of successive draws of one case: far apart, and never the test phase's `seed + index`.
_DRAW_STRIDE = 1_000_003


@dataclass
class SetViews:
    inputs: list[torch.Tensor]
    outputs: list[torch.Tensor]
    snapshots: list[torch.Tensor]
    expected: list[torch.Tensor] = field(default_factory=list)
    draws: int = 0


@dataclass
class CaseBuffers:
    problem: Problem
    case: TestCase
    dtype: DType
    arena: SharedArena
    sets: list[SetViews]
    layout: list[dict[str, list[Any]]]
    generator: Callable[[int], torch.Generator]

    @classmethod
    def allocate(cls, problem: Problem, case: TestCase, dtype: DType, device: str, n_sets: int) -> CaseBuffers:
        """An arena sized for `n_sets` sets of this case (shapes taken from one draw)."""
        import torch

        from problems.inputs import torch_dtype

        def generator(seed: int) -> torch.Generator:
            return torch.Generator(device=device).manual_seed(seed % (1 << 62))

        sample = tuple(t.contiguous() for t in case["create_inputs"](generator(0)))
        expected = problem.reference_outputs(sample, problem.get_extra_params(case))
        in_specs = [(tuple(t.shape), t.dtype) for t in sample]
        out_specs = [
            (tuple(e.shape), torch_dtype(element))
            for e, element in zip(expected, problem.output_elements(dtype), strict=True)
        ]
        offset = 0
        layout: list[dict[str, list[Any]]] = []

        def place(specs: Sequence[tuple[tuple[int, ...], torch.dtype]]) -> list[list[Any]]:
            nonlocal offset
            placed = []
            for shape, tdtype in specs:
                placed.append([offset, list(shape), str(tdtype).removeprefix("torch.")])
                offset += align(max(_nbytes(shape, tdtype), 1))
            return placed

        for _ in range(n_sets):
            layout.append({"inputs": place(in_specs), "outputs": place(out_specs), "snapshots": place(out_specs)})
        arena = SharedArena.allocate(offset, device)

        def views(placed: list[list[Any]]) -> list[torch.Tensor]:
            return [arena.view(off, shape, getattr(torch, name)) for off, shape, name in placed]

        sets = [SetViews(views(s["inputs"]), views(s["outputs"]), views(s["snapshots"])) for s in layout]
        return cls(problem, case, dtype, arena, sets, layout, generator)

    def share_message(self) -> dict[str, Any]:
        return {"size": self.arena.size, "sets": self.layout, "extras": self.problem.get_extra_params(self.case)}

    def draw(self, k: int, seed: int) -> None:
        """Fresh inputs for set k from `seed`, their reference outputs, and poison in outputs and snapshots."""
        s = self.sets[k]
        fresh = self.case["create_inputs"](self.generator(seed))
        for view, value in zip(s.inputs, fresh, strict=True):
            view.copy_(value)
        extras = self.problem.get_extra_params(self.case)
        s.expected = [e.clone() for e in self.problem.reference_outputs(tuple(s.inputs), extras)]
        for buf in (*s.outputs, *s.snapshots):
            poison(buf)
        s.draws += 1

    def draw_next(self, k: int, seed: int, index: int) -> None:
        """The next draw of set k: a seed no other draw of this job uses."""
        s = self.sets[k]
        self.draw(k, seed + index + _DRAW_STRIDE * (1 + k + len(self.sets) * s.draws))

    def snapshots_match(self, k: int) -> bool:
        """Whether each snapshot holds exactly the bits of its output (NaN included)."""
        import torch

        s = self.sets[k]
        for output, snapshot in zip(s.outputs, s.snapshots, strict=True):
            bits = {4: torch.int32, 2: torch.int16, 8: torch.int64, 1: torch.uint8}[output.element_size()]
            if not torch.equal(output.view(bits), snapshot.view(bits)):
                return False
        return True

    def close(self) -> None:
        self.sets.clear()
        self.arena.close()


def _nbytes(shape: Sequence[int], dtype: torch.dtype) -> int:
    import math

    import torch

    return math.prod(shape) * torch.empty((), dtype=dtype).element_size()
