// Class: weak_output
// §6: partial writes that pass a sampled check; races that pass once; precision below tolerance
// Attack: computes only the first half of the output (half the traffic), hoping a check samples its front. Every
// element is verified and the other half keeps its NaN poison: a wrong answer.
#include <cuda_runtime.h>

__global__ void vector_add_kernel(const float* a, const float* b, float* c, size_t n) {
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        c[i] = a[i] + b[i];
    }
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    size_t half = (n + 1) / 2;
    const int threads = 256;
    size_t blocks = (half + threads - 1) / threads;
    if (blocks > 65535 * 8) blocks = 65535 * 8;
    vector_add_kernel<<<(unsigned)blocks, threads>>>(input_a, input_b, output_c, half);
}
