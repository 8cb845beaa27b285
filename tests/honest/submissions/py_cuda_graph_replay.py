# Honest: captures a CUDA graph per set of buffers on first use, and replays it (GPU only).
import torch

_GRAPHS: dict[tuple[int, int, int], torch.cuda.CUDAGraph] = {}


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    key = (input_a.data_ptr(), input_b.data_ptr(), output_c.data_ptr())
    graph = _GRAPHS.get(key)
    if graph is None:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            torch.add(input_a, input_b, out=output_c)
        _GRAPHS[key] = graph
    graph.replay()
