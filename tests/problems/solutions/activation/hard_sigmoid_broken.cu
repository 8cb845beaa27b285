// Broken: uses the Keras-style slope 0.2 instead of 1/6.
#include <cuda_runtime.h>

__device__ __forceinline__ float hard_sigmoid_of(float v) {
    return fminf(fmaxf(0.2f * v + 0.5f, 0.0f), 1.0f);
}

__global__ void hard_sigmoid_kernel(const float* __restrict__ x, float* __restrict__ y, size_t count) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
        y[i] = hard_sigmoid_of(x[i]);
    }
}

extern "C" void solution(const float* input, float* output, size_t n, size_t m) {
    size_t count = n * m;
    if (count == 0) return;
    size_t blocks = (count + 255) / 256;
    if (blocks > 65535 * 8) blocks = 65535 * 8;  // the grid-stride loop covers the rest
    hard_sigmoid_kernel<<<(unsigned)blocks, 256>>>(input, output, count);
}
