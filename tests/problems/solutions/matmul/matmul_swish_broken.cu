// Broken: never applies scaling_factor.
#include <cuda_runtime.h>

__global__ void matmul_swish_kernel(const float* x, const float* w, const float* bias, float* out, size_t rows,
                                    size_t inner, size_t cols) {
    const size_t row = blockIdx.y * (size_t)blockDim.y + threadIdx.y;
    const size_t col = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (row >= rows || col >= cols) return;
    float acc = bias[col];
    for (size_t kk = 0; kk < inner; ++kk) acc += x[row * inner + kk] * w[col * inner + kk];
    out[row * cols + col] = acc / (1.0f + expf(-acc));
}

extern "C" void solution(const float* input_matrix, const float* weight_matrix, const float* bias,
                         float scaling_factor, float* output, size_t batch_size, size_t in_features,
                         size_t out_features) {
    const dim3 grid((unsigned)((out_features + 15) / 16), (unsigned)((batch_size + 15) / 16));
    matmul_swish_kernel<<<grid, dim3(16, 16)>>>(input_matrix, weight_matrix, bias, output, batch_size, in_features,
                                                out_features);
}
