// Broken: applies the ReLU before adding the bias.
#include <cuda_runtime.h>

__global__ void gemm_relu_kernel(const float* a, const float* w, const float* bias, float* c, size_t rows,
                                 size_t inner, size_t cols) {
    const size_t row = blockIdx.y * (size_t)blockDim.y + threadIdx.y;
    const size_t col = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (row >= rows || col >= cols) return;
    float acc = 0.0f;
    for (size_t kk = 0; kk < inner; ++kk) acc += a[row * inner + kk] * w[col * inner + kk];
    c[row * cols + col] = fmaxf(acc, 0.0f) + bias[col];
}

extern "C" void solution(const float* A, const float* W, const float* b, float* C, size_t B, size_t N, size_t M) {
    const dim3 grid((unsigned)((M + 15) / 16), (unsigned)((B + 15) / 16));
    gemm_relu_kernel<<<grid, dim3(16, 16)>>>(A, W, b, C, B, N, M);
}
