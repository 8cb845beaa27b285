// One warp per row: the lanes stride along the row (coalesced reads of A), then a shuffle reduction.
#include <cuda_runtime.h>

#define ROWS_PER_BLOCK 8

__global__ void matrix_vector_kernel(const float* __restrict__ a, const float* __restrict__ x, float* __restrict__ y,
                                     size_t m, size_t k) {
    const unsigned lane = threadIdx.x & 31u;
    const size_t row = blockIdx.x * (size_t)ROWS_PER_BLOCK + (threadIdx.x >> 5);
    if (row >= m) return;  // a whole warp leaves together, so the shuffles below see every lane
    const float* a_row = a + row * k;
    float acc = 0.0f;
    for (size_t j = lane; j < k; j += 32) acc += a_row[j] * x[j];
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, offset);
    if (lane == 0) y[row] = acc;
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t m, size_t k) {
    if (m == 0) return;
    const size_t blocks = (m + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK;
    matrix_vector_kernel<<<(unsigned)blocks, ROWS_PER_BLOCK * 32>>>(input_a, input_b, output_c, m, k);
}
