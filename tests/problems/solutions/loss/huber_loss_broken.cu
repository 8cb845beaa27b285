// Broken: tests d < 1 instead of |d| < 1, so every large negative difference takes the quadratic branch.
#include <cuda_runtime.h>

__global__ void loss_kernel(const float* __restrict__ p, const float* __restrict__ t, float* __restrict__ out, size_t n) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) {
        const float d = p[i] - t[i];
        out[i] = d < 1.0f ? 0.5f * d * d : fabsf(d) - 0.5f;
    }
}

extern "C" void solution(const float* predictions, const float* targets, float* output, size_t n) {
    if (n == 0) return;
    size_t blocks = (n + 255) / 256;
    if (blocks > 8192) blocks = 8192;
    loss_kernel<<<(unsigned)blocks, 256>>>(predictions, targets, output, n);
}
