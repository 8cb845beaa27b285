// Broken: ignores the alpha argument and uses a hard-coded slope of 0.01.
#include <cuda_runtime.h>

__global__ void gemm_mul_leaky_kernel(const float* a, const float* b, const float* mul, float* out, size_t m, size_t n,
                                      size_t k) {
    const size_t row = blockIdx.y * (size_t)blockDim.y + threadIdx.y;
    const size_t col = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (size_t kk = 0; kk < k; ++kk) acc += a[row * k + kk] * b[kk * n + col];
    const float x = acc * mul[row * n + col];
    out[row * n + col] = x > 0.0f ? x : 0.01f * x;
}

extern "C" void solution(const float* A, const float* B, const float* C, float alpha, float* output, size_t M,
                         size_t N, size_t K) {
    const dim3 grid((unsigned)((N + 15) / 16), (unsigned)((M + 15) / 16));
    gemm_mul_leaky_kernel<<<grid, dim3(16, 16)>>>(A, B, C, output, M, N, K);
}
