// Broken: a sign slip in the sigmoid, 1 / (1 + exp(z)) instead of 1 / (1 + exp(-z)).
#include <cuda_runtime.h>

__global__ void matmul_swish_scaling_kernel(const float* a, const float* b, float scale, float* out, size_t m,
                                            size_t n, size_t k) {
    const size_t row = blockIdx.y * (size_t)blockDim.y + threadIdx.y;
    const size_t col = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (size_t kk = 0; kk < k; ++kk) acc += a[row * k + kk] * b[kk * n + col];
    out[row * n + col] = scale * acc / (1.0f + expf(acc));
}

extern "C" void solution(const float* A, const float* B, float scale, float* output, size_t M, size_t N, size_t K) {
    const dim3 grid((unsigned)((N + 15) / 16), (unsigned)((M + 15) / 16));
    matmul_swish_scaling_kernel<<<grid, dim3(16, 16)>>>(A, B, scale, output, M, N, K);
}
