// Broken: accumulates with atomicAdd into the output without zeroing it first.
#include <cuda_runtime.h>

__global__ void matmul_sigmoid_sum_kernel(const float* a, const float* b, float* out, size_t m, size_t n, size_t k) {
    __shared__ float partial[256];
    const size_t row = blockIdx.y * (size_t)blockDim.y + threadIdx.y;
    const size_t col = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const unsigned tid = threadIdx.y * blockDim.x + threadIdx.x;
    float value = 0.0f;
    if (row < m && col < n) {
        float acc = 0.0f;
        for (size_t kk = 0; kk < k; ++kk) acc += a[row * k + kk] * b[kk * n + col];
        value = 1.0f / (1.0f + expf(-acc));
    }
    partial[tid] = value;
    __syncthreads();
    for (unsigned stride = 128; stride > 0; stride >>= 1) {
        if (tid < stride) partial[tid] += partial[tid + stride];
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, partial[0]);
}

extern "C" void solution(const float* A, const float* B, float* output, size_t M, size_t N, size_t K) {
    const dim3 grid((unsigned)((N + 15) / 16), (unsigned)((M + 15) / 16));
    matmul_sigmoid_sum_kernel<<<grid, dim3(16, 16)>>>(A, B, output, M, N, K);
}
