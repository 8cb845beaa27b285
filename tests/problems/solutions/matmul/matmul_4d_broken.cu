// Broken: takes B's row stride to be l instead of k (the sizes mixed up), so it reads the wrong elements.
#include <cuda_runtime.h>

__global__ void matmul_4d_kernel(const float* a, const float* b, float* c, size_t rows, size_t cols, size_t inner) {
    const size_t row = blockIdx.x * (size_t)blockDim.y + threadIdx.y;
    const size_t col = blockIdx.y * (size_t)blockDim.x + threadIdx.x;
    if (row >= rows || col >= cols) return;
    float acc = 0.0f;
    for (size_t x = 0; x < inner; ++x) {
        const size_t at = x * inner + col;
        acc += a[row * inner + x] * (at < inner * cols ? b[at] : 0.0f);
    }
    c[row * cols + col] = acc;
}

extern "C" void solution(const float* A, const float* B, float* C, size_t b, size_t i, size_t j, size_t l, size_t k) {
    const size_t rows = b * i * j;
    const dim3 grid((unsigned)((rows + 15) / 16), (unsigned)((k + 15) / 16));
    matmul_4d_kernel<<<grid, dim3(16, 16)>>>(A, B, C, rows, k, l);
}
