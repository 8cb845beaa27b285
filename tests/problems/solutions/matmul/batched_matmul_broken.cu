// Broken: forgets B's batch stride, so every product uses the first matrix of B.
#include <cuda_runtime.h>

__global__ void batched_matmul_kernel(const float* a, const float* b, float* c, size_t batch, size_t m, size_t n,
                                      size_t k) {
    const size_t row = blockIdx.y * (size_t)blockDim.y + threadIdx.y;
    const size_t col = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const size_t entry = blockIdx.z;
    if (row >= m || col >= n || entry >= batch) return;
    const float* a_e = a + entry * m * k;
    float acc = 0.0f;
    for (size_t kk = 0; kk < k; ++kk) acc += a_e[row * k + kk] * b[kk * n + col];
    c[entry * m * n + row * n + col] = acc;
}

extern "C" void solution(const float* A, const float* B, float* C, size_t batch, size_t m, size_t n, size_t k) {
    const dim3 grid((unsigned)((n + 15) / 16), (unsigned)((m + 15) / 16), (unsigned)batch);
    batched_matmul_kernel<<<grid, dim3(16, 16)>>>(A, B, C, batch, m, n, k);
}
