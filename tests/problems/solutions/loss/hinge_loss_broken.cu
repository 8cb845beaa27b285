// Broken: launches n / 256 blocks, rounding down, with no grid-stride loop: the last n % 256 elements are never written.
#include <cuda_runtime.h>

__global__ void loss_kernel(const float* __restrict__ p, const float* __restrict__ t, float* __restrict__ out, size_t n) {
    const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = fmaxf(0.0f, 1.0f - p[i] * t[i]);
}

extern "C" void solution(const float* predictions, const float* targets, float* output, size_t n) {
    if (n == 0) return;
    const size_t blocks = n / 256;
    if (blocks > 0) loss_kernel<<<(unsigned)blocks, 256>>>(predictions, targets, output, n);
}
