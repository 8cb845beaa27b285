// Elementwise product modulo the Mersenne prime 2^31 - 1: a 64-bit product folded twice (2^31 = 1 mod p).
#include <cstdint>
#include <cuda_runtime.h>

#define P 2147483647u

__device__ __forceinline__ uint32_t mul_mod(uint32_t a, uint32_t b) {
    uint64_t prod = (uint64_t)a * b;                          // < 2^62
    uint64_t folded = (prod & P) + (prod >> 31);              // < 2^32
    uint32_t r = (uint32_t)((folded & P) + (folded >> 31));   // <= p
    return r >= P ? r - P : r;
}

__global__ void vector_multiply_ff_kernel(const uint32_t* __restrict__ a, const uint32_t* __restrict__ b,
                                          uint32_t* __restrict__ c, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        c[i] = mul_mod(a[i], b[i]);
    }
}

extern "C" void solution(const uint32_t* d_input1, const uint32_t* d_input2, uint32_t* d_output, size_t n) {
    if (n == 0) return;
    size_t blocks = (n + 255) / 256;
    if (blocks > 65535 * 16) blocks = 65535 * 16;
    vector_multiply_ff_kernel<<<(unsigned)blocks, 256>>>(d_input1, d_input2, d_output, n);
}
