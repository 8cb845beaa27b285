// Broken: assumes A · B is symmetric, computes only the upper triangle and mirrors it below the diagonal.
#include <cuda_runtime.h>

__global__ void symmetric_matmul_kernel(const float* a, const float* b, float* c, size_t n) {
    const size_t row = blockIdx.y * (size_t)blockDim.y + threadIdx.y;
    const size_t col = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (row >= n || col >= n || col < row) return;
    float acc = 0.0f;
    for (size_t k = 0; k < n; ++k) acc += a[row * n + k] * b[k * n + col];
    c[row * n + col] = acc;
    c[col * n + row] = acc;
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    const unsigned tiles = (unsigned)((n + 15) / 16);
    symmetric_matmul_kernel<<<dim3(tiles, tiles), dim3(16, 16)>>>(input_a, input_b, output_c, n);
}
