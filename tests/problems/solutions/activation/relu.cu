#include <cuda_runtime.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, size_t count) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
        y[i] = fmaxf(x[i], 0.0f);
    }
}

extern "C" void solution(const float* input, float* output, size_t n, size_t m) {
    size_t count = n * m;
    int blocks = (int)((count + 255) / 256 < 65535 * 8 ? (count + 255) / 256 : 65535 * 8);
    relu_kernel<<<blocks, 256>>>(input, output, count);
}
