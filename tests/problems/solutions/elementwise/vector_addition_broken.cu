// Broken: launches n / 256 whole blocks (rounded down) with no grid-stride loop, so the tail n % 256 is dropped.
#include <cuda_runtime.h>

__global__ void add_kernel(const float* a, const float* b, float* c) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    c[i] = a[i] + b[i];
}

extern "C" void solution(const float* d_input1, const float* d_input2, float* d_output, size_t n) {
    size_t blocks = n / 256;
    if (blocks > 0) add_kernel<<<(unsigned)blocks, 256>>>(d_input1, d_input2, d_output);
}
