// Broken: works in float4 vectors of 4 elements and never handles the n·m % 4 elements of the tail.
#include <cuda_runtime.h>

__global__ void tanh_kernel(const float4* __restrict__ x, float4* __restrict__ y, size_t vectors) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < vectors; i += (size_t)gridDim.x * blockDim.x) {
        float4 v = x[i];
        y[i] = make_float4(tanhf(v.x), tanhf(v.y), tanhf(v.z), tanhf(v.w));
    }
}

extern "C" void solution(const float* input, float* output, size_t n, size_t m) {
    size_t vectors = n * m / 4;
    if (vectors == 0) return;
    size_t blocks = (vectors + 255) / 256;
    if (blocks > 65535 * 8) blocks = 65535 * 8;
    tanh_kernel<<<(unsigned)blocks, 256>>>(reinterpret_cast<const float4*>(input), reinterpret_cast<float4*>(output),
                                          vectors);
}
