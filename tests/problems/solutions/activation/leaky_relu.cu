#include <cuda_runtime.h>

__global__ void leaky_relu_kernel(const float* __restrict__ x, float alpha, float* __restrict__ y, size_t count) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
        float v = x[i];
        y[i] = v > 0.0f ? v : alpha * v;
    }
}

extern "C" void solution(const float* input, float alpha, float* output, size_t n, size_t m) {
    size_t count = n * m;
    size_t blocks = (count + 255) / 256;
    if (blocks > 65535 * 8) blocks = 65535 * 8;
    leaky_relu_kernel<<<(unsigned)blocks, 256>>>(input, alpha, output, count);
}
