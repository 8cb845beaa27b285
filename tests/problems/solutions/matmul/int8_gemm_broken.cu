// Broken: accumulates in a 16-bit integer, which wraps once a sum passes 32767.
#include <cstdint>
#include <cuda_runtime.h>

__global__ void int8_gemm_kernel(const int8_t* a, const int8_t* b, int* c, size_t m, size_t n, size_t k) {
    const size_t row = blockIdx.y * (size_t)blockDim.y + threadIdx.y;
    const size_t col = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (row >= m || col >= n) return;
    int16_t acc = 0;
    for (size_t kk = 0; kk < k; ++kk) acc = (int16_t)(acc + a[row * k + kk] * b[col * k + kk]);
    c[row * n + col] = acc;
}

extern "C" void solution(const int8_t* input_a, const int8_t* input_b, int* output_c, size_t m, size_t n, size_t k) {
    const dim3 grid((unsigned)((n + 15) / 16), (unsigned)((m + 15) / 16));
    int8_gemm_kernel<<<grid, dim3(16, 16)>>>(input_a, input_b, output_c, m, n, k);
}
