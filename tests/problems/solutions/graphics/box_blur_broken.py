# Broken: divides by kernel_size² everywhere, darkening the border pixels whose window is clipped.
import torch
import torch.nn.functional as F  # noqa: N812


def solution(input_image: torch.Tensor, kernel_size: int, output_image: torch.Tensor, height: int, width: int) -> None:
    image = input_image.view(1, 1, height, width)
    output_image.copy_(F.avg_pool2d(image, kernel_size, stride=1, padding=kernel_size // 2)[0, 0])
