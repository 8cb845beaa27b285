// One thread per block of 32: shared exponent floor(log2(amax)) - 2, then E2M1 round-half-even by thresholds.
#include <cstdint>
#include <cuda_runtime.h>

__device__ __forceinline__ uint32_t e2m1_code(float y) {
    float a = fabsf(y);
    // Ties go to the even code: strict above a midpoint whose lower code is even, inclusive where it is odd.
    uint32_t c = (a > 0.25f) + (a >= 0.75f) + (a > 1.25f) + (a >= 1.75f) + (a > 2.5f) + (a >= 3.5f) + (a > 5.0f);
    return c | (signbit(y) ? 8u : 0u);
}

__global__ void mxfp4_quantize_kernel(const float* __restrict__ a, uint8_t* __restrict__ q,
                                      uint8_t* __restrict__ scale, size_t nblocks) {
    size_t blk = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (blk >= nblocks) return;
    const float* x = a + blk * 32;
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = fmaxf(amax, fabsf(x[j]));
    int shared = -127;
    if (amax > 0.0f) {
        int e;
        frexpf(amax, &e);  // amax = f * 2^e, f in [0.5, 1): floor(log2(amax)) = e - 1
        shared = e - 1 - 2;
        shared = shared < -127 ? -127 : (shared > 127 ? 127 : shared);
    }
    scale[blk] = (uint8_t)(shared + 127);
    for (int j = 0; j < 16; ++j) {
        uint32_t lo = e2m1_code(ldexpf(x[2 * j], -shared));
        uint32_t hi = e2m1_code(ldexpf(x[2 * j + 1], -shared));
        q[blk * 16 + j] = (uint8_t)(lo | (hi << 4));
    }
}

extern "C" void solution(const float* a, uint8_t* q, uint8_t* scale, size_t m, size_t k) {
    size_t nblocks = m * (k / 32);
    if (nblocks == 0) return;
    mxfp4_quantize_kernel<<<(unsigned)((nblocks + 127) / 128), 128>>>(a, q, scale, nblocks);
}
