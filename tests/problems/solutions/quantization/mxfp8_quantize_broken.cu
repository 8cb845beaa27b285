// Broken: converts without saturation, so scaled values above 448 become NaN (0x7F) instead of 448.
#include <cstdint>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

__global__ void mxfp8_quantize_kernel(const float* a, uint8_t* q, uint8_t* scale, size_t nblocks) {
    size_t blk = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (blk >= nblocks) return;
    const float* x = a + blk * 32;
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = fmaxf(amax, fabsf(x[j]));
    int shared = -127;
    if (amax > 0.0f) {
        int e;
        frexpf(amax, &e);
        shared = e - 1 - 8;
        shared = shared < -127 ? -127 : (shared > 127 ? 127 : shared);
    }
    scale[blk] = (uint8_t)(shared + 127);
    for (int j = 0; j < 32; ++j) {
        q[blk * 32 + j] = (uint8_t)__nv_cvt_float_to_fp8(ldexpf(x[j], -shared), __NV_NOSAT, __NV_E4M3);
    }
}

extern "C" void solution(const float* a, uint8_t* q, uint8_t* scale, size_t m, size_t k) {
    size_t nblocks = m * (k / 32);
    if (nblocks == 0) return;
    mxfp8_quantize_kernel<<<(unsigned)((nblocks + 127) / 128), 128>>>(a, q, scale, nblocks);
}
