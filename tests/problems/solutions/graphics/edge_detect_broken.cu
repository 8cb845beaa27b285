// Broken: launches threads for the interior only and never writes the border pixels (they should be 0).
#include <cuda_runtime.h>

__global__ void sobel_kernel(const float* in, float* out, size_t h, size_t w) {
    size_t x = 1 + blockIdx.x * (size_t)blockDim.x + threadIdx.x, y = 1 + blockIdx.y * (size_t)blockDim.y + threadIdx.y;
    if (y >= h - 1 || x >= w - 1) return;
    size_t i = y * w + x;
    const float* up = in + i - w;
    const float* mid = in + i;
    const float* down = in + i + w;
    float gx = (up[1] + 2.0f * mid[1] + down[1]) - (up[-1] + 2.0f * mid[-1] + down[-1]);
    float gy = (down[-1] + 2.0f * down[0] + down[1]) - (up[-1] + 2.0f * up[0] + up[1]);
    out[i] = sqrtf(gx * gx + gy * gy);
}

extern "C" void solution(const float* input_image, float* output_image, size_t height, size_t width) {
    dim3 block(16, 16);
    dim3 grid((unsigned)((width - 2 + 15) / 16), (unsigned)((height - 2 + 15) / 16));
    sobel_kernel<<<grid, block>>>(input_image, output_image, height, width);
}
