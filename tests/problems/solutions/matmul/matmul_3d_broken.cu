// Broken: reads B as if it were stored L×K (transposed), B[col * k + kk] instead of B[kk * l + col].
#include <cuda_runtime.h>

__global__ void matmul_3d_kernel(const float* a, const float* b, float* c, size_t rows, size_t cols, size_t inner) {
    const size_t row = blockIdx.x * (size_t)blockDim.y + threadIdx.y;
    const size_t col = blockIdx.y * (size_t)blockDim.x + threadIdx.x;
    if (row >= rows || col >= cols) return;
    float acc = 0.0f;
    for (size_t kk = 0; kk < inner; ++kk) acc += a[row * inner + kk] * b[col * inner + kk];
    c[row * cols + col] = acc;
}

extern "C" void solution(const float* A, const float* B, float* C, size_t n, size_t m, size_t k, size_t l) {
    const size_t rows = n * m;
    const dim3 grid((unsigned)((rows + 15) / 16), (unsigned)((l + 15) / 16));
    matmul_3d_kernel<<<grid, dim3(16, 16)>>>(A, B, C, rows, l, k);
}
