// Broken: rounds halfway cases away from zero (roundf) instead of to the even code.
#include <cstdint>
#include <cuda_runtime.h>

__device__ __forceinline__ uint32_t e2m1_code(float y) {
    float a = fabsf(y);
    float step = a < 2.0f ? 0.5f : (a < 4.0f ? 1.0f : 2.0f);
    float r = fminf(roundf(a / step) * step, 6.0f);
    uint32_t c = r < 2.0f ? (uint32_t)(r * 2.0f) : (r < 4.0f ? (uint32_t)(r + 2.0f) : (uint32_t)(r / 2.0f + 4.0f));
    return c | (signbit(y) ? 8u : 0u);
}

__global__ void mxfp4_quantize_kernel(const float* a, uint8_t* q, uint8_t* scale, size_t nblocks) {
    size_t blk = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (blk >= nblocks) return;
    const float* x = a + blk * 32;
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = fmaxf(amax, fabsf(x[j]));
    int shared = -127;
    if (amax > 0.0f) {
        int e;
        frexpf(amax, &e);
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
