# Broken: zero-pads the image and filters the border pixels too, where the problem asks for zeros.
import torch
import torch.nn.functional as F  # noqa: N812


def solution(input_image: torch.Tensor, output_image: torch.Tensor, height: int, width: int) -> None:
    sobel_x = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]], device=input_image.device)
    kernels = torch.stack([sobel_x, sobel_x.t()]).unsqueeze(1)
    grads = F.conv2d(input_image.view(1, 1, height, width), kernels, padding=1)[0]
    output_image.copy_(grads.square().sum(dim=0).sqrt())
