// Broken: the lanes only cover whole groups of 32 columns, so the last k % 32 terms of each row are dropped.
#include <cuda_runtime.h>

#define ROWS_PER_BLOCK 8

__global__ void matrix_vector_kernel(const float* a, const float* x, float* y, size_t m, size_t k) {
    const unsigned lane = threadIdx.x & 31u;
    const size_t row = blockIdx.x * (size_t)ROWS_PER_BLOCK + (threadIdx.x >> 5);
    if (row >= m) return;
    const size_t full = k / 32 * 32;
    float acc = 0.0f;
    for (size_t j = lane; j < full; j += 32) acc += a[row * k + j] * x[j];
    for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, offset);
    if (lane == 0) y[row] = acc;
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t m, size_t k) {
    const size_t blocks = (m + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK;
    matrix_vector_kernel<<<(unsigned)blocks, ROWS_PER_BLOCK * 32>>>(input_a, input_b, output_c, m, k);
}
