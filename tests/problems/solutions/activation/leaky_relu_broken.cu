// Broken: hard-codes the slope 0.01 instead of reading alpha.
#include <cuda_runtime.h>

__global__ void leaky_relu_kernel(const float* x, float* y, size_t count) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < count) y[i] = x[i] > 0.0f ? x[i] : 0.01f * x[i];
}

extern "C" void solution(const float* input, float alpha, float* output, size_t n, size_t m) {
    size_t count = n * m;
    leaky_relu_kernel<<<(unsigned)((count + 255) / 256), 256>>>(input, output, count);
}
