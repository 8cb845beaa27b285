# Honest: works on a side stream that waits for, and is waited on by, the current stream (GPU only).
import torch

_STREAMS = []


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    if not _STREAMS:
        _STREAMS.append(torch.cuda.Stream())
    side = _STREAMS[0]
    main = torch.cuda.current_stream()
    side.wait_stream(main)
    half = n // 2
    with torch.cuda.stream(side):
        torch.add(input_a[half:], input_b[half:], out=output_c[half:])
    torch.add(input_a[:half], input_b[:half], out=output_c[:half])
    main.wait_stream(side)
