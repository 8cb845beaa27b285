// Broken: multiplies in 32 bits, so the product wraps modulo 2^32 before it is reduced modulo p.
#include <cstdint>
#include <cuda_runtime.h>

#define P 2147483647u

__global__ void vector_multiply_ff_kernel(const uint32_t* a, const uint32_t* b, uint32_t* c, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        c[i] = (a[i] * b[i]) % P;
    }
}

extern "C" void solution(const uint32_t* d_input1, const uint32_t* d_input2, uint32_t* d_output, size_t n) {
    if (n == 0) return;
    size_t blocks = (n + 255) / 256;
    if (blocks > 65535 * 16) blocks = 65535 * 16;
    vector_multiply_ff_kernel<<<(unsigned)blocks, 256>>>(d_input1, d_input2, d_output, n);
}
