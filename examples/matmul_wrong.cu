// A wrong CUDA matrix-multiplication: it swaps the roles of rows and columns of B (computes A @ B^T, reading
// the K×N buffer B as if it were N×K). It stays in bounds, so the answer is wrong rather than a crash.
#include <cuda_runtime.h>

__global__ void matmul_kernel(const float* a, const float* b, float* c, size_t m, size_t n, size_t k) {
    size_t row = (size_t)blockIdx.y * blockDim.y + threadIdx.y;
    size_t col = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (size_t i = 0; i < k; ++i) {
        acc += a[row * k + i] * b[col * k + i];  // reads B as if it were N x K
    }
    c[row * n + col] = acc;
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t m, size_t n, size_t k) {
    dim3 block(16, 16);
    dim3 grid((unsigned)((n + block.x - 1) / block.x), (unsigned)((m + block.y - 1) / block.y));
    matmul_kernel<<<grid, block>>>(input_a, input_b, output_c, m, n, k);
}
