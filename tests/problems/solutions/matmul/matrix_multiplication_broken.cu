// Broken: the K loop stops at the last whole tile, so K % 32 terms are dropped.
#include <cuda_runtime.h>

#define TILE 32

__global__ void matmul_kernel(const float* a, const float* b, float* c, size_t m, size_t n, size_t k) {
    size_t row = blockIdx.y * (size_t)TILE + threadIdx.y;
    size_t col = blockIdx.x * (size_t)TILE + threadIdx.x;
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (size_t i = 0; i < k / TILE * TILE; ++i) acc += a[row * k + i] * b[i * n + col];
    c[row * n + col] = acc;
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t m, size_t n, size_t k) {
    dim3 block(TILE, TILE);
    dim3 grid((unsigned)((n + TILE - 1) / TILE), (unsigned)((m + TILE - 1) / TILE));
    matmul_kernel<<<grid, block>>>(input_a, input_b, output_c, m, n, k);
}
