// One thread per point, written as a Tensara competitor would: the statement fixes p = 2^61 - 1, so the modulus is
// a compile-time constant and the `p` argument goes unused. x is copied; -y is P - y, and 0 where y = 0.
#include <cstdint>
#include <cuda_runtime.h>

#define P61 ((1ULL << 61) - 1)

__global__ void ecc_negate_kernel(const uint64_t* __restrict__ xs, const uint64_t* __restrict__ ys,
                                  uint64_t* __restrict__ out_xy, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint64_t y = ys[i];
        out_xy[2 * i] = xs[i];
        out_xy[2 * i + 1] = y == 0 ? 0 : P61 - y;
    }
}

extern "C" void solution(const uint64_t* xs, const uint64_t* ys, uint64_t p, uint64_t* out_xy, size_t n) {
    (void)p;
    if (n == 0) return;
    size_t blocks = (n + 255) / 256;
    if (blocks > 65535 * 16) blocks = 65535 * 16;
    ecc_negate_kernel<<<(unsigned)blocks, 256>>>(xs, ys, out_xy, n);
}
