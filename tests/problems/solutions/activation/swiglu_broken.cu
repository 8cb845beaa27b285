// Broken: computes GLU, sigmoid(gate) * up, dropping the factor gate of silu(gate) = gate * sigmoid(gate).
#include <cuda_runtime.h>

__global__ void swiglu_kernel(const float* __restrict__ gate, const float* __restrict__ up, float* __restrict__ out,
                              size_t count) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
        out[i] = 1.0f / (1.0f + expf(-gate[i])) * up[i];
    }
}

extern "C" void solution(const float* gate, const float* up, float* output, size_t n, size_t m) {
    size_t count = n * m;
    if (count == 0) return;
    size_t blocks = (count + 255) / 256;
    if (blocks > 65535 * 8) blocks = 65535 * 8;
    swiglu_kernel<<<(unsigned)blocks, 256>>>(gate, up, output, count);
}
