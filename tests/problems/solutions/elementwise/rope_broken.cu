// Broken: uses the rotate-half (GPT-NeoX) pairing of element i with i + head_dim/2 instead of interleaved pairs.
#include <cuda_runtime.h>

__global__ void rope_kernel(const float* __restrict__ x, const float* __restrict__ cos_table,
                            const float* __restrict__ sin_table, float* __restrict__ out, size_t pairs, size_t heads,
                            size_t half) {
    for (size_t p = blockIdx.x * (size_t)blockDim.x + threadIdx.x; p < pairs; p += (size_t)gridDim.x * blockDim.x) {
        size_t i = p % half;
        size_t row = p / half;  // one (token, head)
        size_t t = row / heads;
        float c = cos_table[t * half + i];
        float s = sin_table[t * half + i];
        const float* head = x + row * 2 * half;
        float a = head[i], b = head[i + half];
        out[row * 2 * half + i] = a * c - b * s;
        out[row * 2 * half + i + half] = a * s + b * c;
    }
}

extern "C" void solution(const float* x, const float* cos_table, const float* sin_table, float* output, size_t tokens,
                         size_t heads, size_t head_dim) {
    size_t half = head_dim / 2;
    size_t pairs = tokens * heads * half;
    if (pairs == 0) return;
    size_t blocks = (pairs + 255) / 256;
    if (blocks > 65535 * 8) blocks = 65535 * 8;
    rope_kernel<<<(unsigned)blocks, 256>>>(x, cos_table, sin_table, output, pairs, heads, half);
}
