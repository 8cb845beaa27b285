// Broken: finds an element's row by dividing its flat index by n instead of m (the wrong stride).
#include <cuda_runtime.h>

__global__ void diagonal_matmul_kernel(const float* d, const float* b, float* c, size_t n, size_t m) {
    const size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= n * m) return;
    size_t row = idx / n;
    if (row >= n) row = n - 1;
    c[idx] = d[row] * b[idx];
}

extern "C" void solution(const float* diagonal_a, const float* input_b, float* output_c, size_t n, size_t m) {
    const size_t total = n * m;
    diagonal_matmul_kernel<<<(unsigned)((total + 255) / 256), 256>>>(diagonal_a, input_b, output_c, n, m);
}
