// Broken: off by one in the output count: it stops at 2n - 2 coefficients, so c[2n - 2] is never written.
#include <cstdint>
#include <cuda_runtime.h>

#define P 2147483647ull
#define TILE 256

__global__ void poly_multiply_ff_kernel(const uint32_t* __restrict__ a, const uint32_t* __restrict__ b,
                                        uint32_t* __restrict__ c, size_t n) {
    __shared__ uint32_t sa[TILE];
    __shared__ uint32_t sb[2 * TILE];
    const size_t k0 = blockIdx.x * (size_t)TILE;
    const size_t k = k0 + threadIdx.x;
    const size_t out_len = 2 * n - 1;
    // The i range any output of this block needs: i <= k and k - i <= n - 1.
    const size_t i_lo = k0 >= n - 1 ? k0 - (n - 1) : 0;
    const size_t i_hi = (k0 + TILE - 1 < n - 1) ? k0 + TILE - 1 : n - 1;
    uint64_t acc = 0;
    for (size_t i0 = i_lo; i0 <= i_hi; i0 += TILE) {
        size_t ia = i0 + threadIdx.x;
        sa[threadIdx.x] = ia < n ? a[ia] : 0u;
        // sb[s] = b[j] with j = k0 - i0 - (TILE - 1) + s, zero outside [0, n).
        long long j_base = (long long)k0 - (long long)i0 - (TILE - 1);
        for (int s = threadIdx.x; s < 2 * TILE; s += TILE) {
            long long j = j_base + s;
            sb[s] = (j >= 0 && j < (long long)n) ? b[j] : 0u;
        }
        __syncthreads();
#pragma unroll 8
        for (int t = 0; t < TILE; ++t) {
            uint64_t prod = (uint64_t)sa[t] * sb[TILE - 1 + threadIdx.x - t];
            acc += (prod & P) + (prod >> 31);
        }
        __syncthreads();
    }
    if (k < out_len - 1) c[k] = (uint32_t)(acc % P);
}

extern "C" void solution(const uint32_t* d_input1, const uint32_t* d_input2, uint32_t* d_output, size_t n) {
    if (n == 0) return;
    size_t out_len = 2 * n - 1;
    size_t blocks = (out_len - 1 + TILE - 1) / TILE;
    poly_multiply_ff_kernel<<<(unsigned)blocks, TILE>>>(d_input1, d_input2, d_output, n);
}
