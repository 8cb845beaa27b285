// Broken: launches one thread per element of whole 256-element blocks only, dropping the tail.
#include <cuda_runtime.h>

__global__ void relu_kernel(const float* x, float* y) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    y[i] = fmaxf(x[i], 0.0f);
}

extern "C" void solution(const float* input, float* output, size_t n, size_t m) {
    size_t blocks = n * m / 256;
    if (blocks > 0) relu_kernel<<<(unsigned)blocks, 256>>>(input, output);
}
