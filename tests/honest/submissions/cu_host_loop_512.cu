// Honest, host-bound: a host loop of 512 launches per call, one small slice each.
#include <cuda_runtime.h>

__global__ void add_kernel(const float* a, const float* b, float* c, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" void solution(const float* input_a, const float* input_b, float* output_c, size_t n) {
    const size_t launches = 512;
    size_t step = (n + launches - 1) / launches;
    for (size_t start = 0; start < n; start += step) {
        size_t count = start + step > n ? n - start : step;
        add_kernel<<<(unsigned)((count + 255) / 256), 256>>>(input_a + start, input_b + start, output_c + start,
                                                               count);
    }
}
