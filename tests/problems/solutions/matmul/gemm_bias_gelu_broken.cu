// Broken: uses the tanh approximation of GELU where the exact (erf) form is asked for.
#include <cuda_runtime.h>

__global__ void gemm_bias_gelu_kernel(const float* x, const float* w, const float* bias, float* out, size_t m,
                                      size_t n, size_t k) {
    const size_t row = blockIdx.y * (size_t)blockDim.y + threadIdx.y;
    const size_t col = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (row >= m || col >= n) return;
    float z = bias[col];
    for (size_t kk = 0; kk < k; ++kk) z += x[row * k + kk] * w[col * k + kk];
    const float inner = 0.7978845608f * (z + 0.044715f * z * z * z);
    out[row * n + col] = 0.5f * z * (1.0f + tanhf(inner));
}

extern "C" void solution(const float* input_a, const float* weight, const float* bias, float* output, size_t m,
                         size_t n, size_t k) {
    const dim3 grid((unsigned)((n + 15) / 16), (unsigned)((m + 15) / 16));
    gemm_bias_gelu_kernel<<<grid, dim3(16, 16)>>>(input_a, weight, bias, output, m, n, k);
}
