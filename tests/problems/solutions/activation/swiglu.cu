#include <cuda_runtime.h>

__global__ void swiglu_kernel(const float* __restrict__ gate, const float* __restrict__ up, float* __restrict__ out,
                              size_t count) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
        float g = gate[i];
        out[i] = g / (1.0f + expf(-g)) * up[i];
    }
}

extern "C" void solution(const float* gate, const float* up, float* output, size_t n, size_t m) {
    size_t count = n * m;
    if (count == 0) return;
    size_t blocks = (count + 255) / 256;
    if (blocks > 65535 * 8) blocks = 65535 * 8;  // the grid-stride loop covers the rest
    swiglu_kernel<<<(unsigned)blocks, 256>>>(gate, up, output, count);
}
