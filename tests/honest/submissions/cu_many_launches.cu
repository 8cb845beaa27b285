// Honest: sixteen launches per call, one per chunk.
#include <cuda_runtime.h>
#include <cstdio>

__global__ void add_kernel(const float* a, const float* b, float* c, size_t n) {
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) c[i] = a[i] + b[i];
}

static unsigned blocks_for(size_t n) {
    size_t blocks = (n + 255) / 256;
    return (unsigned)(blocks > 65535 * 8 ? 65535 * 8 : blocks);
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    size_t step = (n + 15) / 16;
    for (size_t start = 0; start < n; start += step) {
        size_t count = start + step > n ? n - start : step;
        add_kernel<<<blocks_for(count), 256>>>(input_a + start, input_b + start, output_c + start, count);
    }
}
