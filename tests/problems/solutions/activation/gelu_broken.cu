// Broken: uses the exact erf form, up to about 5e-4 off the tanh approximation the problem asks for.
#include <cuda_runtime.h>

__device__ __forceinline__ float gelu_of(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); }

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, size_t count) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < count) y[i] = gelu_of(x[i]);
}

extern "C" void solution(const float* input, float* output, size_t n, size_t m) {
    size_t count = n * m;
    if (count == 0) return;
    gelu_kernel<<<(unsigned)((count + 255) / 256), 256>>>(input, output, count);
}
